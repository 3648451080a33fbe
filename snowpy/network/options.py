"""The options of a network, checked before any data is read.

Every check raises :class:`~snowpy.exceptions.ConfigurationError` naming the
option and the value, so the command line can print one line for it.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from snowpy.exceptions import ConfigurationError
from snowpy.network.links import LINK_POLICIES, PRECISIONS

__all__ = ["DEFAULT_FOLDS", "MULTICLASS", "Calibrating", "Eligibility",
           "bias_strength", "calibrating", "check_options", "check_training_options",
           "eligibility_of", "engine_settings", "upgraded"]

#: Folds of ``calibrate="cv"`` and ``"holdout"`` when the value names none.
DEFAULT_FOLDS = 3
MULTICLASS = ("ova", "constraint")
_MAX_SEED = 2**32 - 1


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _choice(name: str, value: Any, choices: tuple) -> None:
    if value not in choices:
        shown = ", ".join(map(repr, choices))
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


def _counted(value: str, prefix: str) -> str | None:
    """What follows ``prefix:`` in ``value`` (``None``: another value)."""
    if isinstance(value, str) and value.startswith(prefix + ":"):
        return value[len(prefix) + 1:]
    return None


class Calibrating(NamedTuple):
    """What ``calibrate`` asks for: the method (``None``, ``"cv"``, ``"holdout"`` or
    ``"progressive"``) and the folds the examples are cut in (0 without folds)."""

    method: str | None
    folds: int

    @property
    def cross_fits(self) -> bool:
        """Whether networks trained on other folds score the examples (cv, holdout)."""
        return self.method in ("cv", "holdout")


def calibrating(value: Any) -> Calibrating:
    """``calibrate`` read: ``None`` (or ``"none"``), ``"progressive"``, ``"cv"`` or
    ``"holdout"`` (3 folds), ``"cv:K"`` or ``"holdout:K"`` (K folds, from 2 to 1000).

    >>> calibrating("cv"), calibrating("holdout:5"), calibrating(None)
    (Calibrating(method='cv', folds=3), Calibrating(method='holdout', folds=5), \
Calibrating(method=None, folds=0))
    """
    if value in (None, "none"):
        return Calibrating(None, 0)
    if value in ("cv", "holdout"):
        return Calibrating(value, DEFAULT_FOLDS)
    if value == "progressive":
        return Calibrating(value, 0)
    for method in ("cv", "holdout"):
        folds = _counted(value, method)
        if folds is not None and folds.isdigit() and 2 <= int(folds) <= MAX_FOLDS:
            return Calibrating(method, int(folds))
    raise ConfigurationError(
        f"calibrate must be 'cv' or 'holdout' (3 folds), 'cv:K' or 'holdout:K' (K folds "
        f"from 2 to {MAX_FOLDS}), 'progressive' or 'none', got {value!r}")


class Eligibility(NamedTuple):
    """SNoW's ``-e``: a feature is linked once it was active ``times`` times, or each
    target keeps, after the first epoch, the ``percent`` of its features most often
    active in its positive examples (``None``: every one)."""

    times: int
    percent: float | None


def eligibility_of(value: Any) -> Eligibility:
    """``eligibility`` read: an integer K or ``"count:K"`` (K >= 1), or ``"percent:P"``
    (0 < P <= 100), as SNoW's ``-e`` writes them.

    >>> eligibility_of(2), eligibility_of("percent:12.5")
    (Eligibility(times=2, percent=None), Eligibility(times=1, percent=12.5))
    """
    count: Any = value
    given = _counted(value, "count")
    if given is not None:
        count = int(given) if given.isdigit() else given
    if _is_int(count) and count >= 1:
        return Eligibility(int(count), None)
    given = _counted(value, "percent")
    if given is not None:
        try:
            percent = float(given)
        except ValueError:
            percent = math.nan
        if 0 < percent <= 100:
            return Eligibility(1, percent)
    raise ConfigurationError(
        f"eligibility must be an integer >= 1 (the times a feature must be active before "
        f"it is linked), 'count:K' or 'percent:P' with 0 < P <= 100 (SNoW -e), got "
        f"{value!r}")


def engine_settings(options: dict[str, Any]) -> dict[str, Any]:
    """What an engine takes from its network's options (training one and loading one
    build it from the same): the shuffling's seed, the rule's name (a rule given as an
    object: its name), the bias strength,
    constraint classification, and the percent of ``eligibility="percent:p"``."""
    rule = options["rule"]
    return {"seed": options["seed"], "rule": getattr(rule, "name", rule),
            "bias": bias_strength(options["bias"]),
            "constraint": options["multiclass"] == "constraint",
            "percent": eligibility_of(options["eligibility"]).percent}


def upgraded(options: dict[str, Any]) -> dict[str, Any]:
    """A network's options as snowpy 0.1 wrote them into model files, in today's
    parameters: ``eligible_percent`` is ``eligibility="percent:P"``, and
    ``calibration_folds`` the number of ``calibrate="cv:K"`` or ``"holdout:K"``.

    >>> upgraded({"eligibility": 1, "eligible_percent": 50.0, "calibrate": "cv",
    ...           "calibration_folds": 5})
    {'eligibility': 'percent:50', 'calibrate': 'cv:5'}
    """
    options = dict(options)
    percent = options.pop("eligible_percent", None)
    if percent is not None:  # (0.1 allowed a count beside it, which SNoW's -e did not)
        options["eligibility"] = f"percent:{float(percent):.15g}"
    folds = options.pop("calibration_folds", None)
    if folds is not None and folds != DEFAULT_FOLDS and options.get("calibrate") in (
            "cv", "holdout"):
        options["calibrate"] = f"{options['calibrate']}:{int(folds)}"
    return options


def check_training_options(options: dict[str, Any]) -> None:
    """Check the options every network has, whatever keeps what it learns (a
    :class:`~snowpy.Network`'s links or a rule's learner):
    ``epochs``, ``calibrate``, ``seed``."""
    epochs = options["epochs"]
    if not _is_int(epochs) or not 1 <= epochs <= MAX_EPOCHS:
        raise ConfigurationError(f"epochs must be an integer from 1 to {MAX_EPOCHS:,}, "
                                 f"got {epochs!r}")
    calibrating(options["calibrate"])
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
    if eligibility_of(options["eligibility"]).percent is not None and \
            options["links"] != "positive":
        raise ConfigurationError(
            "eligibility 'percent:P' ranks each target's links by how often the feature "
            "was active in the target's positive examples, which only links='positive' "
            f"counts; got links={options['links']!r}")
    discard = options["discard"]
    if discard is not None and (isinstance(discard, (bool, np.bool_))
                                or not isinstance(discard, (int, float, np.number))
                                or not math.isfinite(discard) or discard < 0):
        raise ConfigurationError(
            f"discard must be None or a finite non-negative number, got {discard!r}"
        )
    bias_strength(options["bias"])
