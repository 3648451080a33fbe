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
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from snowpy._core.online import GROW_MAP, GROW_QUEUE, GROW_ROWS, OnlineLearner, checked
from snowpy._lazy import lazy_module
from snowpy.exceptions import ConfigurationError
from snowpy.network.calibrating import refresh_progressive
from snowpy.network.labels import normalise_label
from snowpy.network.learned import LearnedFigures
from snowpy.network.links import ONLINE_WIDTH
from snowpy.network.training import KERNEL_ERRORS, NumericalWarning

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp

    from snowpy.network.engine import Engine
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


class OnlineLearning(LearnedFigures):
    """One example at a time through the links (:meth:`score_example`,
    :meth:`learn_example`, :meth:`learn_text`): a mixin of :class:`snowpy.Network`;
    River's ``learn_one``, ``predict_one``... are written over them once, in
    :class:`snowpy.network.kind.NetworkKind`."""

    # what the Network this mixes into provides (declared for the type checker)
    _state: Engine
    rule: str
    partial_fit: Callable[..., Any]
    predict: Callable[..., Any]
    _bias_strength: Callable[[], float]
    _check_fitted: Callable[[], None]
    _trained: Callable[[], bool]  # (RuleParamsEstimator's)
    _cover_new_targets: Callable[[], None]
    _initialise_sized: Callable[..., None]
    label_of: Callable[..., Any]
    probabilities_of: Callable[..., dict[Any, float]]

    # ----------------------------------------------------------------- paths
    def _online_learner(self, width: int = 0) -> OnlineLearner:
        """What the one-example path needs, bound once (:class:`OnlineLearner`): bound
        again when the store or the feature map replaced an array, or for an example
        wider than the workspace."""
        state = self._state
        store, cache = state.store, state.cache
        key = (store.generation, store.feature_map.generation)
        learner = cache.learner
        if learner is None or key != cache.learner_key or width > cache.learner_width:
            if learner is None:
                KERNEL_ERRORS.watch()  # a numba kernel's exceptions fail the example
            if width > cache.learner_width:
                cache.learner_width = max(width, 2 * cache.learner_width, 256)
            cache.learner_queue = max(cache.learner_queue, 16 * (cache.learner_width + 2))
            fmap = store.feature_map
            slots, row_ids = fmap.arrays
            learner = cache.learner = OnlineLearner(
                store.links(), state.binding(), state.options(), slots, row_ids,
                state.target_counts(), cache.learner_width, cache.learner_queue,
                fmap.direct)
            cache.learner_key = key
        return learner

    def score_example(self, ids: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, int]:
        """The scores of one example (``ids`` sorted, unique, checked: what
        :func:`parse_example` gives) per target, and the best target. With
        :meth:`label_of` and :meth:`probabilities_of`, the one-example protocol that every
        kind of network offers (:meth:`predict_one` is ``label_of(*score_example(...))``).

        >>> import snowpy
        >>> net = snowpy.Network("perceptron").fit(np.eye(2), ["a", "b"])
        >>> scores, best = net.score_example(*parse_example({1: 1.0}))
        >>> net.label_of(scores, best)
        'b'
        """
        self._check_fitted()
        state = self._state
        if state.planes_stale:  # (a rule's derived planes: checked here, on every example)
            state.ensure_fresh(online=True)
        store = state.store
        out = np.empty(store.n_targets, dtype=np.float64)
        constants = state.cache.score_args
        if constants is None:  # (reset when the network is created or loaded)
            constants = state.cache.score_args = (
                store.absent, store.dtype != np.float64 and not store.frozen,
                self._bias_strength(), float(state.params["theta"]))
        absent, round32, bias, theta = constants
        best = self._online_learner(ids.size).score(ids, vals, float(store.seen), absent,
                                                    round32, bias, theta, out)
        return out, best

    def learn_example(self, ids: np.ndarray, vals: np.ndarray, y: Any,
                       width: int | None = None) -> Any:
        """Learn one checked example (ids sorted, unique, >= 0: :func:`parse_example`
        gives them; :meth:`learn_one` is ``learn_example(*parse_example(x), y)``). A
        network it starts
        has ``width`` features (the caller then knows the ids are below it), or with
        none an open feature space: any id below :data:`ONLINE_WIDTH`,
        ``n_features_in_`` one past the largest seen. (The one-example path: every
        line here costs on every example.)"""
        targets, scores = self._begin_example(ids, y, width)
        store = self._state.store
        while True:
            result = self._online_learner(ids.size).learn(
                ids, vals, targets, store.feature_map.next_row, store.seen, scores)
            if self._step_done(result):
                return self._finish_example(result[2], targets, scores)

    def learn_text(self, words: Any, raw: np.ndarray, y: Any, width: int) -> bool:
        """Featurise and learn one text in one compiled call: ``raw`` its UTF-8 bytes,
        ``words`` a word-n-gram front end's compiled path
        (:meth:`snowpy.text.Featurizer.words_only`), ``width`` the network's feature
        space. False when the text was not learned (a network not started yet, or a
        text the compiled path cannot take): featurise it and call
        :meth:`learn_example`."""
        if "_state" not in self.__dict__:
            return False
        targets, scores = self._begin_example(None, y, width)
        store = self._state.store
        result = self._online_learner().learn_text(
            words, raw, targets, store.feature_map.next_row, store.seen, scores)
        if result is None or not self._step_done(result):
            return False
        self._finish_example(result[2], targets, scores)
        return True

    def _begin_example(self, ids: np.ndarray | None, y: Any, width: int | None
                       ) -> tuple[np.ndarray, np.ndarray]:
        """Check an example about to be learned (``ids`` None: known to fit the network,
        which exists), create its labels' targets; ``(targets, scores buffer)``."""
        multilabel = isinstance(y, _COLLECTIONS)
        state = self.__dict__.get("_state")
        if state is None:
            assert ids is not None  # (None only for an example known to fit the network)
            self._initialise_sized(width or ONLINE_WIDTH, float(ids.size), multilabel,
                                   streamed=True)
            state = self._state
            if width is None:
                state.open_features = True
                state.n_features = 0
        store = state.store
        if store.frozen:
            raise ConfigurationError(
                "this network was loaded from an inference-only model file: it keeps no "
                "training state to continue from"
            )
        if multilabel != state.multilabel:
            kind = "multi-label" if state.multilabel else "single-label"
            raise ConfigurationError(f"this network was trained {kind}; y must be {kind} too")
        if ids is not None and width is None and ids.size and ids[-1] >= state.n_features:
            if not (state.open_features and ids[-1] < ONLINE_WIDTH):
                limit = ONLINE_WIDTH if state.open_features else state.n_features
                raise ConfigurationError(
                    f"feature id {int(ids[-1])} is beyond the network's {limit} features")
            state.n_features = int(ids[-1]) + 1
        labels = state.labels
        if multilabel:
            targets = np.unique(np.array([labels.add(normalise_label(label)) for label in y],
                                         dtype=np.int32))
        else:
            target = labels.target_of(y) if type(y) is str else None
            if target is None:
                target = labels.add(normalise_label(y))
            singles = state.cache.single_targets  # one array per target, made once
            while len(singles) <= target:
                singles.append(np.array([len(singles)], dtype=np.int32))
            targets = singles[target]
        if len(labels) > store.S.shape[0]:
            store.add_targets(len(labels) - store.S.shape[0])
            self._cover_new_targets()
        if state.progressive is None:
            return targets, _NO_SCORES
        buffer = state.cache.score_buffer  # (one per network: the window copies)
        if buffer is None or buffer.shape[1] != store.S.shape[0]:
            buffer = state.cache.score_buffer = np.empty((1, store.S.shape[0]))
        return targets, buffer

    def _step_done(self, result: tuple) -> bool:
        """After a compiled step (:meth:`OnlineLearner.learn`'s ``(status, next_row,
        outcome)``): record the rows it mapped and grow what it asked for; True when the
        example was learned, False when the step must be called again."""
        if KERNEL_ERRORS.caught:
            raise self._state.kernel_exception()
        status, next_row, outcome = result
        cache = self._state.cache
        store = self._state.store
        fmap = store.feature_map
        fmap.next_row = next_row  # (features mapped before a stop keep their rows)
        if next_row > store.n_rows:
            store.n_rows = next_row
        if outcome.failed:
            raise self._state.kernel_failure()
        if status or not (outcome.processed or not outcome.need_room):
            cache.learner = None  # (it holds the arrays about to grow: they grow in place)
        if status == GROW_MAP:
            fmap.grow()
        elif status == GROW_ROWS:
            store.reserve_rows(next_row)
        elif status == GROW_QUEUE:
            cache.learner_queue = 2 * outcome.need_queue
            cache.learner = None  # bound again, with the room
        elif outcome.processed or not outcome.need_room:
            return True
        else:
            store.reserve_links(outcome.need_room)
        return False

    def _finish_example(self, outcome: Any, targets: np.ndarray, scores: np.ndarray) -> Any:
        """The bookkeeping after an example was learned."""
        mistakes, updates, overflows = outcome.mistakes, outcome.updates, outcome.overflows
        underflows, nonfinite, seen = outcome.underflows, outcome.nonfinite, outcome.seen
        state = self._state
        store = state.store
        if nonfinite:
            from snowpy.exceptions import NumericalError

            raise NumericalError(f"rule {self.rule!r} produced NaN; check its parameters "
                                 f"{np.asarray(state.kernel.params).tolist()}")
        store.seen = seen
        state.n_examples_seen += 1
        if not state.online:  # one entry of mistakes_ for a run of learn_one calls
            state.mistakes.append(0)
            state.updates.append(0)
            state.online = True
        if mistakes:
            state.mistakes[-1] += mistakes
        if updates:
            state.updates[-1] += updates
            state.cache.invalidate()
            if state.kernel.refresh is not None:
                state.planes_stale = True
                state.stale_examples += 1
            if underflows:
                state.underflows += underflows
        if scores.shape[0]:
            state.progressive.add_one(scores, targets)
            # (here, not when predicting: predictions change nothing)
            refresh_progressive(self, state.progressive, state.labels)
        if overflows:
            state.overflows += overflows
            warnings.warn(f"{overflows} weight updates exceeded the largest magnitude kept "
                          f"({store.max_magnitude:g}) and were clamped", NumericalWarning,
                          stacklevel=4)
        return self
