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

__all__ = ["LearnedFigures", "NetworkCache", "NetworkState"]


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


class LearnedFigures:
    """A :class:`~snowpy.Network`'s fitted attributes (scikit-learn's trailing
    underscores), read from its :class:`NetworkState` (``state_``, which raises
    ``NotFittedError`` before training)."""

    @property
    def state_(self) -> NetworkState:  # pragma: no cover - the network's
        raise NotImplementedError

    @property
    def rule_spec_(self) -> RuleSpec:
        """The update rule's record."""
        return self.state_.spec

    @property
    def rule_params_(self) -> dict[str, Any]:
        """Every rule parameter as used, defaults and derived values included."""
        return self.state_.params

    @property
    def kernel_(self) -> RuleKernel:
        """The rule's compiled kernel."""
        return self.state_.kernel

    @property
    def multilabel_(self) -> bool:
        """Whether the network was trained with a set of labels per example."""
        return self.state_.multilabel

    @property
    def n_features_in_(self) -> int:
        """The width of ``X`` the network takes."""
        return self.state_.n_features

    @property
    def mistakes_(self) -> list[int]:
        """Per epoch (per call for :meth:`partial_fit`), the examples mispredicted."""
        return self.state_.mistakes

    @mistakes_.setter
    def mistakes_(self, per_epoch: list[int]) -> None:
        # (training block by block from a cache: one entry per epoch, not per block)
        self.state_.mistakes = [int(m) for m in per_epoch]

    @property
    def updates_(self) -> list[int]:
        """Per epoch, the target updates made."""
        return self.state_.updates

    @property
    def n_examples_seen_(self) -> int:
        """Examples processed by training, epochs counted."""
        return self.state_.n_examples_seen

    @property
    def overflows_(self) -> int:
        """Weight updates clamped to the largest magnitude kept."""
        return self.state_.overflows

    @property
    def underflows_(self) -> int:
        """Weight updates raised to the smallest magnitude kept."""
        return self.state_.underflows

    @property
    def calibration_(self) -> Any:
        """The sigmoids from scores to probabilities, or None."""
        return self.state_.calibration

    @calibration_.setter
    def calibration_(self, calibration: Any) -> None:
        self.state_.calibration = calibration
