"""What a network has learned, as one value: :class:`NetworkState`, and what is derived
from it and kept only for speed: :class:`NetworkCache`.

A :class:`~snowpy.Network` holds one state. Training, pruning, calibrating,
refreshing a rule's planes and saving take it and change it; loading a model
builds it through the same constructor as training a new one does
(:meth:`NetworkState.new`), so the two cannot drift apart.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy.network.labels import LabelIndex
from snowpy.network.links import LinkStore
from snowpy.records.rules import RuleKernel, RuleSpec

__all__ = ["NetworkCache", "NetworkState"]


class NetworkCache:
    """What is derived from a network's state and kept only for speed: the effective
    link tables, the one-example path's compiled binding and its buffers.

    :meth:`invalidate` is the one call that says the weights changed. The compiled
    binding is checked against the store's generations where it is used, and is not
    pickled (it is made again on first use).
    """

    def __init__(self) -> None:
        #: effective weights per link, minus a missing link's (key: averaged or not)
        self.effective: dict[bool, np.ndarray] = {}
        #: the one-example scoring's constants (absent weight, rounding, bias, theta)
        self.score_args: Any = None
        #: ``[t]`` for each target ``t``, made once (the one-example path's targets)
        self.single_targets: list[np.ndarray] = []
        #: one example's progressive scores (the window copies them)
        self.score_buffer: np.ndarray | None = None
        #: the one-example path's compiled binding, and the generations it was bound at
        self.learner: Any = None
        self.learner_key = (-1, -1)
        self.learner_width = 0
        self.learner_queue = 0

    def invalidate(self) -> None:
        """The weights changed: the effective tables are stale."""
        self.effective.clear()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["learner"] = None
        state["learner_key"] = (-1, -1)
        return state


class NetworkState:
    """Everything a trained :class:`~snowpy.Network` has learned, as one value.

    Attributes
    ----------
    spec, params, kernel
        The update rule's record, its parameters as used (defaults and derived
        values included) and its compiled kernel.
    store : LinkStore
        The links and their weights.
    labels : LabelIndex
        The labels, one per target node, in target order.
    multilabel, indicator : bool
        Trained with a set of labels per example; given them as a 0/1 matrix.
    n_features : int
        The width of ``X``; with ``open_features``, one past the largest id seen
        (a network started one example at a time, without a width).
    rng : numpy.random.Generator
        The shuffling's salts, drawn one per epoch.
    counts : ndarray of int64, shape (targets, 2)
        Promotions and demotions per target (:meth:`target_counts` grows it).
    progressive : ProgressiveWindow or None
        The recent scores progressive calibration fits its sigmoids on.
    calibration : Calibration or None
        The sigmoids from scores to probabilities.
    mistakes, updates : list of int
        Per epoch (per call of ``partial_fit``; one entry for a run of
        ``learn_one``), mistakes made and target updates.
    n_examples_seen, overflows, underflows : int
        Examples processed; updates clamped at the largest and the smallest
        magnitude kept.
    online : bool
        A run of ``learn_one`` has its entry in ``mistakes`` open.
    planes_stale : bool
        A rule that derives its scoring planes (Naive Bayes) learned since
        they were derived; ``stale_examples`` counts the examples since.
    cache : NetworkCache
        What is derived from the rest, for speed.
    """

    def __init__(self, spec: RuleSpec, params: dict[str, Any], kernel: RuleKernel,
                 store: LinkStore, labels: LabelIndex, *, multilabel: bool, n_features: int,
                 seed: int | None, open_features: bool = False, indicator: bool = False,
                 progressive: Any = None) -> None:
        self.spec = spec
        self.params = params
        self.kernel = kernel
        self.store = store
        self.labels = labels
        self.multilabel = multilabel
        self.indicator = indicator
        self.n_features = n_features
        self.open_features = open_features
        self.rng = np.random.default_rng(seed)
        self.counts = np.zeros((0, 2), dtype=np.int64)
        self.progressive = progressive
        self.calibration: Any = None
        self.mistakes: list[int] = []
        self.updates: list[int] = []
        self.n_examples_seen = 0
        self.overflows = 0
        self.underflows = 0
        self.online = False
        self.planes_stale = False
        self.stale_examples = 0
        self.cache = NetworkCache()

    def target_counts(self) -> np.ndarray:
        """Promotions and demotions per target, ``int64[targets, 2]``, grown to every
        target; the engine adds to it in place."""
        n_targets = self.store.n_targets
        if self.counts.shape[0] < n_targets:
            grown = np.zeros((n_targets, 2), dtype=np.int64)
            grown[:self.counts.shape[0]] = self.counts
            self.counts = grown
        return self.counts
