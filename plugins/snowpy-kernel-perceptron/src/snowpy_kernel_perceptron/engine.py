"""What a :class:`~snowpy_kernel_perceptron.DualNetwork` has learned, as one value:
:class:`DualEngine`.

A dual network keeps support vectors instead of weights: each one's feature ids
and strengths in a row of ``width`` slots (slot ``s`` holds ``lengths[s]`` ids and
strengths at ``ids[s * width:]`` and ``vals[s * width:]``), its length, and its
coefficient per target (``alpha[s, t]``), in a ring of at most the rule's budget (the
oldest replaced first). Training and scoring (the compiled loops of
:mod:`snowpy_kernel_perceptron._dual`, one for every dual rule: the similarity is the
rule's C function, called through a pointer, :mod:`snowpy_kernel_perceptron.kernel`)
and the model file (:meth:`~snowpy_kernel_perceptron.DualNetwork.to_state`) take this
value; the network holds one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy.exceptions import ConfigurationError
from snowpy.network.calibrating import refresh_progressive
from snowpy.network.engine import OneExample
from snowpy.network.labels import (
    COLLECTIONS,
    LabelIndex,
    positive_matrix,
    refuse_label_kind,
)

from snowpy_kernel_perceptron._dual import dual_epoch, dual_scores

__all__ = ["MIN_WIDTH", "OLDEST", "USED", "DualEngine"]

#: ``ring[USED]``: slots holding a support vector; ``ring[OLDEST]``: the next replaced.
USED = 0
OLDEST = 1

#: The narrowest slots (features per support vector) a network starts with.
MIN_WIDTH = 16


class DualEngine(OneExample):
    """The support vectors of a dual network, their coefficients, and its labels.

    Attributes
    ----------
    kernel, params
        The rule's compiled similarity, and its parameters as used.
    n_features : int
        The width of the examples.
    multilabel : bool
        Trained with a set of labels per example.
    calibration : Calibration or None
        The sigmoids from scores to probabilities.
    mistakes, updates : list of int
        Per epoch (one entry per ``partial_fit``, or per run of one-example learning).
    n_examples_seen : int
        Examples processed by training, epochs counted.
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

    def __init__(self, labels: LabelIndex, kernel: Any, params: dict[str, Any], *,
                 n_features: int, multilabel: bool, seed: int | None,
                 progressive: Any = None) -> None:
        self.kernel = kernel
        self.params = params
        self.n_features = int(n_features)
        self.multilabel = bool(multilabel)
        self.labels = labels
        self.calibration: Any = None
        self.mistakes: list[int] = []
        self.updates: list[int] = []
        self.n_examples_seen = 0
        self.online = False
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

    # ---------------------------------------------------------- learning, scoring
    def positives(self, y_indptr: np.ndarray, y_targets: np.ndarray) -> np.ndarray | None:
        """Which targets each example is positive for, when calibrating progressively."""
        if self.progressive is None:
            return None
        return positive_matrix(y_indptr, y_targets, self.alpha.shape[1])

    def run(self, indptr: np.ndarray, ids: np.ndarray, vals: np.ndarray, order: np.ndarray,
            y_indptr: np.ndarray, y_targets: np.ndarray, positives: np.ndarray | None = None
            ) -> tuple[int, int]:
        """Learn the examples ``order`` (of rows ``indptr``, ``ids``, ``vals``, labelled
        ``y_indptr``, ``y_targets``), the slots widened and the ring grown as they ask;
        with the examples' ``positives`` (progressive calibration) the scores before
        learning go to the progressive window. The mistakes and updates made."""
        kernel, params = self.kernel, self.params
        mistakes = updates = 0
        while order.size:
            scores = np.empty((order.size if positives is not None else 0,
                               self.alpha.shape[1]))
            done, m, u, need = dual_epoch(
                kernel.compiled, self.ids, self.vals, self.lengths, self.width, self.alpha,
                self.ring, kernel.budget, indptr, ids, vals, order, y_indptr, y_targets,
                kernel.params, float(params["theta"]), float(params["thickness"]),
                float(params["negative_thickness"]), float(kernel.step), self.multilabel,
                scores)
            window = self.progressive
            if positives is not None and window is not None and done:
                window.add(scores[:done], positives[order[:done]])
                refresh_progressive(self, window)
            mistakes += m
            updates += u
            order = order[done:]
            if need > 0:
                self.widen(max(need, 2 * self.width))
            elif need < 0:
                self.grow(kernel.budget)
        return mistakes, updates

    def scores(self, indptr: np.ndarray, ids: np.ndarray, vals: np.ndarray) -> np.ndarray:
        """``f_t(x) - theta`` of every target for the rows ``indptr``, ``ids``, ``vals``
        (canonical, of the network's width), ``float64[n, targets]``."""
        out = np.empty((indptr.size - 1, len(self.labels)))
        alpha = np.ascontiguousarray(self.alpha[:, :len(self.labels)])
        dual_scores(self.kernel.compiled, self.ids, self.vals, self.lengths, self.width,
                    self.n_support, alpha, indptr.astype(np.int64), ids.astype(np.int64),
                    vals.astype(np.float64), self.kernel.params, float(self.params["theta"]),
                    out)
        return out

    # ------------------------------------------------- one example at a time
    @property
    def frozen(self) -> bool:
        """Never: a dual network keeps what it learns from in every model file."""
        return False

    def check_label(self, y: Any) -> None:
        """Refuse a label of the other kind than the network learned, before a front end
        counts its example."""
        refuse_label_kind(self.multilabel, y)

    def _check_width(self, ids: np.ndarray) -> None:
        """Refuse an example with a feature beyond the support vectors' width."""
        if ids.size and ids[-1] >= self.n_features:
            raise ConfigurationError(f"feature id {int(ids[-1])} is beyond the network's "
                                     f"{self.n_features} features")

    def score_one(self, ids: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, int]:
        """The scores of one checked example per target, and the best target."""
        self._check_width(ids)
        scores = self.scores(np.array([0, ids.size]), ids, vals)[0]
        return scores, int(np.argmax(scores)) if scores.size else -1

    def learn_one(self, ids: np.ndarray, vals: np.ndarray, y: Any) -> None:
        """Learn one checked example."""
        self.check_label(y)
        self._check_width(ids)
        labels = list(y) if isinstance(y, COLLECTIONS) else [y]
        for label in labels:
            self.labels.add(label)
        self.cover_targets()
        y_indptr = np.array([0, len(labels)], np.int64)
        y_targets = np.array([self.labels.find(label) for label in labels], np.int32)
        mistakes, updates = self.run(np.array([0, ids.size], np.int64), ids.astype(np.int64),
                                     vals.astype(np.float64), np.zeros(1, np.int64),
                                     y_indptr, y_targets, self.positives(y_indptr, y_targets))
        if not self.online:  # one entry of the figures for a run of one-example learning
            self.mistakes.append(0)
            self.updates.append(0)
            self.online = True
        self.mistakes[-1] += mistakes
        self.updates[-1] += updates
        self.n_examples_seen += 1

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
