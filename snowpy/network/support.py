"""What a :class:`~snowpy.DualNetwork` has learned, as one value: :class:`DualEngine`.

A dual network keeps support vectors instead of weights: each one's feature ids
and strengths in a row of ``width`` slots (slot ``s`` holds ``lengths[s]`` ids and
strengths at ``ids[s * width:]`` and ``vals[s * width:]``), its length, and its
coefficient per target (``alpha[s, t]``), in a ring of at most the rule's budget (the
oldest replaced first). Training and scoring (the compiled loops of
:mod:`snowpy._core.dual`, one for every dual rule: the similarity is the rule's C
function, called through a pointer, :mod:`snowpy.rules.dual`) and the model file
(:mod:`snowpy.network.dual_state`) take this value; the network holds one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy.network.labels import LabelIndex

__all__ = ["MIN_WIDTH", "OLDEST", "USED", "DualEngine"]

#: ``ring[USED]``: slots holding a support vector; ``ring[OLDEST]``: the next replaced.
USED = 0
OLDEST = 1

#: The narrowest slots (features per support vector) a network starts with.
MIN_WIDTH = 16


class DualEngine:
    """The support vectors of a dual network, their coefficients, and its labels.

    Attributes
    ----------
    kernel : DualKernel
        The rule's compiled similarity and its parameters.
    labels : LabelIndex
        The labels, one per target, in target order.
    indicator : bool
        The labels came as a 0/1 matrix.
    width : int
        Slots per support vector (grown to the widest seen).
    ids, vals : ndarray
        ``[rows * width]``: each support vector's feature ids and strengths.
    lengths : ndarray of int64
        ``[rows]``: features per support vector.
    alpha : ndarray of float64
        ``[rows, targets]``: the coefficients.
    ring : ndarray of int64
        ``[2]``: support vectors held and the position of the oldest
        (:data:`USED`, :data:`OLDEST`).
    progressive : ProgressiveWindow or None
        The recent scores progressive calibration fits on.
    rng : numpy.random.Generator
        The shuffling's salts.
    """

    def __init__(self, labels: LabelIndex, kernel: Any, *, seed: int | None,
                 progressive: Any = None) -> None:
        self.kernel = kernel
        self.labels = labels
        budget = kernel.budget
        self.indicator = False
        self.width = MIN_WIDTH
        rows = budget if 0 < budget <= 64 else 64
        self.ids = np.zeros(rows * self.width, np.int64)
        self.vals = np.zeros(rows * self.width, np.float64)
        self.lengths = np.zeros(rows, np.int64)
        self.alpha = np.zeros((rows, max(len(labels), 1)), np.float64)
        self.ring = np.zeros(2, np.int64)
        self.progressive = progressive
        self.rng = np.random.default_rng(seed)

    @property
    def n_support(self) -> int:
        """Support vectors held."""
        return int(self.ring[USED])

    def widen(self, width: int) -> None:
        """Slots of ``width`` features (the support vectors moved, not changed)."""
        rows = self.lengths.shape[0]
        ids = np.zeros(rows * width, np.int64)
        vals = np.zeros(rows * width, np.float64)
        old = self.width
        for s in range(self.n_support):
            n = int(self.lengths[s])
            ids[s * width:s * width + n] = self.ids[s * old:s * old + n]
            vals[s * width:s * width + n] = self.vals[s * old:s * old + n]
        self.ids, self.vals, self.width = ids, vals, width

    def grow(self, budget: int) -> None:
        """Twice the rows (at most ``budget``, when there is one)."""
        rows = self.lengths.shape[0]
        more = 2 * rows if budget == 0 else min(2 * rows, budget)
        self.ids = np.concatenate([self.ids, np.zeros((more - rows) * self.width, np.int64)])
        self.vals = np.concatenate([self.vals, np.zeros((more - rows) * self.width)])
        self.lengths = np.concatenate([self.lengths, np.zeros(more - rows, np.int64)])
        grown = np.zeros((more, self.alpha.shape[1]))
        grown[:rows] = self.alpha
        self.alpha = grown

    def cover_targets(self) -> None:
        """A coefficient column for every label."""
        if len(self.labels) > self.alpha.shape[1]:
            grown = np.zeros((self.alpha.shape[0], len(self.labels)))
            grown[:, :self.alpha.shape[1]] = self.alpha
            self.alpha = grown

    def held(self, slots: np.ndarray) -> np.ndarray:
        """What ``slots`` (:attr:`ids` or :attr:`vals`) hold for the support vectors,
        without gaps."""
        parts = [slots[s * self.width:s * self.width + int(self.lengths[s])]
                 for s in range(self.n_support)]
        return np.concatenate(parts) if parts else np.zeros(0, slots.dtype)

    def adopt(self, ids: np.ndarray, vals: np.ndarray, lengths: np.ndarray,
              alpha: np.ndarray, oldest: int, budget: int) -> None:
        """Take support vectors stored without gaps (a model file's), checked by the
        caller."""
        n = int(lengths.size)
        width = max(MIN_WIDTH, int(lengths.max(initial=0)))
        rows = max(n, 1) if budget == 0 else budget
        self.width = width
        self.ids = np.zeros(rows * width, np.int64)
        self.vals = np.zeros(rows * width, np.float64)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        for s in range(n):
            self.ids[s * width:s * width + lengths[s]] = ids[offsets[s]:offsets[s + 1]]
            self.vals[s * width:s * width + lengths[s]] = vals[offsets[s]:offsets[s + 1]]
        self.lengths = np.zeros(rows, np.int64)
        self.lengths[:n] = lengths
        self.alpha = np.zeros((rows, alpha.shape[1]))
        self.alpha[:n] = alpha
        self.ring[USED] = n
        self.ring[OLDEST] = int(oldest) % max(rows, 1)
