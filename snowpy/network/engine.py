"""The engine of a :class:`~snowpy.Network`: what it has learned, and what is done to it.

An :class:`Engine` holds the learned state (the link store, the labels, the rule
and its resolved parameters, the counters, the progressive window, the sigmoids)
and the operations on it: :meth:`~Engine.learn` a block of examples,
:meth:`~Engine.prune` the links, refresh a rule's derived planes, and
:meth:`~Engine.to_arrays` for the model file. The estimator (``Network``) keeps its
parameters, checks them once per fit, builds an engine and hands it blocks; loading
a model builds the engine through the same constructor.

:meth:`Engine.learn` runs the compiled epoch (:func:`snowpy._core.engine.run`),
which takes four objects, as scikit-learn's ``_plain_sgd`` takes a weight vector, a
data set and a loss: the pool's ``Links``, the ``RuleBinding`` (the rule's C
function, its numbers, planes and state), the ``Options`` (link policy, threshold,
thick separator, bias...) and the examples; it returns an ``Outcome``. The rule's
update is a C function of one ABI (:mod:`snowpy.rules.kernels`) called through a
pointer: one loop serves every rule, built-in or third-party, at the same speed,
with no Python or pluggy call per example.

Per example ``i`` (in the order given):

1. gather the active rows and strengths, the bias first (with its strength)
   when on; count the rows' activity when eligibility needs it (SNoW ``-e``);
   a row is *eligible* once its count reaches ``min_count``;
2. the activation of every target from its links: ``absent * sum_k v_k +
   sum_k v_k * sum_{links of r_k} (w - absent)``, where ``absent`` is the
   effective weight of a missing link (0 for ``positive``, the initial
   effective weight otherwise);
3. the network's prediction before learning (winner-take-all over the
   allowed targets, or for multi-label networks every target at or above
   ``theta``) and whether it was a mistake;
4. create links (SNoW's sparse network): with ``positive`` every eligible
   active row is linked to each target the example is positive for, with
   ``all`` to every target it is shown to; a new link's initial weight joins
   the target's activation from here on (the prediction was made without
   it: the example's label must not leak into it);
5. for every allowed target, SNoW's test: a positive example needs
   ``activation >= theta + thickness``, a negative one ``activation < theta -
   negative_thickness``; otherwise the target's weights on the example's
   eligible rows are gathered (a missing link at its initial weights with
   ``touched``; skipped with ``positive``) and the rule's kernel updates them.
   With ``constraint`` (SNoW's constraint classification, ``-O +``) the test
   is relative: every other allowed target whose activation is at least the
   true target's minus the thickness is demoted, and the true target
   promoted once if there was any;
6. the updated weights are checked and written back: magnitudes clamped into
   ``[min_magnitude, max_magnitude]`` (a multiplicative rule's weight that
   reached zero is raised to the floor: an underflow), counted, never
   silent; NaN stops the epoch. ``touched`` creates the link of a weight the
   update changed. Averaged weights are kept with the usual trick ``U +=
   c * delta``, so that the average is ``W - U / c``.

Nothing is searched for. A dense row (linked to every target, in target order:
:mod:`snowpy.network.links`) holds target ``t``'s link at offset ``t``, and is
scored as a plain vector. The links of the other rows that belong to the targets
an example needs are threaded onto a list per target in one pass, so creating a
target's missing links and gathering its weights walk that target's links of the
example and nothing else.

The pool must have room for the links an example may create; when it has not, the
epoch stops before that example and reports the room it needs
(``Outcome.need_room``): :meth:`Engine.learn` grows the pool and continues from
there, so a model trained in chunks is the model trained at once.
"""

from __future__ import annotations

import math
import warnings
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from snowpy._core.engine import Options, Outcome, RuleBinding, run
from snowpy._core.merging import Mixing
from snowpy._core.scoring import score_rows
from snowpy._lazy import lazy_module
from snowpy._rows import Rows
from snowpy._validation import on_threads
from snowpy._core.online import GROW_MAP, GROW_QUEUE, GROW_ROWS, OnlineLearner
from snowpy.exceptions import CalibrationWarning, ConfigurationError, NumericalError, PluginError
from snowpy.network.calibrating import fit_progressive, refresh_progressive
from snowpy.network.labels import (
    COLLECTIONS,
    LabelIndex,
    encode_labels,
    normalise_label,
    positive_matrix,
    refuse_label_kind,
)
from snowpy.network.links import ONLINE_WIDTH, TOUCHED, USED, LinkStore, exact_layout
from snowpy.network.training import (
    KERNEL_ERRORS,
    NumericalWarning,
    checking_kernels,
    chunks,
    example_keys,
    keyed_order,
    refresh_points,
    run_epochs,
)
from snowpy.progress import Progress, as_progress
from snowpy.rules.spec import RuleKernel, RuleSpec

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp
else:
    sp = lazy_module("scipy.sparse")

__all__ = ["INFERENCE_ONLY", "ONLINE_REFRESH_LINKS", "Block", "Blocks", "Engine", "EngineCache",
           "OneExample", "Part"]

#: Why a network loaded from an inference-only model file learns nothing more.
INFERENCE_ONLY = ("this network was loaded from an inference-only model file: it keeps no "
                  "training state to continue from; train afresh with fit, or keep a full "
                  "model file (saved without inference_only) to continue training")

#: A piece of at most this many examples is learned by its parts in turn on the calling
#: thread (a mini-batch of ``partial_fit``): handing it to the threads costs more.
FEW = 32
#: Active features per feature of the network below which a fit's examples are not
#: learned in shards (:meth:`Engine.shards`): copying and mixing cost what the links
#: hold, learning what the examples hold. 3 epochs of constraint classification of
#: 360,000 synthetic documents on 2 threads: with 1-2 grams (9.5 active features per
#: feature) the whole command took 6.2-6.5 s in shards against 6.4-6.9 s on one thread,
#: and 1.85 GB against 1.15; with unigrams (far more) the epochs took 0.50 s in shards
#: against 0.86 s, mixing 0.03 s (docs/benchmarks.md).
REDUNDANT = 12

#: One-example predictions refresh a rule's derived planes after (pool slots / this)
#: examples learned: every example while the network is small, and never more than
#: that many link updates an example on average (20 Newsgroups as a stream with Naive
#: Bayes: more than ten minutes when every prediction refreshed).
ONLINE_REFRESH_LINKS = 20_000

#: Active features below which a batch is scored on the calling thread alone.
_SCORED_APART = 1 << 16

_NONE_INT = np.empty(0, dtype=np.int64)
_NONE_TARGETS = np.empty(0, dtype=np.int32)
_NO_SCORES = np.empty((0, 0), dtype=np.float64)


class Block:
    """A block of encoded examples: what :meth:`Engine.learn` takes.

    ``X`` (CSR, or :class:`~snowpy._rows.Rows`), the pool rows of its columns, the
    labels as targets (``y_indptr``, ``y_targets``), the targets each example may be
    shown to (``a_indptr``, ``a_targets``; None: every target) and the examples'
    shuffling keys, when the caller has better ones than the features give
    (SnowClassifier: from the texts).
    """

    def __init__(self, X: sp.csr_matrix, rows: np.ndarray, y_indptr: np.ndarray,
                 y_targets: np.ndarray, a_indptr: np.ndarray | None = None,
                 a_targets: np.ndarray | None = None, keys: np.ndarray | None = None) -> None:
        self.X = X
        self.keys = keys
        self.rows = rows
        self.indptr = X.indptr.astype(np.int64, copy=False)
        #: the strengths, None for binary rows (the engine reads 1)
        self.vals = X.strengths if isinstance(X, Rows) else X.data
        self.y_indptr = y_indptr
        self.y_targets = y_targets
        self.a_indptr = _NONE_INT if a_indptr is None else a_indptr
        self.a_targets = _NONE_TARGETS if a_targets is None else a_targets
        self.n = X.shape[0]
        self.nnz = int(self.indptr[-1]) if self.n else 0
        self.max_active = int(np.diff(self.indptr).max()) if self.n else 0

    def positives(self, order: np.ndarray, n_targets: int) -> np.ndarray:
        """``bool[len(order), n_targets]``: the targets each example of ``order`` is
        positive for (:func:`~snowpy.network.labels.positive_matrix` of their labels)."""
        counts = np.diff(self.y_indptr)[order]
        indptr = np.concatenate([[0], np.cumsum(counts)])
        taken = np.repeat(self.y_indptr[order] - indptr[:-1], counts) + np.arange(indptr[-1])
        return positive_matrix(indptr, self.y_targets[taken], n_targets)


@runtime_checkable
class Blocks(Protocol):
    """Examples that come a block at a time, as from a feature cache: what
    :meth:`Engine.learn` takes beside a :class:`Block`, and ``Network.fit(blocks)``.
    ``n`` examples and ``nnz`` active features in all, ``width`` columns, every label
    met (``labels``) and whether they are sets (``multilabel``); :meth:`epoch` gives one
    pass's blocks ``(X, y, order)``, each learned in its ``order`` (None: as it stands;
    the engine encodes them: :meth:`Engine.block`)."""

    n: int
    nnz: int
    width: int
    labels: list[Any]
    multilabel: bool

    def epoch(self, salt: int | None) -> Iterator[tuple[Any, Any, np.ndarray | None]]:
        """The blocks of one pass: with a ``salt``, every example in the order of
        :func:`~snowpy.network.training.keyed_order` of its key (across blocks, as one
        block of them all is ordered); without, in the stored order."""
        ...


class OneExample(Protocol):
    """The one-example protocol of every kind's engine (:class:`Engine`, a plugin's
    network's (the kernel Perceptron's ``DualEngine``), a cloud's
    :class:`~snowpy.network.cloud.CloudEngine`): what ``learn_one`` and ``predict_one``
    call, on a network and on a :class:`~snowpy.SnowClassifier`. An example is
    checked already (ids sorted, unique, >= 0: what
    :func:`~snowpy.network.kind.parse_example` gives). An engine without a compiled
    text path takes this class's ``score_text`` and ``learn_text``."""

    labels: LabelIndex
    multilabel: bool
    calibration: Any

    def check_label(self, y: Any) -> None:
        """Refuse ``y`` before a front end counts its example (a refused example
        changes nothing)."""

    def score_one(self, ids: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, int]:
        """The scores of one example per target, and the best target."""
        ...

    def learn_one(self, ids: np.ndarray, vals: np.ndarray, y: Any) -> None:
        """Learn one example."""

    def score_text(self, words: Any, raw: np.ndarray, weigher: Any
                   ) -> tuple[np.ndarray, int] | None:
        """:meth:`score_one` of one text featurised in the same compiled call (``words``
        and ``weigher``: a front end's :meth:`~snowpy.text.Featurizer.one_document`,
        ``raw``: the text's UTF-8 bytes); None when the text needs the two calls (or
        the engine has no compiled text path)."""
        return None

    def learn_text(self, words: Any, raw: np.ndarray, y: Any, weigher: Any = None,
                   serial: int = -1) -> bool:
        """:meth:`learn_one` of one text featurised in the same compiled call (see
        :meth:`score_text`); False when nothing was done."""
        return False

    def label_of(self, scores: np.ndarray, best: int) -> Any:
        """The prediction of one example from its scores and its best target: the best
        target's label, or for a multi-label network the labels of every target at or
        above the threshold (a tuple)."""
        labels = self.labels.labels
        if self.multilabel:
            return tuple(labels[t] for t in np.flatnonzero(scores >= 0))
        return labels[best] if scores.size else None

    def probabilities_of(self, scores: np.ndarray) -> dict[Any, float]:
        """The calibrated probability of each label, from one example's scores."""
        if self.calibration is None:
            raise ConfigurationError(
                "this network has no calibration; train it with calibrate='progressive' "
                "(online) or calibrate='cv' to get probabilities")
        probabilities = self.calibration.probabilities(scores[None, :])[0]
        return dict(zip(self.labels.labels, probabilities.tolist()))


class EngineCache:
    """What is derived from an engine's state and kept only for speed: the effective
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
        #: the one-example path's compiled binding, the generations it was bound at and
        #: the progressive window's scores it writes in
        self.learner: Any = None
        self.learner_key = (-1, -1)
        self.learner_window: np.ndarray | None = None
        self.learner_width = 0
        self.learner_queue = 0

    def invalidate(self) -> None:
        """The weights changed: the effective tables are stale."""
        self.effective.clear()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["learner"] = None
        state["learner_key"] = (-1, -1)
        state["learner_window"] = None
        return state


class Engine(OneExample):
    """What a :class:`~snowpy.Network` has learned, and the operations on it.

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
    bias : float
        The strength of SNoW's fixed feature (0: none).
    constraint : bool
        SNoW's constraint classification (``multiclass="constraint"``).
    percent : float or None
        ``eligibility="percent:p"``: the share of links each target keeps.
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
        The sigmoids from scores to probabilities; ``calibration_due``: the progressive
        window grew since they were fitted.
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
    cache : EngineCache
        What is derived from the rest, for speed.
    """

    _threads: ThreadPoolExecutor | None = None  # (an engine pickled before it had them)

    def __init__(self, spec: RuleSpec, params: dict[str, Any], kernel: RuleKernel,
                 store: LinkStore, labels: LabelIndex, *, multilabel: bool, n_features: int,
                 seed: int | None, rule: str | None = None, bias: float = 1.0,
                 constraint: bool = False, percent: float | None = None,
                 open_features: bool = False, indicator: bool = False,
                 progressive: Any = None) -> None:
        self.spec = spec
        self.rule = spec.name if rule is None else rule
        self.params = params
        self.kernel = kernel
        self._store = store
        #: the parts the targets are being learned in, on threads, not put together yet
        #: (:attr:`store` puts them together when it is read), and their threads (kept
        #: with them: a stream's next block is learned on the same threads)
        self._parts: list[Part] | None = None
        self._threads: ThreadPoolExecutor | None = None
        self.labels = labels
        self.multilabel = multilabel
        self.indicator = indicator
        self.bias = float(bias)
        self.constraint = bool(constraint)
        self.percent = percent
        self.n_features = n_features
        self.open_features = open_features
        self.rng = np.random.default_rng(seed)
        self.counts = np.zeros((0, 2), dtype=np.int64)
        self.progressive = progressive
        self._calibration: Any = None
        #: the progressive window grew since its sigmoids were fitted (by a block: they
        #: are fitted again when next asked for)
        self.calibration_due = False
        self.mistakes: list[int] = []
        self.updates: list[int] = []
        self.n_examples_seen = 0
        self.overflows = 0
        self.underflows = 0
        self.online = False
        self.planes_stale = False
        self.stale_examples = 0
        self.cache = EngineCache()

    @property
    def store(self) -> LinkStore:
        """The links and their weights (the parts of a network learning on threads are
        put together first: a stream's blocks are learned in parts, joined when read)."""
        if self._parts is not None:
            parts, self._parts = self._parts, None
            self._stop_threads()
            _merge(self, self._store, parts)
        return self._store

    def _stop_threads(self) -> None:
        """The parts' threads let go (they are idle between blocks)."""
        if self._threads is not None:
            self._threads.shutdown()
            self._threads = None

    @property
    def n_targets(self) -> int:
        """The target nodes."""
        return self._store.n_targets

    @property
    def frozen(self) -> bool:
        """Loaded from an inference-only model file: no training state to go on from."""
        return self._store.frozen

    def rows_of(self, X: Any) -> np.ndarray:
        """The pool rows of ``X``'s columns, rows made for features not seen yet (in the
        parts, when the targets learn in parts)."""
        rows = self._store.training_rows(X, room=self._parts is None)
        for part in self._parts or ():
            part.store.reserve_rows(self._store.n_rows)
            part.store.n_rows = self._store.n_rows
        return rows

    def block(self, X: Any, y: Any, targets: Any = None, keys: np.ndarray | None = None
              ) -> Block:
        """``X`` and its labels ``y`` as a :class:`Block` of this engine: rows made for
        features not seen yet, labels numbered as targets (a label not seen yet is added
        to the labels; :meth:`add_targets` makes its target), ``targets`` (per example,
        the only labels it is shown to) likewise."""
        y_indptr, y_targets = encode_labels(self.labels, y, self.multilabel)
        a_indptr = a_targets = None
        if targets is not None:
            a_indptr, a_targets = self.labels.encode(targets, multilabel=True)
        return Block(X, self.rows_of(X), y_indptr, y_targets, a_indptr, a_targets, keys)

    def add_targets(self, count: int) -> None:
        """``count`` more target nodes (a label met for the first time). Targets added
        after a cv or holdout calibration get a provisional sigmoid (the median of the
        others), with a warning: probabilities stay available, and say little of the new
        labels until the network is calibrated again."""
        self.store.add_targets(count)  # (the parts, if any, put together first)
        calibration = self._calibration
        if self.progressive is not None or calibration is None:
            return  # (progressive sigmoids are refitted as the stream goes)
        n_targets = len(self.labels)
        if calibration.a.size < n_targets:
            new = [str(label) for label in self.labels.labels[calibration.a.size:]]
            self._calibration = calibration.extended(n_targets)
            warnings.warn(
                f"label(s) {', '.join(new[:5])}{' ...' if len(new) > 5 else ''} came after "
                f"calibrating: they get the other labels' median sigmoid until the model is "
                "calibrated again (trained again; trained with calibrate='progressive', its "
                "sigmoids follow the stream)", CalibrationWarning, stacklevel=4)

    @property
    def calibration(self) -> Any:
        """The sigmoids from scores to probabilities, or None (progressive sigmoids that
        blocks of a stream left behind are fitted again here, when they are asked for,
        from the window alone: what they are does not depend on when they were asked)."""
        if self.calibration_due:
            self.calibration_due = False
            if self.progressive.filled:
                fit_progressive(self, self.progressive, warm=False)
        return self._calibration

    @calibration.setter
    def calibration(self, calibration: Any) -> None:
        self._calibration = calibration

    def __getstate__(self) -> dict[str, Any]:
        self.store  # (the parts put together: a network is pickled whole)  # noqa: B018
        return self.__dict__.copy()  # (no threads: they go with the parts)

    def target_counts(self) -> np.ndarray:
        """Promotions and demotions per target, ``int64[targets, 2]``, grown to every
        target; the engine adds to it in place."""
        n_targets = self._store.n_targets
        if self.counts.shape[0] < n_targets:
            grown = np.zeros((n_targets, 2), dtype=np.int64)
            grown[:self.counts.shape[0]] = self.counts
            self.counts = grown
        return self.counts

    # ------------------------------------------------------------- the rule, bound
    def binding(self, store: LinkStore | None = None) -> RuleBinding:
        """The rule as the compiled loops apply it to the pool (its kernel, numbers,
        planes, initial and absent weights, per-target state) of ``store`` (the
        network's, or one part's)."""
        store = self.store if store is None else store
        try:
            return RuleBinding(self.kernel.compiled, np.asarray(self.kernel.params),
                               np.asarray(store.planes, dtype=np.float64),
                               store.initial_weights, store.absent_planes, store.S,
                               store.dtype == np.float32, checking_kernels())
        except (TypeError, ValueError) as exc:  # a plugin's planes or weights, mis-shaped
            raise PluginError(f"rule {self.rule!r}: {exc}") from exc

    def options(self) -> Options:
        """How the engine trains, as the compiled loops read it."""
        store = self._store
        if self.kernel.mistake_driven:
            thick = (float(self.params["thickness"]), float(self.params["negative_thickness"]))
        else:  # an update on every example
            thick = (math.inf, math.inf)
        return Options(store.policy_code, store.min_count, bool(self.kernel.multiplicative),
                       store.min_magnitude, store.max_magnitude, float(self.params["theta"]),
                       *thick, self.bias, bool(self.multilabel), self.constraint)

    def kernel_failure(self) -> PluginError:
        """The error of a rule whose step returned non-zero (a Python rule's exception is
        its cause)."""
        kernel = self.kernel.compiled
        error, kernel.error = kernel.error, None
        what = f"raised {type(error).__name__}: {error}" if error is not None else \
            "returned an error"
        failure = PluginError(f"the update kernel of rule {self.rule!r}{_provided(self.rule)} "
                              f"{what}; training stopped")
        failure.__cause__ = error
        return failure

    def kernel_exception(self) -> PluginError:
        """The error of a rule whose compiled step raised (collected by
        :data:`~snowpy.network.training.KERNEL_ERRORS`)."""
        first, count = KERNEL_ERRORS.take()
        return PluginError(f"the update kernel of rule {self.rule!r}{_provided(self.rule)} "
                           f"raised {type(first).__name__}: {first} ({count} time(s)); "
                           "training stopped")

    # ------------------------------------------------- one example at a time
    # (River's path: every line here costs on every example)
    def check_label(self, y: Any) -> None:
        """Refuse ``y`` before a front end counts its example: a label of the other kind
        than the network learned (a collection of labels for a single-label network, one
        label for a multi-label one), or any label for a network loaded from an
        inference-only model file; a refused example changes nothing."""
        refuse_label_kind(self.multilabel, y)
        if self._store.frozen:
            raise ConfigurationError(INFERENCE_ONLY)

    def _online_learner(self, width: int = 0) -> OnlineLearner:
        """What the one-example path needs, bound once (:class:`OnlineLearner`): bound
        again when the store, the feature map or the progressive window replaced an
        array, or for an example wider than the workspace."""
        store, cache = self.store, self.cache
        learner = cache.learner
        window = self.progressive
        if learner is not None and width <= cache.learner_width and \
                cache.learner_key == (store.generation, store.feature_map.generation) and \
                (window is None or window.scores is cache.learner_window):
            return learner
        key = (store.generation, store.feature_map.generation)
        if learner is None:
            KERNEL_ERRORS.watch()  # a numba kernel's exceptions fail the example
        if width > cache.learner_width:
            cache.learner_width = max(width, 2 * cache.learner_width, 256)
        cache.learner_queue = max(cache.learner_queue, 16 * (cache.learner_width + 2))
        fmap = store.feature_map
        slots, row_ids = fmap.arrays
        learner = cache.learner = OnlineLearner(
            store.links(), self.binding(), self.options(), slots, row_ids,
            self.target_counts(), cache.learner_width, cache.learner_queue, fmap.direct,
            None if window is None else window.scores,
            None if window is None else window.positives.view(np.uint8))
        cache.learner_key = key
        cache.learner_window = None if window is None else window.scores
        return learner

    def _score_args(self) -> tuple[float, bool, float, float]:
        """The one-example scoring's constants, kept until the network is created or
        loaded again: the missing link's weight, whether weights are rounded to float32,
        the bias strength, theta."""
        store = self.store
        self.cache.score_args = (store.absent, store.dtype != np.float64 and not store.frozen,
                                 self.bias, float(self.params["theta"]))
        return self.cache.score_args

    def score_one(self, ids: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, int]:
        """The scores of one example (``ids`` sorted, unique, checked: what
        :func:`~snowpy.network.kind.parse_example` gives) per target, and the best target.

        >>> import numpy as np, snowpy
        >>> engine = snowpy.Network("perceptron").fit(np.eye(2), ["a", "b"]).engine_
        >>> engine.label_of(*engine.score_one(np.array([1]), np.array([1.0])))
        'b'
        """
        if self.planes_stale:  # (a rule's derived planes: checked here, on every example)
            self.ensure_fresh(online=True)
        store = self.store
        absent, round32, bias, theta = self.cache.score_args or self._score_args()
        learner = self._online_learner(ids.shape[0])
        out = np.empty(store.n_targets, dtype=np.float64)
        best = learner.score(ids, vals, float(store.seen), absent, round32, bias, theta, out)
        return out, best

    def score_text(self, words: Any, raw: np.ndarray, weigher: Any
                   ) -> tuple[np.ndarray, int] | None:
        """:meth:`score_one` of one text featurised, weighed (``weigher``: by document
        frequency, None: as assembled) and scored in one compiled call
        (:meth:`snowpy._core.online.OnlineLearner.score_text`: ``words`` and ``raw``, a
        front end's :meth:`~snowpy.text.Featurizer.one_document` and the text's UTF-8
        bytes); None when the text needs the two calls (a row wider than the workspace,
        invalid bytes)."""
        if self.planes_stale:
            self.ensure_fresh(online=True)
        store = self.store
        absent, round32, bias, theta = self.cache.score_args or self._score_args()
        out = np.empty(store.n_targets, dtype=np.float64)
        best = self._online_learner().score_text(words, raw, weigher, float(store.seen),
                                                 absent, round32, bias, theta, out)
        return None if best < 0 else (out, best)

    def learn_one(self, ids: np.ndarray, vals: np.ndarray, y: Any) -> None:
        """Learn one checked example (ids sorted, unique, >= 0:
        :func:`~snowpy.network.kind.parse_example` gives them); an open feature space
        widens to its ids (below :data:`~snowpy.network.links.ONLINE_WIDTH`)."""
        targets, row = self._targets_of(ids, y)
        self._finish_one(self._learn_checked(ids, vals, targets, row), row)

    def learn_text(self, words: Any, raw: np.ndarray, y: Any, weigher: Any = None,
                   serial: int = -1) -> bool:
        """Featurise, weigh and learn one text in one compiled call
        (:meth:`snowpy._core.online.OnlineLearner.learn_text`): ``raw`` its UTF-8 bytes
        (or the row ``words`` made ``serial``-th, if it made none since), ``words`` and
        ``weigher`` as for :meth:`score_text`. False when nothing was done (a text the
        compiled path cannot take): featurise it and call :meth:`learn_one`."""
        targets, row = self._targets_of(None, y)
        store = self.store
        result = self._online_learner().learn_text(
            words, raw, targets, store.feature_map.next_row, store.seen, row, weigher, serial)
        if result is None:
            return False
        status, next_row, outcome, weighed = result
        if not self._step_done((status, next_row, outcome)):
            if weighed is None:
                return False  # (nothing counted: the two calls)
            outcome = self._learn_checked(*weighed, targets, row)  # (counted: learned here)
        self._finish_one(outcome, row)
        return True

    def _learn_checked(self, ids: np.ndarray, vals: np.ndarray, targets: np.ndarray,
                       row: int) -> Any:
        """Learn an example begun (:meth:`_targets_of`), growing what the compiled step
        asks for until it is learned; its outcome."""
        store = self.store
        while True:
            result = self._online_learner(ids.shape[0]).learn(
                ids, vals, targets, store.feature_map.next_row, store.seen, row)
            if self._step_done(result):
                return result[2]

    def _targets_of(self, ids: np.ndarray | None, y: Any) -> tuple[np.ndarray, int]:
        """Check an example about to be learned (``ids`` None: known to fit the network),
        create its labels' targets; ``(targets, the progressive window's row for its
        scores)`` (-1: none)."""
        multilabel = isinstance(y, COLLECTIONS)
        store = self.store
        if store.frozen or multilabel != self.multilabel:
            self.check_label(y)  # (raises)
        if ids is not None and ids.size and ids[-1] >= self.n_features:
            if not (self.open_features and ids[-1] < ONLINE_WIDTH):
                limit = ONLINE_WIDTH if self.open_features else self.n_features
                raise ConfigurationError(
                    f"feature id {int(ids[-1])} is beyond the network's {limit} features")
            self.n_features = int(ids[-1]) + 1
        labels = self.labels
        if multilabel:
            targets = np.unique(np.array([labels.add(normalise_label(label)) for label in y],
                                         dtype=np.int32))
        else:
            target = labels.target_of(y) if type(y) is str else None
            if target is None:
                target = labels.add(normalise_label(y))
            singles = self.cache.single_targets  # one array per target, made once
            while len(singles) <= target:
                singles.append(np.array([len(singles)], dtype=np.int32))
            targets = singles[target]
        if len(labels) > store.S.shape[0]:
            self.add_targets(len(labels) - store.S.shape[0])
        window = self.progressive
        return targets, -1 if window is None else window.row(store.S.shape[0])

    def _step_done(self, result: tuple) -> bool:
        """After a compiled step (:meth:`OnlineLearner.learn`'s ``(status, next_row,
        outcome)``): record the rows it mapped and grow what it asked for; True when the
        example was learned, False when the step must be called again."""
        if KERNEL_ERRORS.caught:
            raise self.kernel_exception()
        status, next_row, outcome = result
        cache = self.cache
        store = self.store
        fmap = store.feature_map
        fmap.next_row = next_row  # (features mapped before a stop keep their rows)
        if next_row > store.n_rows:
            store.n_rows = next_row
        if outcome.failed:
            raise self.kernel_failure()
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

    def _finish_one(self, outcome: Any, row: int) -> None:
        """The bookkeeping after an example was learned (its scores and labels in the
        progressive window's ``row``, -1: none)."""
        mistakes, updates, overflows = outcome.mistakes, outcome.updates, outcome.overflows
        underflows, nonfinite, seen = outcome.underflows, outcome.nonfinite, outcome.seen
        store = self.store
        if nonfinite:
            raise NumericalError(f"rule {self.rule!r} produced NaN; check its parameters "
                                 f"{np.asarray(self.kernel.params).tolist()}")
        store.seen = seen
        self.n_examples_seen += 1
        if not self.online:  # one entry of mistakes for a run of one-example learning
            self.mistakes.append(0)
            self.updates.append(0)
            self.online = True
        if mistakes:
            self.mistakes[-1] += mistakes
        # links may be made without an update (SNoW's positive links), and a row's links
        # move when its block grows: the effective tables index the slots, stale either way
        self.cache.invalidate()
        if updates:
            self.updates[-1] += updates
            if self.kernel.refresh is not None:
                self.planes_stale = True
                self.stale_examples += 1
            if underflows:
                self.underflows += underflows
        if row >= 0:
            window = self.progressive
            window.took(self.cache.learner.low)
            # (here, not when predicting: predictions change nothing)
            refresh_progressive(self, window)
        if overflows:
            self.overflows += overflows
            warnings.warn(f"{overflows} weight updates exceeded the largest magnitude kept "
                          f"({store.max_magnitude:g}) and were clamped", NumericalWarning,
                          stacklevel=4)

    # --------------------------------------------------------------- learning
    def learn(self, data: Block | Blocks, *, epochs: int, shuffle: bool, early_stop: bool,
              progress: Any = None, fresh: bool = True, rank_links: bool = False,
              threads: int = 1, discard: float | None = None) -> None:
        """Run ``epochs`` passes over ``data``, then drop the links ``discard`` calls
        negligible (:meth:`discard`; None: none).

        ``data`` is a :class:`Block`, or :class:`Blocks` that come one at a time (a
        feature cache): the passes are the same, example for example, and so is the
        network learned. With ``shuffle``, each pass goes in the order of the examples'
        keys mixed with a salt drawn from the engine's generator
        (:func:`~snowpy.network.training.keyed_order`).

        ``fresh`` data is counted for eligibility in its first pass, and makes links
        before its updates there (data learned before made them then, as a fit's later
        epochs do not make them again: a cluster's later rounds). With a progressive
        window, the first pass's scores of each example (made before learning it) go to
        the window as they are made. With ``rank_links`` (a :meth:`~snowpy.Network.fit`),
        the links are ranked for ``eligibility="percent:p"`` after the first pass.
        Updates the training figures; warns once about clamped overflows.

        ``threads``: the targets are learned in that many parts at once, each part on
        a thread of its own (:meth:`parts`); the network learned is the same, to the
        bit, for any number.
        """
        if not self.kernel.mistake_driven:
            epochs = min(epochs, 1)  # a counting rule learns each example once (SNoW's -B)
        progress = as_progress(progress)
        try:
            with KERNEL_ERRORS:
                self._learn(data, epochs=epochs, shuffle=shuffle, early_stop=early_stop,
                            progress=progress, fresh=fresh, rank_links=rank_links,
                            threads=threads, discard=discard)
        finally:
            if self.kernel.refresh is not None:
                self.planes_stale = True  # refreshed by the next prediction, save or view

    def parts(self, data: Block | Blocks, threads: int, progress: Any = None,
              epochs: int = 1) -> int:
        """How many parts ``data`` is learned in on ``threads`` threads.

        Under one-vs-all a target sees every example and changes only on its own
        mistakes: the targets are independent learners, and learned apart they learn
        what they learn together (an example's activation of a target is summed over
        its rows in the example's order, and a rule's step sees the target's weights in
        that order too, however the links lie). The parts see the same examples in the
        same order; their activations, put together, give the network's mistakes.

        One part (one thread) when the targets are not independent: SNoW's constraint
        classification (the true target and the winner updated together), a rule whose
        derived planes span its targets (Naive Bayes), examples shown to some targets
        only; for a plugin's rule (its step may keep state across targets); when a
        progress report tests the network every so many examples (SNoW's ``-c k``: the
        parts are put together only at the end); and when the data is small beside
        the network (its features, epochs counted, fewer than a sixteenth of the
        network's links), for splitting the links into parts and putting them together
        would cost more than the threads save. The parts a block was learned in are
        kept for the next (a stream is split once, and put together when its links are
        next read).
        """
        report = as_progress(progress)
        restricted = isinstance(data, Block) and data.a_indptr.shape[0] > 0
        if threads <= 1 or (report is not None and report.every) \
                or self._store.n_targets < 2 or self.constraint \
                or self.kernel.refresh is not None or restricted \
                or self._store.frozen \
                or getattr(self.kernel.compiled, "implementation", "") != "builtin":
            return 1
        if self._parts is not None:
            return len(self._parts)  # (a stream's blocks go on in the parts they were in)
        if 16 * epochs * data.nnz < int(self._store.meta[USED]):
            return 1  # (splitting and joining the links would cost more than it saves)
        return min(int(threads), self._store.n_targets)

    def shards(self, data: Block | Blocks, threads: int, progress: Any = None,
               epochs: int = 1) -> int:
        """How many shards of its examples ``data`` is learned in on ``threads`` threads,
        when its targets cannot share them (else :meth:`parts` splits the targets).

        SNoW's constraint classification updates the true target and the winner
        together, and a network of fewer targets than threads (a binary spam filter on
        many cores) leaves threads idle: then each thread learns a shard of every
        epoch's examples (consecutive runs of the epoch's order) in a copy of the
        network, and the copies are mixed at the end of the epoch (iterative parameter
        mixing, as the cluster's rounds do: :meth:`mix`). The network learned is the same
        for the same number of threads, not for any number, and not the one thread's.

        One shard when the parts are kept from a block before, for data that comes in blocks (a stream, a feature cache: mixed
        after each block, it would cost more than it saves), for the cases :meth:`parts`
        learns on one thread for other reasons than the targets (a rule that derives its
        planes, a plugin's rule, examples shown to some targets only, a progress report
        every so many examples, a frozen network), for eligibility counts (links made as
        counts pass a threshold), and when the examples hold fewer than
        :data:`REDUNDANT` active features per feature of the network: copying and mixing
        the links then costs more than the shards save.
        """
        report = as_progress(progress)
        restricted = isinstance(data, Block) and data.a_indptr.shape[0] > 0
        store = self._store
        if threads <= 1 or not isinstance(data, Block) or self._parts is not None \
                or (report is not None and report.every) or self.kernel.refresh is not None \
                or restricted or store.frozen or store.min_count > 1 \
                or store.lcount.shape[0] or self.percent is not None \
                or getattr(self.kernel.compiled, "implementation", "") != "builtin" \
                or not (self.constraint or store.n_targets < threads):
            return 1
        if data.nnz < REDUNDANT * store.n_rows:
            return 1  # (copying and mixing the links would cost more than it saves)
        return max(1, min(int(threads), data.n // (4 * FEW)))

    def _learn(self, data: Block | Blocks, *, epochs: int, shuffle: bool, early_stop: bool,
               progress: Progress | None, fresh: bool, rank_links: bool, threads: int,
               discard: float | None) -> None:
        store = self._store
        self.target_counts()
        self.online = False  # a later learn_one starts an entry of its own in mistakes_
        overflows = 0
        creating = fresh  # (data learned before made its links then: a cluster's rounds)
        by_percent = self.percent is not None
        # (the examples of a fit are learned in shards when its targets cannot share the
        # threads; a stream's blocks, partial_fit after partial_fit, never are)
        shards = self.shards(data, threads, progress, epochs) if rank_links else 1
        k = self.parts(data, threads, progress, epochs) if shards == 1 else 1
        if self._parts is not None and len(self._parts) != k:
            self.store  # (the parts of other blocks put together first)  # noqa: B018
        parts, self._parts = self._parts or _split(self, store, k), None
        pool, self._threads = self._threads or (
            ThreadPoolExecutor(max_workers=len(parts)) if len(parts) > 1 else None), None
        sharding = Shards(shards) if shards > 1 else None
        keys = None
        if shuffle and isinstance(data, Block):
            keys = data.keys if data.keys is not None \
                else example_keys(data.X, data.y_indptr, data.y_targets)

        def one_epoch(epoch: int) -> int:
            nonlocal overflows, creating
            # the salt drawn whatever the data: a fit and a cache draw alike
            salt = int(self.rng.integers(0, 2**63 - 1, dtype=np.int64)) if shuffle else None
            if isinstance(data, Block):
                passes: Any = [(data, keyed_order(keys, salt) if keys is not None and
                                salt is not None else np.arange(data.n, dtype=np.int64))]
            else:
                passes = ((self.block(X, y), np.arange(X.shape[0], dtype=np.int64)
                           if order is None else order.astype(np.int64, copy=False))
                          for X, y, order in data.epoch(salt))
            counting, recording = fresh and epoch == 0, \
                epoch == 0 and self.progressive is not None
            if sharding is not None:
                block, order = passes[0]
                mistakes, updates, epoch_overflows = sharding.epoch(
                    self, block, order, epoch, progress, counting=counting,
                    creating=creating, recording=recording)
            else:
                mistakes, updates, epoch_overflows = self._epoch(
                    parts, pool, passes, data.n, epoch, progress, counting=counting,
                    creating=creating, recording=recording)
            overflows += epoch_overflows
            self.mistakes.append(mistakes)
            self.updates.append(updates)
            if epoch == 0 and rank_links and by_percent:
                for part in parts:
                    self.keep_top_percent(part.store)
            # the same examples cannot call for new links again, unless eligibility let
            # rows in during the pass (or links were dropped by eligibility "percent:p")
            creating = store.policy_code == TOUCHED or (store.min_count > 1 and not by_percent)
            return updates

        try:
            run_epochs(epochs, early_stop, one_epoch)
        finally:  # an interrupted training still leaves a consistent network
            if sharding is not None:
                sharding.close()
            if pool is not None:  # (put together when the links are read)
                self._parts, self._threads = parts, pool
            self.cache.invalidate()
        self.discard(discard, averaged=store.average)  # (by the parts, at once)
        if rank_links:
            self.store  # (a fit's parts put together now)  # noqa: B018
        if overflows:
            self.overflows += overflows
            warnings.warn(
                f"{overflows} weight updates exceeded the largest magnitude kept "
                f"({store.max_magnitude:g}) and were clamped; use milder promotion/demotion, "
                "or a bias strength closer to the feature strengths",
                NumericalWarning,
                stacklevel=4,
            )

    def _epoch(self, parts: list[Part], pool: ThreadPoolExecutor | None,
               passes: Iterable[tuple[Block, np.ndarray]], total: int, epoch: int,
               progress: Progress | None, *, counting: bool, creating: bool,
               recording: bool) -> tuple[int, int, int]:
        """One pass: each block's examples in its ``order`` (in chunks when reporting
        progress), each part on a thread of its own; with ``recording``, each example's
        scores before learning it go to the progressive window."""
        mistakes = updates = overflows = done = 0
        n_targets = self._store.n_targets
        # a rule that derives its scores (Naive Bayes) predicts each example from the
        # counts refreshed when the examples seen reached 1, 2, 4, 8...: log2(n)
        # refreshes of the links over a stream, however it is cut into calls
        refreshing = self.kernel.refresh is not None
        options = self.options()
        for part in parts:
            part.bind(self)
        for block, order in passes:
            for part in parts:
                part.labels_of(block)
            if refreshing and progress is None:
                cuts = refresh_points(self.n_examples_seen, order.size)
                pieces = list(zip([0] + cuts, cuts + [order.size]))
            else:
                pieces = chunks(order.size, progress is not None,
                                None if progress is None else progress.every)
            if pool is not None:  # (the parts' activations of a piece: 32 MB at most)
                pieces = _cut(pieces, max(1, (1 << 22) // n_targets))
            for start, stop in pieces:
                seen_before = int(self.n_examples_seen)
                piece = order[start:stop]
                scores = np.empty((stop - start, n_targets), dtype=np.float64) \
                    if recording else _NO_SCORES
                if pool is None:
                    outcomes = [parts[0].run(self, block, piece, options, counting, creating,
                                             scores, None)]
                    chunk_mistakes = outcomes[0].mistakes
                else:  # (a few examples: the parts in turn, here, cost less than threads)
                    activations = np.empty((stop - start, n_targets), dtype=np.float64)
                    outcomes = list((map if stop - start <= FEW else pool.map)(
                        lambda part: part.run(self, block, piece, options, counting,
                                              creating, scores, activations), parts))
                    chunk_mistakes = _mistakes(activations, block, piece, self.multilabel,
                                               float(self.params["theta"]))
                for outcome in outcomes:
                    updates += outcome.updates
                    overflows += outcome.overflows
                    self.underflows += outcome.underflows
                self.n_examples_seen += outcomes[0].examples
                if recording:
                    self.progressive.add(scores, block.positives(piece, n_targets))
                    self.calibration_due = True  # (fitted when next asked for)
                if refreshing and \
                        int(self.n_examples_seen).bit_length() > seen_before.bit_length():
                    self.refresh_planes()  # (the examples seen reached a power of two)
                    parts[0].bind(self)
                mistakes += chunk_mistakes
                if progress is not None:
                    self.cache.invalidate()
                    progress(epoch, done + stop, total, chunk_mistakes)
            done += order.size
        return mistakes, updates, overflows

    # --------------------------------------------------------------- derived planes
    def refresh_planes(self) -> None:
        """Call the rule's ``refresh`` on every live link and write the planes back
        (a rule that is not a sum of independently updated weights, Naive Bayes, keeps
        what it learns in planes of coefficient 0 and derives the planes that score)."""
        self.planes_stale = False
        self.stale_examples = 0
        refresh = self.kernel.refresh
        store = self.store
        if refresh is None or store.frozen:
            return
        live = store.live_slots()
        W = store.W[live].astype(np.float64)
        target = store.target[live].astype(np.int64)
        bias_end = store.start[0] + (store.cap[0] if store.dense[0] else store.size[0]) \
            if store.n_rows else 0
        in_bias = (live >= (store.start[0] if store.n_rows else 0)) & (live < bias_end)
        bias = np.where(in_bias, self.bias, 0.0)
        refresh(W, target, bias, store.S, self.kernel.params)
        if not np.all(np.isfinite(W)):
            raise NumericalError(f"rule {self.rule!r}: refresh produced non-finite weights")
        store.W[live] = W.astype(store.W.dtype)
        self.cache.invalidate()

    def ensure_fresh(self, *, online: bool = False) -> None:
        """Refresh when training left the derived planes behind; ``online`` (a prediction
        of one example), only once enough examples were learned since the last refresh."""
        if not self.planes_stale:
            return
        if online and self.stale_examples < int(self.store.meta[USED]) // ONLINE_REFRESH_LINKS:
            return
        self.refresh_planes()

    def effective_delta(self, averaged: bool, threads: int = 1) -> np.ndarray:
        """Per pool slot, the link's prediction weight minus a missing link's (cached;
        computed on ``threads``)."""
        self.ensure_fresh()
        cached = self.cache.effective.get(averaged)
        if cached is None:
            cached = self.cache.effective[averaged] = self.store.effective(averaged=averaged,
                                                                          threads=threads)
        return cached

    def scores(self, X: Any, *, averaged: bool, table: bool | None = None,
               threads: int = 1) -> np.ndarray:
        """Activation minus threshold of every target, ``float64[n, targets]``, for the
        rows of ``X`` (CSR, or :class:`~snowpy._rows.Rows`): target ``t``'s on an example
        with strengths ``v_k`` on rows ``r_k`` (the bias first, with its strength) is

            absent * sum_k v_k + sum_k v_k * sum_{links j of r_k} E[j] - theta

        where ``E[j]`` is link ``j``'s effective weight minus the absent weight; a feature
        never seen in training and a missing link weigh the absent weight. The cost is
        that of the active features' links, whatever the number of targets. ``table``:
        read ``E`` from a table of every link's (:meth:`effective_delta`, kept for the
        next call), or compute each link's as it is read (a few documents of a large
        model read a sliver of it); None: the table when one is kept, or when ``X``
        reads a good share of the network's rows. ``threads``: the examples scored in
        that many runs at once (each example's sums are the same)."""
        store = self.store
        effective = self.cache.effective.get(averaged)
        if table is None:
            table = effective is not None or int(X.indptr[-1]) * 8 >= store.n_rows
        if table:
            effective = self.effective_delta(averaged, threads)
        else:
            effective = None
            self.ensure_fresh()  # (a rule's derived weights, as a table would hold them)
        rows = store.prediction_rows(X)
        out = np.empty((X.shape[0], store.n_targets), dtype=np.float64)
        vals = X.strengths if isinstance(X, Rows) else X.data
        W, U, seen, planes, averaging, round32, absent = store.weighing(averaged=averaged)
        if effective is not None:
            W, U = W[:0], U[:0]
        theta = float(self.params["theta"])
        indptr = X.indptr
        n = X.shape[0]
        runs = min(threads, n) if int(indptr[-1]) >= _SCORED_APART else 1
        cuts = np.searchsorted(indptr, np.arange(1, runs) * indptr[-1] // runs).tolist()
        on_threads(lambda span: score_rows(
            indptr[span[0]:span[1] + 1], rows, vals, store.rows, store.target, effective, W, U,
            seen, planes, averaging, round32, absent, self.bias, theta, out[span[0]:span[1]]),
            list(zip([0, *cuts], [*cuts, n])), runs)
        return out

    # --------------------------------------------------------------- views
    @property
    def promotions(self) -> np.ndarray:
        """Per target, the updates made on examples positive for it."""
        return self.target_counts()[:, 0].copy()

    @property
    def demotions(self) -> np.ndarray:
        """Per target, the updates made on examples negative for it."""
        return self.target_counts()[:, 1].copy()

    def link_weights(self, columns: Any) -> tuple[np.ndarray, np.ndarray]:
        """The weight of the link from each feature (column of ``X``; ``-1``: the bias) to
        every target as prediction uses it, ``float64[len(columns), targets]``, and
        whether each is a link of its own (False: a missing link, or a feature never seen,
        weighing ``store.absent``). A score is ``sum(strength * weight) - theta`` over the
        bias and the active features: what :meth:`snowpy.SnowClassifier.explain` lays
        out.

        >>> from snowpy import Network
        >>> import scipy.sparse as sp
        >>> net = Network("perceptron", epochs=1, calibrate=None).fit(
        ...     sp.csr_matrix([[1.0, 0.0], [0.0, 1.0]]), ["a", "b"])
        >>> weights, linked = net.engine_.link_weights([-1, 0])  # the bias, then feature 0
        >>> weights.tolist(), linked.tolist()
        ([[-0.05, -0.05], [0.0, -0.1]], [[True, True], [False, True]])
        >>> (weights[0] + weights[1]).tolist(), net.target_scores(sp.csr_matrix([[1.0, 0.0]]))
        ([-0.05, -0.15], array([[-0.05, -0.15]]))
        """
        columns = np.asarray(columns, dtype=np.int64)
        store = self.store
        delta = self.effective_delta(store.average)
        weights = np.full((columns.size, store.n_targets), float(store.absent))
        linked = np.zeros((columns.size, store.n_targets), dtype=bool)
        for target in range(store.n_targets):
            where = store.positions(columns, target)
            found = where >= 0
            weights[found, target] += delta[where[found]].astype(np.float64)
            linked[found, target] = True
        return weights, linked

    def effective_links(self) -> sp.csr_matrix:
        """The weight of every link as prediction uses it, ``[rows, targets]``.

        Row 0 is the bias, row ``r >= 1`` the feature ``store.feature_ids[r - 1]``;
        missing entries weigh ``store.absent``.
        """
        self.ensure_fresh()
        return self.store.links_csr(averaged=self.store.average)

    def effective_weights(self) -> np.ndarray:
        """Every weight as prediction uses it, dense: ``float64[rows + 1, targets]``.

        Row 0 is the bias, rows follow ``store.feature_ids``, and a last row holds the
        weight of features never seen. Memory is rows x targets: for small networks and
        tests; :meth:`effective_links` is the sparse form.
        """
        self.ensure_fresh()
        store = self.store
        dense = store.full_table(averaged=store.average)
        return np.vstack([dense, np.full((1, dense.shape[1]), store.absent)])

    # --------------------------------------------------------------- pruning
    def prune(self, discard: float | None, *, averaged: bool) -> int:
        """``eligibility="percent:p"`` then ``discard``; returns the links dropped."""
        dropped = self.keep_top_percent() if self.percent else 0
        return dropped + self.discard(discard, averaged=averaged)

    def discard(self, share: float | None, *, averaged: bool) -> int:
        """Drop the links SNoW's ``-d`` calls negligible; returns how many.

        Negligible: the link's prediction weight differs from a missing link's by
        less than ``share`` times the rule's initial effective weight, or, for
        rules whose weights start at 0 or are derived (Naive Bayes'
        log-probabilities), times the mean difference from a missing link's of the
        link weights that differ from it. The bias is kept.
        """
        if share is None:
            return 0
        self.ensure_fresh()  # (a rule's derived weights, as prediction would see them)
        # the parts of a network learning on threads (kept between a stream's blocks)
        # drop their links each on its thread, before they are put together: fewer links
        # to put together, and the same network
        parts = self._parts
        pool = None if parts is None else self._threads
        stores = [self.store] if parts is None else [part.store for part in parts]
        threshold = float(share) * self.discard_scale(stores, averaged=averaged, pool=pool)
        self.cache.invalidate()
        return sum((map if pool is None else pool.map)(
            lambda store: store.prune(threshold=threshold, averaged=averaged), stores))

    def discard_scale(self, stores: list[LinkStore], *, averaged: bool,
                      pool: ThreadPoolExecutor | None = None) -> float:
        """The scale :meth:`discard` measures links against: the rule's initial
        effective weight, or for rules whose weights start at 0 or are derived, the
        mean difference from a missing link's of the link weights that differ from it
        (a link still at the missing weight, as ``links="all"`` keeps one per feature
        seen, says nothing of the scale). ``stores``: the network's, or its parts'
        (target ``t`` in part ``t % k``) read on ``pool``'s threads; the mean is summed
        per target in the rows' order, the same number on any number of threads."""
        initial = abs(self.kernel.initial_effective_weight)
        if initial > 0 and self.kernel.refresh is None:
            return initial
        read = pool.map if pool is not None else map
        k = len(stores)
        sums = np.zeros(self._store.n_targets, np.float64)
        counts = np.zeros(self._store.n_targets, np.int64)
        for first, (part_sums, part_counts) in enumerate(
                read(lambda part: part.moved(averaged=averaged), stores)):
            sums[first::k] = part_sums
            counts[first::k] = part_counts
        moved = int(counts.sum())
        return float(sums.sum()) / moved if moved else 0.0

    def keep_top_percent(self, store: LinkStore | None = None) -> int:
        """Keep, per target, the links of its ``percent`` most active features
        (``eligibility="percent:p"``), in the network's store or one part's.

        Activity is the link's count of positive examples (``links="positive"``);
        ties at the cut are kept. Returns the links dropped.
        """
        store = self.store if store is None else store
        positions = store.live_slots()
        targets = store.target[positions]
        counts = store.lcount[positions]
        keep = np.zeros(store.target.shape[0], dtype=bool)
        share = float(self.percent or 100.0) / 100.0
        order = np.lexsort((-counts, targets))
        bounds = np.searchsorted(targets[order], np.arange(store.n_targets + 1))
        for t in range(store.n_targets):
            members = order[bounds[t]:bounds[t + 1]]
            if members.size == 0:
                continue
            quota = max(1, int(np.ceil(share * members.size)))
            floor = counts[members[quota - 1]]
            keep[positions[members[counts[members] >= floor]]] = True
        dropped = store.prune(keep)
        self.cache.invalidate()
        return dropped


class Part:
    """The targets one thread learns: every ``step``-th target of the network from
    ``first``, in a link store of their own (the network's own store when one thread
    learns every target), with their promotions and demotions."""

    def __init__(self, store: LinkStore, first: int, step: int, counts: np.ndarray) -> None:
        self.store = store
        self.first = first
        self.step = step
        self.counts = counts
        self.rule: Any = None  # (bound by bind, once per epoch)
        self.y_indptr = self.y_targets = _NONE_INT
        self.labelled: Block | None = None

    def labels_of(self, block: Block) -> None:
        """The block's labels among this part's targets, numbered as the part numbers
        them (target ``first + step * local``)."""
        if self.labelled is block:
            return
        self.labelled = block
        if self.step == 1:
            self.y_indptr, self.y_targets = block.y_indptr, block.y_targets
            return
        mine = block.y_targets % self.step == self.first
        self.y_targets = (block.y_targets[mine] // self.step).astype(np.int32)
        kept = np.concatenate([[0], np.cumsum(mine, dtype=np.int64)])
        self.y_indptr = kept[block.y_indptr]

    def bind(self, engine: Engine) -> None:
        """Bind the rule to this part's pool (once per epoch, and after a refresh)."""
        self.rule = engine.binding(self.store)

    def run(self, engine: Engine, block: Block, order: np.ndarray, options: Options,
            counting: bool, creating: bool, scores: np.ndarray,
            activations: np.ndarray | None) -> Learned:
        """Learn the examples of ``order``, growing the pool whenever the compiled loop
        asks; this part's columns of ``scores`` (empty: none) receive the progressive
        scores, and of ``activations`` (None: none) the raw activations."""
        store = self.store
        apart = self.step > 1
        local = np.empty((order.size, store.n_targets)) if apart and scores.shape[0] \
            else scores
        raw = np.empty((order.size, store.n_targets)) if activations is not None else None
        done = Learned()
        position = 0
        while position < order.size:
            outcome = run(store.links(), self.rule, options, block.indptr, block.rows,
                          block.vals, order[position:], self.y_indptr, self.y_targets,
                          block.a_indptr, block.a_targets, store.seen, self.counts,
                          block.max_active, local[position:] if local.shape[0] else local,
                          counting, creating,
                          activations=None if raw is None else raw[position:])
            done.add(outcome, store.seen)
            store.seen = outcome.seen
            if KERNEL_ERRORS.caught:
                raise engine.kernel_exception()
            if outcome.failed:
                raise engine.kernel_failure()
            if outcome.nonfinite:
                example = int(order[position + outcome.processed])
                raise NumericalError(
                    f"rule {engine.rule!r} produced NaN at example {example}; check its "
                    f"parameters {np.asarray(engine.kernel.params).tolist()}")
            position += outcome.processed
            if outcome.need_room:
                store.reserve_links(outcome.need_room)
        if apart and scores.shape[0]:
            scores[:, self.first::self.step] = local
        if activations is not None and raw is not None:
            activations[:, self.first::self.step] = raw
        return done


class Shards:
    """The examples of each epoch learned in ``k`` shards (:meth:`Engine.shards`): shard
    ``i`` takes the run ``order[n * i // k : n * (i + 1) // k]`` of the epoch's order
    and learns it in a copy of the network, on a thread of its own; at the end of the
    epoch the copies are mixed back into the network (iterative parameter mixing,
    McDonald, Hall and Mann, 2010, as the cluster's rounds mix:
    :mod:`snowpy.distributed.mixing`, ``average_over="changed"``): each link moves by
    the mean of its changes, weighted by the shards' examples, over the shards that
    changed it; a link made and left at its initial weight stays there; the averaging
    sums move as the weights do; the per-target state and the averaging clock are the
    shards' weighted means. Mixing is one compiled pass over the rows, reading the
    copies' pools as they lie (:class:`snowpy._core.merging.Mixing`), on the same
    threads."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.pool = ThreadPoolExecutor(max_workers=k)
        #: the network's exact layout, which the next epoch's copies start from (what
        #: the last mixing gave)
        self.start: dict[str, np.ndarray] | None = None
        #: the copies, kept from epoch to epoch with their memory, and the memory the
        #: mixings are written into (two, in turn: the network holds the last one): on
        #: this machine a page of memory touched for the first time costs more than
        #: mixing it (docs/benchmarks.md)
        self.copies: list[LinkStore] = []
        self.mixed: list[dict[str, np.ndarray]] = [{}, {}]

    def epoch(self, engine: Engine, block: Block, order: np.ndarray, epoch: int,
              progress: Progress | None, *, counting: bool, creating: bool,
              recording: bool) -> tuple[int, int, int]:
        """One pass over ``order``'s examples; returns mistakes, updates and clamped
        weights (the figures of :meth:`Engine._epoch`)."""
        store = engine.store
        n_targets, k = store.n_targets, self.k
        cuts = [order.size * i // k for i in range(k + 1)]
        scores = np.empty((order.size, n_targets), dtype=np.float64) if recording \
            else _NO_SCORES
        options = engine.options()
        start = self.start if self.start is not None else \
            store.exact(slots=False, threads=k)
        if not self.copies:
            self.copies = [store.empty_like() for _ in range(k)]
            for copy in self.copies:
                copy.add_targets(n_targets)

        def copied(i: int) -> Part:
            copy = self.copies[i]
            copy.adopt(start, copy=True)
            copy.S[:] = store.S
            copy.seen = store.seen
            return Part(copy, 0, 1, np.zeros((n_targets, 2), np.int64))

        parts = list(self.pool.map(copied, range(k)))
        for part in parts:
            part.bind(engine)
            part.labels_of(block)

        def learn(i: int) -> Learned:
            return parts[i].run(engine, block, order[cuts[i]:cuts[i + 1]], options,
                                counting, creating, scores[cuts[i]:cuts[i + 1]]
                                if recording else _NO_SCORES, None)

        done = list(self.pool.map(learn, range(k)))
        self.start = self.mix(store, start, [part.store for part in parts],
                              np.diff(cuts).astype(np.float64))
        counts = engine.target_counts()
        for part in parts:
            counts += part.counts
        engine.n_examples_seen += sum(d.examples for d in done)
        engine.underflows += sum(d.underflows for d in done)
        mistakes = sum(d.mistakes for d in done)
        if recording:
            engine.progressive.add(scores, block.positives(order, n_targets))
            engine.calibration_due = True
        if progress is not None:
            progress(epoch, order.size, order.size, mistakes)
        return mistakes, sum(d.updates for d in done), sum(d.overflows for d in done)

    def mix(self, store: LinkStore, start: dict[str, np.ndarray], shards: list[LinkStore],
            weights: np.ndarray) -> dict[str, np.ndarray]:
        """``store`` (whose links were ``start``) moved by what ``shards`` changed, in
        ``weights`` of examples, the shards' pools read as they lie; returns its exact
        layout."""
        mixing = Mixing((start["sizes"], start["target"], start["W"], start["U"]),
                        [(shard.rows.view(np.int32).reshape(-1, 4), shard.target, shard.W,
                          shard.U) for shard in shards], weights, store.initial_weights,
                        bool(store.average), store.n_targets)
        n_rows, k = store.n_rows, self.k
        spans = [(n_rows * t // k, n_rows * (t + 1) // k) for t in range(k)]
        into = self.mixed[0]
        self.mixed.reverse()  # (the next mixing writes into the other)
        sizes = _room(into, "sizes", n_rows, np.int32)
        firsts = [mixing.first(span[0]) for span in spans]
        list(self.pool.map(lambda t: mixing.count(*spans[t], firsts[t], sizes), range(k)))
        links = [int(sizes[:span[0]].sum(dtype=np.int64)) for span in spans]
        total, planes = int(sizes.sum(dtype=np.int64)), store.n_planes
        mixed = {"sizes": sizes, "target": _room(into, "target", total, np.int32),
                 "W": _room(into, "W", total, store.dtype, planes),
                 "U": _room(into, "U", total if store.average else 0, store.dtype, planes),
                 "lcount": np.zeros(0, np.int32)}
        list(self.pool.map(lambda t: mixing.fill(*spans[t], firsts[t], links[t],
                                                 mixed["target"], mixed["W"], mixed["U"]),
                           range(k)))
        store.adopt(mixed)
        total_weight = float(weights.sum())
        store.S[:] = sum(w * shard.S for w, shard in zip(weights, shards)) / total_weight
        store.seen = int(round(sum(w * shard.seen for w, shard in zip(weights, shards))
                               / total_weight))
        return mixed

    def close(self) -> None:
        self.pool.shutdown()


def _room(into: dict[str, np.ndarray], name: str, length: int, dtype: Any,
         width: int = 0) -> np.ndarray:
    """``length`` rows (of ``width`` columns, when given) of ``into[name]``, replaced there
    by a larger array when it is short of them: memory written again and again (a
    mixing's, every epoch) faults no new pages in."""
    shape = (length, width) if width else (length,)
    held = into.get(name)
    if held is None or held.shape[0] < length or held.dtype != dtype or held.shape[1:] != shape[1:]:
        held = into[name] = np.empty((max(length, 1),) + shape[1:], dtype)
    return held[:length]


class Learned:
    """What a part's run did: examples learned, mistakes, updates, clamped weights."""

    def __init__(self) -> None:
        self.examples = self.mistakes = self.updates = self.overflows = self.underflows = 0

    def add(self, outcome: Outcome, seen: int) -> None:
        self.examples += outcome.seen - seen
        self.mistakes += outcome.mistakes
        self.updates += outcome.updates
        self.overflows += outcome.overflows
        self.underflows += outcome.underflows


def _split(engine: Engine, store: LinkStore, k: int) -> list[Part]:
    """The network's targets (its ``store``) in ``k`` parts: target ``t`` in part ``t % k``
    (one part: the network's own store)."""
    if k == 1:
        return [Part(store, 0, 1, engine.target_counts())]
    n_rows = store.n_rows
    # (no links: a first epoch)
    layout = store.exact(slots=False, threads=k) if store.n_links else None
    if layout is not None:
        rows = np.repeat(np.arange(n_rows), layout["sizes"])
        owner = layout["target"] % k
    parts = []
    for first in range(k):
        part = store.empty_like()
        part.add_targets(len(range(first, store.n_targets, k)))
        part.S[:] = store.S[first::k]
        if layout is not None:
            mine = owner == first
            part.adopt({name: (layout[name][mine] if layout[name].shape[0] else layout[name])
                        for name in ("W", "U", "lcount")}
                       | {"sizes": np.bincount(rows[mine], minlength=n_rows),
                          "target": (layout["target"][mine] // k).astype(np.int32)})
        else:
            part.reserve_rows(n_rows, exact=True)  # (rows of no links)
            part.n_rows = n_rows
        if store.count.shape[0]:
            part.count[:n_rows] = store.count[:n_rows]
        part.seen = store.seen
        parts.append(Part(part, first, k, np.zeros((part.n_targets, 2), np.int64)))
    return parts


def _merge(engine: Engine, store: LinkStore, parts: list[Part]) -> None:
    """The parts' links, state and counts back in the network's store, each row's links
    by target (its exact layout: the same network as learned on one thread)."""
    k = len(parts)
    merged = exact_layout([part.store for part in parts], store.n_rows, store.n_targets,
                          threads=k, slots=False)
    store.adopt(merged)
    counts = engine.target_counts()
    for part in parts:
        store.S[part.first::k] = part.store.S
        counts[part.first::k] += part.counts
    store.replaced()
    store.seen = parts[0].store.seen
    if store.count.shape[0]:
        store.count[:store.n_rows] = parts[0].store.count[:store.n_rows]


def _cut(pieces: list[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    """``pieces`` cut to at most ``size`` examples each."""
    return [(at, min(at + size, stop)) for start, stop in pieces
            for at in range(start, stop, size)]


def _mistakes(activations: np.ndarray, block: Block, order: np.ndarray, multilabel: bool,
              theta: float) -> int:
    """The examples of ``order`` the network mispredicted before learning them, from
    their activations (the compiled epoch's test: winner-take-all, the first of equal
    activations winning; for multi-label networks, every target at or above
    ``theta``)."""
    n, n_targets = activations.shape
    starts = block.y_indptr[order]
    counts = block.y_indptr[order + 1] - starts
    examples = np.repeat(np.arange(n), counts)
    at = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) \
        + np.repeat(starts, counts)
    positive = np.zeros((n, n_targets), dtype=bool)
    positive[examples, block.y_targets[at]] = True
    if multilabel:
        return int(((activations >= theta) != positive).any(axis=1).sum())
    best = activations.argmax(axis=1)
    return int(n - positive[np.arange(n), best].sum())


def _provided(rule: str) -> str:
    """`` (plugin 'name', distribution)`` for a plugin's rule, for error messages."""
    try:
        from snowpy.plugins import list_rules

        provided = list_rules().get(rule)
        return f" (plugin {provided.plugin!r}, {provided.distribution})" if provided else ""
    except Exception:  # noqa: BLE001 - the message must not fail
        return ""
