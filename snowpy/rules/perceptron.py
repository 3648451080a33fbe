"""Perceptron and the thick separator (Perceptron with margin).

Perceptron (Rosenblatt 1958; Novikoff 1962): on a mistake,
``w <- w + learning_rate * y * x`` over the active features. The thick
separator (the Perceptron with margin, Krauth and Mézard 1987; SNoW ``-S p,n``) is the same update with a
margin: a positive example also counts as a mistake while its activation is
below ``theta + thickness``, a negative one while it is at or above ``theta -
negative_thickness``. Every rule accepts ``thickness``; the rule named
``thick-separator`` is the Perceptron with a thickness of 1 by default.

Defaults follow LBJava's ``SparsePerceptron`` (``learning_rate=0.1``,
``theta=0``, ``initial_weight=0``); SNoW's ``-P`` used ``theta=4`` and
``w0 = 3 theta / rho``, which the bias feature makes equivalent.
"""

from __future__ import annotations

from snowpy._core.rules import UpdateKernel
from snowpy.hookspecs import hookimpl
from snowpy.rules.spec import (
    BuildContext,
    Param,
    RuleKernel,
    RuleSpec,
    theta_param,
    thickness_params,
)

__all__ = ["PERCEPTRON", "THICK_SEPARATOR", "perceptron_update"]


def perceptron_update(w, S, t, y, activation, vals, m, sqnorm, params):
    """Additive step ``w += learning_rate * y * x`` (``params = [learning_rate]``)."""
    step = params[0] * y
    for k in range(m):
        w[k, 0] += step * vals[k]


_PARAMS = (
    Param("learning_rate", 0.1, "step size eta of the additive update", low=0.0, low_open=True),
    theta_param(0.0),
    Param("initial_weight", 0.0, "initial weight of every feature"),
)


def _build(params: dict, context: BuildContext) -> RuleKernel:
    return RuleKernel(
        update=UpdateKernel.builtin("perceptron"),
        reference=perceptron_update,
        params=[params["learning_rate"]],
        initial_weights=(params["initial_weight"],),
    )


PERCEPTRON = RuleSpec(
    name="perceptron",
    build=_build,
    params=_PARAMS,
    summary="additive mistake-driven update w += eta * y * x",
    reference="Rosenblatt 1958; Novikoff 1962; SNoW -P, LBJava SparsePerceptron",
)

THICK_SEPARATOR = RuleSpec(
    name="thick-separator",
    build=_build,
    params=_PARAMS + thickness_params(default=1.0),
    summary="Perceptron with margin: updates until activation clears theta by the thickness",
    reference="Krauth and Mézard 1987 (Perceptron with margin); SNoW -S p,n",
)


@hookimpl
def snowpy_update_rules() -> list[RuleSpec]:
    """The Perceptron and the thick separator."""
    return [PERCEPTRON, THICK_SEPARATOR]
