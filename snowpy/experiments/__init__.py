"""Learning-theory experiments: the published mistake bounds, on snowpy's own code.

>>> from snowpy import experiments
>>> sorted(experiments.EXPERIMENTS)  # doctest: +NORMALIZE_WHITESPACE
['attribute-efficiency', 'averaging', 'clouds', 'drift', 'halving', 'learning-curve',
 'margin', 'normalised-winnow', 'weighted-majority']
>>> result = experiments.run("margin", gammas=(0.4,), examples=100)
>>> result.rows[0]["separable_mistakes"] <= result.rows[0]["novikoff_bound"]
True

Each experiment is seeded and deterministic, returns a :class:`Result` (a
table and a figure), and finishes within a minute at its default size.
"""

from __future__ import annotations

from typing import Any

from snowpy.experiments import (
    attribute_efficiency,
    averaging,
    clouds,
    drift,
    experts,
    learning_curve,
    margin,
    normalised,
)
from snowpy.experiments.common import Result

__all__ = ["EXPERIMENTS", "Result", "run"]

EXPERIMENTS = {
    "attribute-efficiency": attribute_efficiency.run,
    "margin": margin.run,
    "drift": drift.run,
    "averaging": averaging.run,
    "learning-curve": learning_curve.run,
    "halving": experts.run_halving,
    "clouds": clouds.run,
    "weighted-majority": experts.run_weighted_majority,
    "normalised-winnow": normalised.run,
}


def run(name: str, **options: Any) -> Result:
    """Run one experiment by name with its options."""
    from snowpy.exceptions import UnknownNameError

    if name not in EXPERIMENTS:
        raise UnknownNameError("experiment", name, EXPERIMENTS)
    experiment: Any = EXPERIMENTS[name]
    return experiment(**options)
