"""The phases of a long call, told to a progress reporter that wants them.

``progress`` arguments are called as ``progress(epoch, done, total, mistakes)`` during
training; a reporter that also has ``phase(name, total)`` hears each phase begin
(featurising, a calibration fold, training, calibrating), so a progress bar never sits
at 0 through work it was not told of.
"""

from __future__ import annotations

from typing import Any

__all__ = ["phase"]


def phase(progress: Any, name: str, total: int | None = None) -> None:
    """Tell ``progress`` that phase ``name`` begins (``total`` steps, when known).

    >>> class Bar:
    ...     def phase(self, name, total):
    ...         print(name, total)
    >>> phase(Bar(), "featurising", 400); phase(print, "ignored")
    featurising 400
    """
    announce = getattr(progress, "phase", None)
    if announce is not None:
        announce(name, total)
