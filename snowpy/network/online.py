"""One example at a time: River's ``learn_one``/``predict_one`` on a network.

An example is a dict of feature id -> strength, a sequence of active ids
(strength 1), a pair ``(ids, strengths)`` of arrays, or a one-row sparse
matrix. Learning it calls the training
engine once on that example, with none of the batch path's set-up: no
matrix is built, labels are looked up in a dict. Predicting it scores its
active features' links straight from the weights and the averaging sums
(``W - U / seen``: lazy averaging), so neither costs anything proportional to
the model's size, however it grows.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from snowpy._core.online import GROW_MAP, GROW_QUEUE, GROW_ROWS, OnlineLearner, checked
from snowpy._lazy import lazy_module
from snowpy.exceptions import ConfigurationError
from snowpy.network.calibrating import refresh_progressive
from snowpy.network.labels import normalise_label
from snowpy.network.links import ONLINE_WIDTH
from snowpy.network.refreshing import ensure_fresh
from snowpy.network.training import (
    KERNEL_ERRORS,
    NumericalWarning,
    kernel_failure,
    rule_binding,
    training_options,
)

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp
else:
    sp = lazy_module("scipy.sparse")

__all__ = ["ONLINE_WIDTH", "OnlineLearning", "parse_example"]


_COLLECTIONS = (list, tuple, set, frozenset)
_NO_SCORES = np.empty((0, 0), dtype=np.float64)


def parse_example(x: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, strengths)`` of one example, ids sorted as a CSR row's are: a dict of
    feature id -> strength, active ids, an ``(ids, strengths)`` pair of arrays or a
    sparse row; bad ids, strengths and repeated features are refused."""
    if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], np.ndarray):
        ids = np.array(x[0], dtype=np.int64)  # a copy: _checked sorts in place
        vals = np.array(x[1], dtype=np.float64)
        if ids.shape != vals.shape or ids.ndim != 1:
            raise ConfigurationError("an (ids, strengths) pair needs two 1-D arrays of "
                                     "the same length")
    elif isinstance(x, Mapping):
        try:
            ids = np.fromiter(x.keys(), dtype=np.int64, count=len(x))
            vals = np.fromiter(x.values(), dtype=np.float64, count=len(x))
        except (TypeError, ValueError, OverflowError):
            raise ConfigurationError(
                "an example is a dict of feature id (an integer) -> strength (a number); "
                "for raw text use snowpy.SnowClassifier") from None
    elif sp.issparse(x):
        row = sp.csr_matrix(x)
        if row.shape[0] != 1:
            raise ConfigurationError(f"one example is one row, got {row.shape[0]}")
        row.sum_duplicates()
        ids, vals = row.indices.astype(np.int64), row.data.astype(np.float64)
    elif isinstance(x, (str, bytes)):
        raise ConfigurationError(
            "a Network takes features (a dict of feature id -> strength, or active ids); "
            "for raw text use snowpy.SnowClassifier"
        )
    else:
        ids = np.asarray(list(x) if not isinstance(x, np.ndarray) else x, dtype=np.int64)
        ids = np.unique(ids)
        vals = np.ones(ids.size)
    problem = checked(ids, vals)
    if problem:
        raise ConfigurationError("feature ids must be >= 0 and strengths finite"
                                 if problem == 1 else "an example names a feature twice")
    return ids, vals


class OnlineLearning:
    """``learn_one``, ``predict_one``, ``predict_proba_one``, ``learn_many``,
    ``predict_many``: a mixin of :class:`snowpy.Network`."""

    # what the Network this mixes into provides (declared for the type checker)
    _store: Any
    _labels: Any
    _progressive: Any
    _effective_cache: dict[bool, Any]
    _single_targets: list[Any]
    _online: Any
    _score_args: Any
    _learner: Any
    _learner_key: tuple[int, int]
    _learner_width: int
    _learner_queue: int
    _score_buffer: np.ndarray | None
    calibration_: Any
    kernel_: Any
    mistakes_: list[int]
    updates_: list[int]
    multilabel_: bool
    multiclass: str
    n_examples_seen_: int
    overflows_: int
    underflows_: int
    rule: str
    rule_params_: dict[str, Any]
    partial_fit: Callable[..., Any]
    predict: Callable[..., Any]
    _bias_strength: Callable[[], float]
    _check_fitted: Callable[[], None]
    _trained: Callable[[], bool]  # (RuleParamsEstimator's)
    _cover_new_targets: Callable[[], None]
    _initialise_sized: Callable[..., None]
    _target_counts: Callable[[], Any]
    _label_of: Callable[..., Any]
    _probabilities_of: Callable[..., dict[Any, float]]

    def learn_one(self, x: Any, y: Any) -> Any:
        """Learn one example: ``x`` a dict of feature id -> strength (or active ids),
        ``y`` its label (a collection of labels for a multi-label network).

        The same weights as :meth:`partial_fit` on the same examples in the same
        order, at the cost of the example alone. Returns the network.
        """
        ids, vals = parse_example(x)
        return self._learn_example(ids, vals, y)

    def predict_one(self, x: Any) -> Any:
        """The label of one example (a tuple of labels for a multi-label network); None
        before the first example is learned, as River's classifiers answer."""
        if not self._trained():
            return None
        return self._label_of(*self._score_example(*parse_example(x)))

    def predict_proba_one(self, x: Any) -> dict[Any, float]:
        """The calibrated probability of each label for one example, a dict.

        With ``calibrate="progressive"`` the sigmoids follow the stream: fitted
        on the scores examples got before they were learned, refitted by the
        learning as the window grows (every 8 examples at first, then whenever
        a tenth more came).
        """
        if not self._trained():
            return {}  # (River's answer before the first example)
        scores, _ = self._score_example(*parse_example(x))
        return self._probabilities_of(scores)

    def learn_many(self, X: Any, y: Sequence[Any]) -> Any:
        """Learn a mini-batch in order (River's name for :meth:`partial_fit`)."""
        return self.partial_fit(X, y)

    def predict_many(self, X: Any) -> Any:
        """The labels of a mini-batch (River's name for :meth:`predict`)."""
        return self.predict(X)

    # ----------------------------------------------------------------- paths
    def _online_learner(self, width: int = 0) -> OnlineLearner:
        """What the one-example path needs, bound once (:class:`OnlineLearner`): bound
        again when the store or the feature map replaced an array, or for an example
        wider than the workspace."""
        store = self._store
        key = (store.generation, store.feature_map.generation)
        learner = self._learner
        if learner is None or key != self._learner_key or width > self._learner_width:
            if learner is None:
                KERNEL_ERRORS.watch()  # a numba kernel's exceptions fail the example
            if width > self._learner_width:
                self._learner_width = max(width, 2 * self._learner_width, 256)
            self._learner_queue = max(self._learner_queue, 16 * (self._learner_width + 2))
            fmap = store.feature_map
            slots, row_ids = fmap.arrays
            learner = self._learner = OnlineLearner(
                store.links(), rule_binding(self), training_options(self), slots, row_ids,
                self._target_counts(), self._learner_width, self._learner_queue, fmap.direct)
            self._learner_key = key
        return learner

    def _score_example(self, ids: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, int]:
        """Scores of one checked example, and the best target."""
        self._check_fitted()
        ensure_fresh(self, online=True)
        store = self._store
        out = np.empty(store.n_targets, dtype=np.float64)
        constants = self._score_args
        if constants is None:  # (reset when the network is created or loaded)
            constants = self._score_args = (
                store.absent, store.dtype != np.float64 and not store.frozen,
                self._bias_strength(), float(self.rule_params_["theta"]))
        absent, round32, bias, theta = constants
        best = self._online_learner(ids.size).score(ids, vals, float(store.seen), absent,
                                                    round32, bias, theta, out)
        return out, best

    def _learn_example(self, ids: np.ndarray, vals: np.ndarray, y: Any,
                       width: int | None = None) -> Any:
        """Learn one checked example (ids sorted, unique, >= 0). A network it starts
        has ``width`` features (the caller then knows the ids are below it), or with
        none an open feature space: any id below :data:`ONLINE_WIDTH`,
        ``n_features_in_`` one past the largest seen. (The one-example path: every
        line here costs on every example.)"""
        targets, scores = self._begin_example(ids, y, width)
        store = self._store
        while True:
            result = self._online_learner(ids.size).learn(
                ids, vals, targets, store.feature_map.next_row, store.seen, scores)
            if self._step_done(result):
                return self._finish_example(result[2], targets, scores)

    def _begin_example(self, ids: np.ndarray | None, y: Any, width: int | None
                       ) -> tuple[np.ndarray, np.ndarray]:
        """Check an example about to be learned (``ids`` None: known to fit the network,
        which exists), create its labels' targets; ``(targets, scores buffer)``."""
        multilabel = isinstance(y, _COLLECTIONS)
        store = getattr(self, "_store", None)
        if store is None:
            assert ids is not None  # (None only for an example known to fit the network)
            self._initialise_sized(width or ONLINE_WIDTH, float(ids.size), multilabel,
                                   streamed=True)
            store = self._store
            if width is None:
                self._open_features = True
                self.n_features_in_ = 0
        elif store.frozen:
            raise ConfigurationError(
                "this network was loaded from an inference-only model file: it keeps no "
                "training state to continue from"
            )
        elif multilabel != self.multilabel_:
            kind = "multi-label" if self.multilabel_ else "single-label"
            raise ConfigurationError(f"this network was trained {kind}; y must be {kind} too")
        if ids is not None and width is None and ids.size and ids[-1] >= self.n_features_in_:
            if not (self._open_features and ids[-1] < ONLINE_WIDTH):
                limit = ONLINE_WIDTH if self._open_features else self.n_features_in_
                raise ConfigurationError(
                    f"feature id {int(ids[-1])} is beyond the network's {limit} features")
            self.n_features_in_ = int(ids[-1]) + 1
        labels = self._labels
        if multilabel:
            targets = np.unique(np.array([labels.add(normalise_label(label)) for label in y],
                                         dtype=np.int32))
        else:
            target = labels._index.get(y) if type(y) is str else None
            if target is None:
                target = labels.add(normalise_label(y))
            singles = self._single_targets  # one array per target, made once
            while len(singles) <= target:
                singles.append(np.array([len(singles)], dtype=np.int32))
            targets = singles[target]
        if len(labels) > store.S.shape[0]:
            store.add_targets(len(labels) - store.S.shape[0])
            self._cover_new_targets()
        if self._progressive is None:
            return targets, _NO_SCORES
        buffer = getattr(self, "_score_buffer", None)  # (one per network: the window copies)
        if buffer is None or buffer.shape[1] != store.S.shape[0]:
            buffer = self._score_buffer = np.empty((1, store.S.shape[0]))
        return targets, buffer

    def _step_done(self, result: tuple) -> bool:
        """After a compiled step (:meth:`OnlineLearner.learn`'s ``(status, next_row,
        outcome)``): record the rows it mapped and grow what it asked for; True when the
        example was learned, False when the step must be called again."""
        if KERNEL_ERRORS.caught:
            raise KERNEL_ERRORS.failure(self)
        status, next_row, outcome = result
        store = self._store
        fmap = store.feature_map
        fmap.next_row = next_row  # (features mapped before a stop keep their rows)
        if next_row > store.n_rows:
            store.n_rows = next_row
        if outcome.failed:
            raise kernel_failure(self)
        if status or not (outcome.processed or not outcome.need_room):
            self._learner = None  # (it holds the arrays about to grow: they grow in place)
        if status == GROW_MAP:
            fmap.grow()
        elif status == GROW_ROWS:
            store.reserve_rows(next_row)
        elif status == GROW_QUEUE:
            self._learner_queue = 2 * outcome.need_queue
            self._learner = None  # bound again, with the room
        elif outcome.processed or not outcome.need_room:
            return True
        else:
            store.reserve_links(outcome.need_room)
        return False

    def _finish_example(self, outcome: Any, targets: np.ndarray, scores: np.ndarray) -> Any:
        """The bookkeeping after an example was learned."""
        mistakes, updates, overflows = outcome.mistakes, outcome.updates, outcome.overflows
        underflows, nonfinite, seen = outcome.underflows, outcome.nonfinite, outcome.seen
        store = self._store
        if nonfinite:
            from snowpy.exceptions import NumericalError

            raise NumericalError(f"rule {self.rule!r} produced NaN; check its parameters "
                                 f"{self.kernel_.params.tolist()}")
        store.seen = seen
        self.n_examples_seen_ += 1
        if not self._online:  # one entry of mistakes_ for a run of learn_one calls
            self.mistakes_.append(0)
            self.updates_.append(0)
            self._online = True
        if mistakes:
            self.mistakes_[-1] += mistakes
        if updates:
            self.updates_[-1] += updates
            self._effective_cache.clear()
            if self.kernel_.refresh is not None:
                self._planes_stale = True
                self._stale_examples = getattr(self, "_stale_examples", 0) + 1
            if underflows:
                self.underflows_ += underflows
        if scores.shape[0]:
            self._progressive.add_one(scores, targets)
            refresh_progressive(self)  # here, not when predicting: predictions change nothing
        if overflows:
            self.overflows_ += overflows
            warnings.warn(f"{overflows} weight updates exceeded the largest magnitude kept "
                          f"({store.max_magnitude:g}) and were clamped", NumericalWarning,
                          stacklevel=4)
        return self
