"""Errors that snowpy raises for a user's mistake.

Every error a user can cause derives from :class:`SnowpyError`, so that the
command line can print its message and exit with status 1 instead of showing
a traceback. Each also derives from the built-in exception that a Python user
would expect (``ValueError``, ``KeyError``...), so ordinary ``except`` clauses
keep working.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "CalibrationWarning",
    "ConfigurationError",
    "DataConversionWarning",
    "DataTypeError",
    "ModelFileError",
    "NotFittedError",
    "NumericalError",
    "PluginConflictError",
    "PluginError",
    "SnowpyError",
    "UnknownNameError",
]


class SnowpyError(Exception):
    """Base class of every error caused by input, configuration or plugins."""


class ConfigurationError(SnowpyError, ValueError):
    """A parameter or option has a value that cannot be used."""


class UnknownNameError(ConfigurationError, KeyError):
    """A rule, extractor or corpus name that no installed plugin provides.

    The message lists the names that are known, so the user can pick one.
    """

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        self.known = sorted(known)
        choices = ", ".join(self.known) if self.known else "(none installed)"
        super().__init__(f"unknown {kind} {name!r}; choose one of: {choices}")

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class PluginError(SnowpyError):
    """A plugin returned something snowpy cannot use; the message names it."""


class PluginConflictError(PluginError):
    """Two plugins claim the same name; the message names both providers."""


class NotFittedError(SnowpyError, ValueError, AttributeError):
    """A model was used for prediction before it was trained."""


class NumericalError(SnowpyError, ArithmeticError):
    """An update rule produced a non-finite weight (NaN or infinity)."""


class ModelFileError(SnowpyError, ValueError):
    """A model file is truncated, tampered with, foreign, or from a newer snowpy."""


class CalibrationWarning(UserWarning):
    """Probabilities that say less than they seem to: labels added after calibrating,
    or a calibration that could not separate a label's scores."""


class DataConversionWarning(UserWarning):
    """Input in a shape snowpy converted (a column vector ``y`` of shape (n, 1)); named
    as scikit-learn's warning of the same case is."""


class DataTypeError(SnowpyError, TypeError):
    """Input of a type that cannot be features (an entry that is not a number)."""
