"""Calibrating a network: the scores its sigmoids are fitted on.

* cross-fitting (``calibrate="cv"`` / ``"holdout"``): networks with the same
  settings trained on the other folds score each held-out example; they are
  trained, and freed, before the final network exists
  (:func:`snowpy.network.driver.held_out_scores`, which draws the folds);
* progressive (``calibrate="progressive"``): the scores the engine recorded
  for each example before learning from it, the most recent kept in a
  :class:`ProgressiveWindow` across ``partial_fit`` and ``learn_one`` calls.

The sigmoids themselves are :class:`snowpy.calibration.Calibration`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy.calibration import Calibration
from snowpy.exceptions import ModelFileError

__all__ = [
    "PROGRESSIVE_WINDOW",
    "REFIT_EVERY",
    "WINDOW_SCORES",
    "ProgressiveWindow",
    "calibration_from_file",
    "calibration_to_file",
    "fit_progressive",
    "normalisation_of",
    "refresh_progressive",
]

#: Progressive scores kept for calibration while streaming (the most recent ones) ...
PROGRESSIVE_WINDOW = 100_000
#: ... and at most this many scores in all (examples x targets): 40 MB of float64.
WINDOW_SCORES = 5_000_000
#: While the window is small, the sigmoids are refitted every this many examples.
REFIT_EVERY = 8


class ProgressiveWindow:
    """The most recent progressive scores and labels, a ring buffer.

    Appending costs what is appended, never the window. The buffer starts
    small and grows to at most :data:`PROGRESSIVE_WINDOW` examples (fewer with
    many targets: :data:`WINDOW_SCORES` scores in all). Targets added later
    scored nothing before: their earlier scores are the lowest seen.
    """

    def __init__(self, n_targets: int = 0) -> None:
        self.scores = np.empty((64, n_targets))
        self.positives = np.zeros((64, n_targets), dtype=bool)
        self.filled = 0
        self.position = 0
        self.low = 0.0
        self.since_fit = 0

    @property
    def limit(self) -> int:
        return max(256, min(PROGRESSIVE_WINDOW, WINDOW_SCORES // max(self.scores.shape[1], 1)))

    def add(self, scores: np.ndarray, positives: np.ndarray) -> None:
        """Append a block of scores ``[n, targets]`` and their labels (newest last)."""
        n, width = scores.shape
        if n == 0:
            return
        self.low = min(self.low, float(scores.min()))
        if width > self.scores.shape[1]:
            self._widen(width)
        limit = self.limit
        if n >= limit:
            scores, positives, n = scores[-limit:], positives[-limit:], limit
        if self.filled + n > self.scores.shape[0] and self.scores.shape[0] < limit:
            self._grow(min(limit, max(2 * self.scores.shape[0], self.filled + n)))
        size = self.scores.shape[0]
        written = 0
        while written < n:  # at most twice: up to the end of the buffer, then from 0
            take = min(size - self.position, n - written)
            rows = slice(self.position, self.position + take)
            self.scores[rows, :width] = scores[written:written + take]
            self.scores[rows, width:] = self.low - 1.0
            self.positives[rows, :width] = positives[written:written + take]
            self.positives[rows, width:] = False
            self.position = (self.position + take) % size
            written += take
        self.filled = min(size, self.filled + n)
        self.since_fit += n

    def row(self, width: int) -> int:
        """The row one example's scores over ``width`` targets go to, written in place
        by the one-example path (:class:`~snowpy._core.online.OnlineLearner`), which also
        writes its labels; :meth:`took` records it. The buffer is grown or widened first,
        as :meth:`add` grows it (a window is never wider than its network's targets)."""
        if width > self.scores.shape[1]:
            self._widen(width)
        size = self.scores.shape[0]
        if self.filled == size and size < self.limit:
            self._grow(min(self.limit, 2 * size))
        return self.position

    def took(self, low: float) -> None:
        """The row :meth:`row` gave holds an example now (``low``: its lowest score)."""
        if low < self.low:
            self.low = low
        size = self.scores.shape[0]
        self.position = (self.position + 1) % size
        if self.filled < size:
            self.filled += 1
        self.since_fit += 1

    def without(self, target: int) -> None:
        """Drop ``target``'s column (a label forgotten): its scores and labels go."""
        if target < self.scores.shape[1]:
            self.scores = np.ascontiguousarray(np.delete(self.scores, target, axis=1))
            self.positives = np.ascontiguousarray(np.delete(self.positives, target, axis=1))

    def _widen(self, width: int) -> None:
        extra = width - self.scores.shape[1]
        self.scores = np.hstack([self.scores, np.full((self.scores.shape[0], extra),
                                                      self.low - 1.0)])
        self.positives = np.hstack([self.positives,
                                    np.zeros((self.positives.shape[0], extra), dtype=bool)])

    def _grow(self, size: int) -> None:
        scores, positives = self.arrays()
        self.scores = np.empty((size, self.scores.shape[1]))
        self.positives = np.zeros((size, self.positives.shape[1]), dtype=bool)
        self.scores[:scores.shape[0]] = scores
        self.positives[:scores.shape[0]] = positives
        self.position = scores.shape[0] % size

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The kept scores and labels, oldest first."""
        if self.filled < self.scores.shape[0]:
            return self.scores[:self.filled], self.positives[:self.filled]
        order = np.r_[self.position:self.scores.shape[0], 0:self.position]
        return self.scores[order], self.positives[order]

    def stale(self) -> bool:
        """Whether enough examples came since the last fit to fit again: every
        :data:`REFIT_EVERY` at first, then a tenth of the window (a fit costs the
        window: this keeps its cost per example bounded, about 100 fits in all
        until the window is full)."""
        return self.since_fit >= max(REFIT_EVERY, self.filled // 10)

    @classmethod
    def restore(cls, scores: np.ndarray, positives: np.ndarray) -> ProgressiveWindow:
        window = cls(scores.shape[1])
        window.add(np.asarray(scores, dtype=np.float64), positives.astype(bool))
        window.since_fit = 0
        return window


def normalisation_of(engine: Any, multilabel: bool) -> str:
    """How a network's calibrated probabilities combine across targets (``engine``: what
    it learned, a :class:`~snowpy.network.engine.Engine` or a learner's network's): as its
    rule says (:meth:`~snowpy.rules.spec.RuleKernel.normalisation`), except that a
    single-label network whose missing links weigh something (a rule whose weights start
    away from 0, under ``"touched"`` or ``"all"`` links) compares its targets by their
    differences, in a softmax. Each of its scores carries the missing links' weight times
    the example's total strength: an offset the example's length sets, the same for every
    target, which winner-take-all ignores and no target's sigmoid can read (Winnow's
    default on 20 Newsgroups: log loss 1.24 and ECE 0.38 divided, 0.78 and 0.07 as a
    softmax)."""
    store = getattr(engine, "store", None)  # (a learner's network has no links)
    if store is None:
        return engine.normalisation(multilabel)
    chosen = engine.kernel.normalisation(multilabel)
    if chosen == "sum" and store.absent != 0.0:
        return "softmax"
    return chosen


def fit_progressive(engine: Any, window: ProgressiveWindow, *, warm: bool = True) -> None:
    """Fit a network's sigmoids (``engine.calibration``: an engine's) on its progressive
    window (``warm``: starting from the sigmoids it has, which the window moved on from a
    little; else from nothing, so that the fit depends on the window alone)."""
    scores, positives = window.arrays()
    width = len(engine.labels)
    if scores.shape[1] < width:  # targets known before any score recorded for them
        scores = np.hstack([scores, np.full((scores.shape[0], width - scores.shape[1]),
                                            window.low - 1.0)])
        positives = np.hstack([positives, np.zeros((positives.shape[0],
                                                    width - positives.shape[1]), bool)])
    engine.calibration = Calibration.fit(
        scores, positives, normalize=normalisation_of(engine, engine.multilabel),
        method="progressive", start=engine.calibration if warm else None)
    window.since_fit = 0


def refresh_progressive(engine: Any, window: ProgressiveWindow) -> None:
    """Refit the progressive sigmoids when the window is stale or new targets came
    (every target has a sigmoid as soon as it exists)."""
    if window.filled and (window.stale() or engine.calibration is None
                          or engine.calibration.a.size != len(engine.labels)):
        fit_progressive(engine, window)


def calibration_to_file(calibration: Calibration | None, window: ProgressiveWindow | None,
                        header: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """A network's sigmoids (``header["calibration"]`` and their arrays) and its progressive
    window (its scores and labels, and ``header["progressive"]``: where it stands between
    fits) written into the part of a model file that describes the network; a window
    that holds nothing, or None (an inference-only file), is left out. Every kind of
    network keeps them alike (:func:`calibration_from_file` reads them back)."""
    header["calibration"] = calibration.header() if calibration is not None else None
    if calibration is not None:
        arrays.update(calibration.arrays())
    if window is not None and window.filled:
        scores, positives = window.arrays()
        arrays["progressive_scores"] = np.ascontiguousarray(scores)
        arrays["progressive_positives"] = positives.astype(np.uint8)
        header["progressive"] = {"since_fit": int(window.since_fit), "low": float(window.low)}


def calibration_from_file(engine: Any, calibrate: Any, header: dict[str, Any],
                          arrays: dict[str, np.ndarray], where: str) -> None:
    """The sigmoids and the progressive window :func:`calibration_to_file` kept, given to
    ``engine`` (an uncalibrated model says so, as a trained one does); a
    ``ModelFileError`` naming ``where`` when they are not consistent."""
    engine.progressive = ProgressiveWindow() if calibrate == "progressive" else None
    if header.get("calibration"):
        engine.calibration = Calibration.from_file(header["calibration"], arrays, where)
    if "progressive_scores" in arrays:
        scores, positives = arrays["progressive_scores"], arrays.get("progressive_positives")
        if positives is None or positives.shape != scores.shape or scores.ndim != 2 \
                or scores.shape[1] > len(engine.labels):
            raise ModelFileError(f"{where}: the progressive calibration window is inconsistent")
        engine.progressive = window = ProgressiveWindow.restore(scores, positives)
        progress = header.get("progressive") or {}
        try:  # (files of 0.x before this field: refit after a tenth more)
            window.since_fit = int(progress.get("since_fit", 0))
            window.low = min(window.low, float(progress.get("low", window.low)))
        except (TypeError, ValueError, AttributeError):
            raise ModelFileError(f"{where}: the progressive calibration state is invalid: "
                                 f"{progress!r}") from None
