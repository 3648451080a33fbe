"""Declared parameters: what a rule, an extractor or a corpus reader accepts.

Plugins declare their parameters as :class:`Param` records; snowpy validates
user values against them (:func:`validate_declared`), parses them from the
command line and lists them in ``snowpy plugins``. A floor of the plugin
host: it imports nothing of snowpy but its exceptions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from snowpy.exceptions import ConfigurationError, PluginError

__all__ = ["Param", "check_record", "validate_declared"]

_TYPES = (float, int, bool, str)
#: A plugin record's name: lower-case words of letters and digits joined by ``-``.
_NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")


@dataclass(frozen=True)
class Param:
    """One declared parameter of an update rule.

    Parameters
    ----------
    name : str
        Python identifier, used as keyword (``Network(alpha=1.5)``) and as
        command-line option (``--alpha 1.5``).
    default : object
        The default value. ``None`` means "derived from the data" and the
        docstring must say how.
    doc : str
        One sentence for ``--help`` and ``snowpy plugins``.
    type : {float, int, bool, str}
        The value's type.
    low, high : float, optional
        Bounds for numbers; ``low_open``/``high_open`` make them strict.
    choices : tuple of str, optional
        The allowed values of a ``str`` parameter.
    allow_inf : bool
        Accept ``inf`` for a float (only meaningful with no ``high`` bound).

    Examples
    --------
    >>> alpha = Param("alpha", 1.35, "promotion factor", low=1.0, low_open=True)
    >>> alpha.validate(2, rule="winnow")
    2.0
    >>> alpha.validate(0.5, rule="winnow")
    Traceback (most recent call last):
    ...
    snowpy.exceptions.ConfigurationError: winnow: alpha must be > 1.0, got 0.5
    """

    name: str
    default: Any
    doc: str
    type: type = float
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] | None = None
    allow_inf: bool = False

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name.startswith("_"):
            raise PluginError(f"parameter name {self.name!r} is not a public identifier")
        if self.type not in _TYPES:
            raise PluginError(f"parameter {self.name!r}: type must be one of float, int, bool, str")
        if self.choices is not None and self.type is not str:
            raise PluginError(f"parameter {self.name!r}: choices need type=str")
        if self.default is not None:
            try:
                self.validate(self.default, rule="(default)")
            except ConfigurationError as exc:
                raise PluginError(
                    f"parameter {self.name!r} has an invalid default: {exc}"
                ) from None

    def describe_range(self) -> str:
        """A short text of the allowed values, e.g. ``> 1.0`` or ``one of a, b``."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.type is bool:
            return "true or false"
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.low_open else '>='} {self.low}")
        if self.high is not None:
            parts.append(f"{'<' if self.high_open else '<='} {self.high}")
        return " and ".join(parts) if parts else "any " + self.type.__name__

    def validate(self, value: Any, *, rule: str) -> Any:
        """Return ``value`` converted to the declared type, or raise.

        Raises
        ------
        ConfigurationError
            The value has the wrong type or lies outside the declared range;
            the message names the rule, the parameter and the value.
        """
        where = f"{rule}: {self.name}"
        if value is None:
            if self.default is None:
                return None
            raise ConfigurationError(f"{where} may not be None")
        if self.type is bool:
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            raise ConfigurationError(f"{where} must be true or false, got {value!r}")
        if self.type is str:
            if not isinstance(value, str):
                raise ConfigurationError(f"{where} must be a string, got {value!r}")
            if self.choices and value not in self.choices:
                raise ConfigurationError(
                    f"{where} must be one of {', '.join(self.choices)}, got {value!r}"
                )
            return value
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
            raise ConfigurationError(f"{where} must be a number, got {value!r}")
        if self.type is int:
            if float(value) != int(value):
                raise ConfigurationError(f"{where} must be an integer, got {value!r}")
            value = int(value)
        else:
            value = float(value)
            if math.isnan(value):
                raise ConfigurationError(f"{where} must be a number, got nan")
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            raise ConfigurationError(f"{where} must be {self.describe_range()}, got {value!r}")
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            raise ConfigurationError(f"{where} must be {self.describe_range()}, got {value!r}")
        if self.type is float and math.isinf(value) and not self.allow_inf:
            raise ConfigurationError(f"{where} must be finite, got {value!r}")
        return value

    def parse(self, text: str, *, rule: str) -> Any:
        """Convert a command-line string to a validated value.

        >>> Param("average", False, "average weights", type=bool).parse("yes", rule="r")
        True
        """
        text = text.strip()
        if self.type is bool:
            lowered = text.lower()
            if lowered in {"1", "true", "yes", "on"}:
                return True
            if lowered in {"0", "false", "no", "off"}:
                return False
            raise ConfigurationError(f"{rule}: {self.name} must be true or false, got {text!r}")
        if self.type is str:
            return self.validate(text, rule=rule)
        if self.default is None and text.lower() in {"auto", "none"}:
            return None
        try:
            number = int(text) if self.type is int else float(text)
        except ValueError:
            raise ConfigurationError(
                f"{rule}: {self.name} must be {'an integer' if self.type is int else 'a number'}, "
                f"got {text!r}"
            ) from None
        return self.validate(number, rule=rule)


def validate_declared(params: Sequence[Param], values: Mapping[str, Any], *, kind: str,
                      name: str, word: str = "parameter") -> dict[str, Any]:
    """Check ``values`` against declared ``params``; fill in defaults.

    ``kind`` and ``name`` say what declares them in messages (``rule 'winnow'``).

    Raises
    ------
    ConfigurationError
        An unknown name (the message lists the declared ones) or an invalid value.
    """
    known = {p.name: p for p in params}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ConfigurationError(
            f"{kind} {name!r} has no {word} {', '.join(map(repr, unknown))}; "
            f"its {word}s are: {', '.join(known) or '(none)'}"
        )
    return {key: p.validate(values.get(key, p.default), rule=name) for key, p in known.items()}


def check_record(kind: str, name: Any, build: Any, params: Sequence[Any]) -> None:
    """Refuse a plugin's record (a ``kind``: ``"rule"``, ``"extractor"``) whose name is
    not lower-case words joined by ``-``, whose ``build`` is no function, or whose
    parameters are not :class:`Param` records."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise PluginError(f"{kind} name {name!r} must be lower-case letters and digits "
                          "joined by '-'")
    if not callable(build):
        raise PluginError(f"{kind} {name!r}: build must be callable")
    if not all(isinstance(p, Param) for p in params):
        raise PluginError(f"{kind} {name!r}: params must be Param records")
