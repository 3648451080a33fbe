"""The protocol of a progress report: what a long call tells, and asks, as it goes.

A ``progress`` argument (``fit``, ``partial_fit``, ``fit_rows``...) is a plain callable,
called as ``progress(epoch, done, total, mistakes)`` as training goes, or a
:class:`Progress`, which also hears each phase begin (featurising, a calibration fold,
training, calibrating: a progress bar never sits at 0 through work it was not told of),
may ask for a report at every multiple of ``every`` examples (SNoW's ``-c k``: a
report that tests the network), and may stop the call (:meth:`Progress.check_stop`
raises). The library reads a progress through :func:`as_progress`, never by probing
its attributes.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Progress", "as_progress", "phase"]


class Progress:
    """A progress report: subclass it and override what it does (each does nothing
    here)."""

    #: Report also at every multiple of this many examples (None: at 1, 2, 4...
    #: examples, then every 16,384); a report that tests the network as it learns, whose
    #: targets are then learned on one thread.
    every: int | None = None

    def __call__(self, epoch: int, done: int, total: int, mistakes: int) -> None:
        """``done`` of ``total`` examples of epoch ``epoch`` (from 0) learned, with
        ``mistakes`` since the last report."""

    def phase(self, name: str, total: int | None = None) -> None:
        """Phase ``name`` begins (``total`` steps, when known)."""

    def check_stop(self) -> None:
        """Raise (``KeyboardInterrupt``) to stop the call at its next boundary."""


class _Calls(Progress):
    """A plain callable as a :class:`Progress`."""

    def __init__(self, report: Any) -> None:
        self.report = report

    def __call__(self, epoch: int, done: int, total: int, mistakes: int) -> None:
        self.report(epoch, done, total, mistakes)


def as_progress(progress: Any) -> Progress | None:
    """``progress`` as a :class:`Progress` (None stays None).

    >>> seen = []
    >>> report = as_progress(lambda *figures: seen.append(figures))
    >>> report(0, 8, 10, 1); report.phase("training"); report.every is None, seen
    (True, [(0, 8, 10, 1)])
    """
    if progress is None or isinstance(progress, Progress):
        return progress
    return _Calls(progress)


def phase(progress: Any, name: str, total: int | None = None) -> None:
    """Tell ``progress`` that phase ``name`` begins (``total`` steps, when known).

    >>> class Bar(Progress):
    ...     def phase(self, name, total=None):
    ...         print(name, total)
    >>> phase(Bar(), "featurising", 400); phase(print, "ignored")
    featurising 400
    """
    report = as_progress(progress)
    if report is not None:
        report.phase(name, total)
