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

from snowpy._jit import jit
from snowpy._lazy import lazy_module
from snowpy.exceptions import ConfigurationError
from snowpy.network.calibrating import refresh_progressive
from snowpy.network.fastpath import (
    GROW_MAP,
    GROW_QUEUE,
    GROW_ROWS,
    learn_example,
    pack,
    score_example,
)
from snowpy.network.labels import normalise_label
from snowpy.network.links import ONLINE_WIDTH
from snowpy.network.refreshing import ensure_fresh
from snowpy.network.training import KERNEL_ERRORS, NumericalWarning, separator
from snowpy.records.kernels import kernel_handle

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp
else:
    sp = lazy_module("scipy.sparse")

__all__ = ["ONLINE_WIDTH", "OnlineLearning", "parse_example"]


_COLLECTIONS = (list, tuple, set, frozenset)
_NO_SCORES = np.empty((0, 0), dtype=np.float64)


@jit
def _checked(ids, vals):  # pragma: no cover - compiled
    """Sort an example by id (insertion sort: examples are short); 0 when fine, else
    1 (a negative id or a non-finite strength) or 2 (an id twice)."""
    for a in range(1, ids.shape[0]):
        b = a
        while b > 0 and ids[b - 1] > ids[b]:
            ids[b - 1], ids[b] = ids[b], ids[b - 1]
            vals[b - 1], vals[b] = vals[b], vals[b - 1]
            b -= 1
    for k in range(ids.shape[0]):
        if ids[k] < 0 or not np.isfinite(vals[k]):
            return 1
        if k and ids[k] == ids[k - 1]:
            return 2
    return 0


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
    problem = _checked(ids, vals)
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
    _engine_args: Any
    _score_args: Any
    _fast: Any
    _fast_key: int
    _fast_map_key: int
    _fast_width: int
    _fast_queue: int
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
        """The label of one example (a tuple of labels for a multi-label network)."""
        return self._label_of(*self._score_example(*parse_example(x)))

    def predict_proba_one(self, x: Any) -> dict[Any, float]:
        """The calibrated probability of each label for one example, a dict.

        With ``calibrate="progressive"`` the sigmoids follow the stream: fitted
        on the scores examples got before they were learned, refitted by the
        learning as the window grows (every 8 examples at first, then whenever
        a tenth more came).
        """
        scores, _ = self._score_example(*parse_example(x))
        return self._probabilities_of(scores)

    def learn_many(self, X: Any, y: Sequence[Any]) -> Any:
        """Learn a mini-batch in order (River's name for :meth:`partial_fit`)."""
        return self.partial_fit(X, y)

    def predict_many(self, X: Any) -> Any:
        """The labels of a mini-batch (River's name for :meth:`predict`)."""
        return self.predict(X)

    # ----------------------------------------------------------------- paths
    def _fast_arrays(self, width: int = 0) -> Any:
        """The network's arrays as one compiled argument, repacked when one was replaced
        or when the workspace is narrower than ``width`` features."""
        store = self._store
        if store.generation != self._fast_key or store._map.generation != self._fast_map_key \
                or width > self._fast_width:
            if width > self._fast_width:
                self._fast_width = max(width, 2 * self._fast_width, 256)
            self._fast_queue = max(self._fast_queue, 16 * (self._fast_width + 1))
            self._fast = pack(store, self._target_counts(), self.kernel_.params,
                              self._fast_width, self._fast_queue)
            self._fast_key, self._fast_map_key = store.generation, store._map.generation
        return self._fast

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
        best = score_example(self._fast_arrays(), ids, vals, float(store.seen), *constants,
                             out)
        return out, best

    def _engine_arguments(self) -> tuple[Any, tuple]:
        """The kernel's handle and the engine's arguments that do not change from one
        example to the next."""
        cached = self._engine_args
        if cached is None:  # (reset when the network is created or loaded)
            KERNEL_ERRORS.watch()  # a kernel's exceptions fail the example (_step_done)
            store, kernel, params = self._store, self.kernel_, self.rule_params_
            cached = self._engine_args = kernel_handle(kernel.compiled), (
                store.policy_code, store.min_count, bool(kernel.multiplicative),
                store.min_magnitude, store.max_magnitude, float(params["theta"]),
                *separator(self), self._bias_strength(), bool(self.multilabel_),
                self.multiclass == "constraint")
        return cached

    def _learn_example(self, ids: np.ndarray, vals: np.ndarray, y: Any,
                       width: int | None = None) -> Any:
        """Learn one checked example (ids sorted, unique, >= 0). A network it starts
        has ``width`` features (the caller then knows the ids are below it), or with
        none an open feature space: any id below :data:`ONLINE_WIDTH`,
        ``n_features_in_`` one past the largest seen. (The one-example path: every
        line here costs on every example.)"""
        targets, scores = self._begin_example(ids, y, width)
        store = self._store
        kernel, constants = self._engine_arguments()
        while True:
            result = learn_example(self._fast_arrays(ids.size), kernel, ids, vals, targets,
                                   store._map.next_row, *constants, store.seen, scores)
            if self._step_done(result):
                return self._finish_example(result, targets, scores)

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
        return targets, np.empty((1, store.S.shape[0]))

    def _step_done(self, result: tuple) -> bool:
        """After a compiled step (:func:`~snowpy.network.fastpath.learn_example`'s
        figures): record the rows it mapped and grow what it asked for; True when the
        example was learned, False when the step must be called again."""
        if KERNEL_ERRORS.caught:
            raise KERNEL_ERRORS.failure(self)
        store = self._store
        fmap = store._map
        status, next_row = result[0], result[1]
        fmap.next_row = next_row  # (features mapped before a stop keep their rows)
        if next_row > store.n_rows:
            store.n_rows = next_row
        if status == GROW_MAP:
            fmap._grow()
        elif status == GROW_ROWS:
            store._reserve_rows(next_row)
        elif status == GROW_QUEUE:
            self._fast_queue = 2 * result[9]
            self._fast_key = -1  # repack
        elif result[2] or not result[9]:  # processed, or no room asked for
            return True
        else:
            store.reserve_links(result[9])
        return False

    def _finish_example(self, result: tuple, targets: np.ndarray, scores: np.ndarray) -> Any:
        """The bookkeeping after an example was learned."""
        _, _, _, mistakes, updates, overflows, underflows, nonfinite, seen, _ = result
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
            positives = np.zeros((1, store.n_targets), dtype=bool)
            positives[0, targets] = True
            self._progressive.add(scores, positives)
            refresh_progressive(self)  # here, not when predicting: predictions change nothing
        if overflows:
            self.overflows_ += overflows
            warnings.warn(f"{overflows} weight updates exceeded the largest magnitude kept "
                          f"({store.max_magnitude:g}) and were clamped", NumericalWarning,
                          stacklevel=4)
        return self
