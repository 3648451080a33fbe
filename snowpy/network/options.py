"""The options of a network, checked before any data is read.

Every check raises :class:`~snowpy.exceptions.ConfigurationError` naming the
option and the value, so the command line can print one line for it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from snowpy.exceptions import ConfigurationError
from snowpy.network.links import LINK_POLICIES, PRECISIONS

__all__ = ["CALIBRATIONS", "MULTICLASS", "bias_strength", "check_options",
           "check_training_options"]

CALIBRATIONS = (None, "none", "cv", "holdout", "progressive")  # ("none": the CLI's spelling)
MULTICLASS = ("ova", "constraint")
_MAX_SEED = 2**32 - 1


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _choice(name: str, value: Any, choices: tuple) -> None:
    if value not in choices:
        shown = ", ".join("None" if c is None else repr(c) for c in choices)
        raise ConfigurationError(f"{name} must be one of {shown}, got {value!r}")


def bias_strength(value: Any) -> float:
    """The bias feature's strength: ``True`` is 1, ``False`` 0, a number itself.

    >>> bias_strength(True), bias_strength(0.1)
    (1.0, 0.1)
    """
    if isinstance(value, (bool, np.bool_)):
        return 1.0 if value else 0.0
    if not isinstance(value, (int, float, np.number)) or not math.isfinite(value) or value < 0:
        raise ConfigurationError(
            f"bias must be true, false or a non-negative strength, got {value!r}"
        )
    return float(value)


#: Bounds beyond which an option is a typing mistake, not a setting: a million epochs
#: over even one example, a thousand calibration folds.
MAX_EPOCHS = 1_000_000
MAX_FOLDS = 1000


def check_training_options(options: dict[str, Any]) -> None:
    """Check the options every network has, whatever keeps what it learns (a
    :class:`~snowpy.Network`'s links or a :class:`~snowpy.DualNetwork`'s support vectors):
    ``epochs``, ``calibrate``, ``calibration_folds``, ``seed``."""
    epochs = options["epochs"]
    if not _is_int(epochs) or not 1 <= epochs <= MAX_EPOCHS:
        raise ConfigurationError(f"epochs must be an integer from 1 to {MAX_EPOCHS:,}, "
                                 f"got {epochs!r}")
    _choice("calibrate", options["calibrate"], CALIBRATIONS)
    folds = options["calibration_folds"]
    if not _is_int(folds) or not 2 <= folds <= MAX_FOLDS:
        raise ConfigurationError(f"calibration_folds must be an integer from 2 to {MAX_FOLDS}, "
                                 f"got {folds!r}")
    seed = options["seed"]
    if seed is not None and (not _is_int(seed) or not 0 <= seed <= _MAX_SEED):
        raise ConfigurationError(
            f"seed must be None or an integer from 0 to {_MAX_SEED}, got {seed!r}"
        )


def check_options(options: dict[str, Any]) -> None:
    """Check a network's options (``Network.get_params()`` without the rule's)."""
    check_training_options(options)
    _choice("multiclass", options["multiclass"], MULTICLASS)
    _choice("links", options["links"], LINK_POLICIES)
    _choice("precision", options["precision"], tuple(PRECISIONS))
    eligibility = options["eligibility"]
    if not _is_int(eligibility) or eligibility < 1:
        raise ConfigurationError(
            f"eligibility must be an integer >= 1 (the times a feature must be active before "
            f"it is linked), got {eligibility!r}"
        )
    percent = options["eligible_percent"]
    if percent is not None:
        if isinstance(percent, (bool, np.bool_)) or not isinstance(percent, (int, float,
                                                                             np.number)) \
                or not 0 < percent <= 100:
            raise ConfigurationError(
                f"eligible_percent must be None or a number in (0, 100], got {percent!r}"
            )
        if options["links"] != "positive":
            raise ConfigurationError(
                "eligible_percent ranks each target's links by how often the feature was "
                "active in the target's positive examples, which only links='positive' "
                f"counts; got links={options['links']!r}"
            )
    discard = options["discard"]
    if discard is not None and (isinstance(discard, (bool, np.bool_))
                                or not isinstance(discard, (int, float, np.number))
                                or not math.isfinite(discard) or discard < 0):
        raise ConfigurationError(
            f"discard must be None or a finite non-negative number, got {discard!r}"
        )
    bias_strength(options["bias"])
