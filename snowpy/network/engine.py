"""The engine of a :class:`~snowpy.Network`: what it has learned, and what is done to it.

An :class:`Engine` holds the learned state (the link store, the labels, the rule
and its resolved parameters, the counters, the progressive window, the sigmoids),
and no thread, and the operations on it: scores, :meth:`~Engine.prune` the links,
refresh a rule's derived planes, one example at a time. The estimator (``Network``)
keeps its parameters, checks them once per fit, builds an engine and hands blocks of
examples to its driver (:class:`~snowpy.network.driver.Driver`), which runs the
epochs; loading a model builds the engine through the same constructor.

The driver runs the compiled epoch (:func:`snowpy._core.engine.run`) on the engine,
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
(``Outcome.need_room``): the driver grows the pool and continues from there, so a
model trained in chunks is the model trained at once.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from snowpy._core.engine import Options, RuleBinding
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
    refuse_label_kind,
)
from snowpy.network.links import ONLINE_WIDTH, USED, LinkStore
from snowpy.rules.spec import RuleKernel, RuleSpec

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp
else:
    sp = lazy_module("scipy.sparse")

__all__ = ["INFERENCE_ONLY", "KERNEL_ERRORS", "ONLINE_REFRESH_LINKS", "Block", "Blocks", "Engine",
           "EngineCache", "NumericalWarning", "OneExample", "checking_kernels"]

#: Why a network loaded from an inference-only model file learns nothing more.
INFERENCE_ONLY = ("this network was loaded from an inference-only model file: it keeps no "
                  "training state to continue from; train afresh with fit, or keep a full "
                  "model file (saved without inference_only) to continue training")

#: One-example predictions refresh a rule's derived planes after (pool slots / this)
#: examples learned: every example while the network is small, and never more than
#: that many link updates an example on average (20 Newsgroups as a stream with Naive
#: Bayes: more than ten minutes when every prediction refreshed).
ONLINE_REFRESH_LINKS = 20_000

#: Active features below which a batch is scored on the calling thread alone.
_SCORED_APART = 1 << 16

_NONE_INT = np.empty(0, dtype=np.int64)
_NONE_TARGETS = np.empty(0, dtype=np.int32)


class NumericalWarning(RuntimeWarning):
    """Weights reached the largest magnitude kept and were clamped."""


class _KernelErrors:
    """Exceptions raised inside a rule's compiled kernel. A C callback cannot raise:
    numba hands them to ``sys.unraisablehook`` and training went on (the command exited
    0). While training, they are collected here, and the training stops with a
    PluginError naming the rule (checked after every run of the engine)."""

    def __init__(self) -> None:
        self.caught: list[BaseException] = []
        self.depth = 0
        self.previous: Any = None
        self.persistent = False

    def __enter__(self) -> _KernelErrors:
        if self.depth == 0:  # (a training starts with none collected)
            self.caught = []
            if sys.unraisablehook != self._hook:  # (a bound method: never `is` it)
                self.previous = sys.unraisablehook
                sys.unraisablehook = self._hook
        self.depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.depth -= 1
        if self.depth == 0 and not self.persistent and sys.unraisablehook == self._hook:
            sys.unraisablehook = self.previous

    def watch(self) -> None:
        """Collect from now on (the one-example paths, which check after each example:
        a hook set and reset per example would cost more than the check)."""
        if sys.unraisablehook != self._hook:
            self.previous = sys.unraisablehook
            sys.unraisablehook = self._hook
        self.persistent = True

    def _hook(self, info: Any) -> None:
        if "CPUContext" in repr(getattr(info, "object", None)) and info.exc_value is not None:
            self.caught.append(info.exc_value)
        else:
            self.previous(info)

    def take(self) -> tuple[BaseException, int]:
        """The first exception collected and how many there were; clears them."""
        first, count = self.caught[0], len(self.caught)
        self.caught = []
        return first, count


#: Exceptions raised in rules' compiled steps, collected while training.
KERNEL_ERRORS = _KernelErrors()


def checking_kernels() -> bool:
    """Whether rules' steps run on guarded copies of their buffers
    (``SNOWPY_CHECK_KERNELS=1``: ``snowpy plugins --check`` and the conformance suite
    set it): a write outside its arrays stops the training and names the rule."""
    return os.environ.get("SNOWPY_CHECK_KERNELS", "") not in ("", "0")


class Block:
    """A block of encoded examples: what :meth:`~snowpy.network.driver.Driver.fit` takes.

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


@runtime_checkable
class Blocks(Protocol):
    """Examples that come a block at a time, as from a feature cache: what
    :meth:`~snowpy.network.driver.Driver.fit` takes beside a :class:`Block`, and
    ``Network.fit(blocks)``.
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
        :func:`~snowpy.network.driver.keyed_order` of its key (across blocks, as one
        block of them all is ordered); without, in the stored order."""
        ...


class OneExample(Protocol):
    """The one-example protocol of every kind's engine (:class:`Engine`, a learner's
    network's :class:`~snowpy.network.learner.LearnerEngine`, a cloud's
    :class:`~snowpy.network.cloud.CloudEngine`): what ``learn_one`` and ``predict_one``
    call, on a network and on a :class:`~snowpy.SnowClassifier`. An example is
    checked already (ids sorted, unique, >= 0: what
    :func:`~snowpy.network.network.parse_example` gives). An engine without a compiled
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

    @property
    def scores_texts(self) -> bool:
        """Whether :meth:`score_text` scores texts now (else a front end need not make
        its one-text path ready: a loaded model's table of counted features)."""
        return False

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
        self.store = store
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
    def n_targets(self) -> int:
        """The target nodes."""
        return self.store.n_targets

    @property
    def frozen(self) -> bool:
        """Loaded from an inference-only model file: no training state to go on from."""
        return self.store.frozen

    def block(self, X: Any, y: Any, targets: Any = None, keys: np.ndarray | None = None,
              *, rows: np.ndarray | None = None) -> Block:
        """``X`` and its labels ``y`` as a :class:`Block` of this engine: rows made for
        features not seen yet (``rows``: made already), labels numbered as targets (a
        label not seen yet is added to the labels; :meth:`add_targets` makes its
        target), ``targets`` (per example, the only labels it is shown to) likewise."""
        y_indptr, y_targets = encode_labels(self.labels, y, self.multilabel)
        a_indptr = a_targets = None
        if targets is not None:
            a_indptr, a_targets = self.labels.encode(targets, multilabel=True)
        if rows is None:
            rows = self.store.training_rows(X)
        return Block(X, rows, y_indptr, y_targets, a_indptr, a_targets, keys)

    def add_targets(self, count: int) -> None:
        """``count`` more target nodes (a label met for the first time). A target added
        to a network that has learned starts unlikely (:meth:`_unlikely_bias`), and the
        averages restart from the averaged weights (:meth:`LinkStore.restart_averaging`):
        averaged over the whole run, the new target's own examples would weigh nothing
        for as many examples again as the network had learned (the demo corpus's
        ``shipping`` learned after the rest: none of its test documents recognised after
        40 of its examples; averaged from its birth, 0.92). Targets
        added after a cv or holdout calibration get a provisional sigmoid (the median of
        the others), with a warning: probabilities stay available, and say little of the
        new labels until the network is calibrated again."""
        store = self.store
        first = store.n_targets
        store.add_targets(count)
        if self.n_examples_seen:
            bias = self._unlikely_bias()
            store.restart_averaging()
            if bias is not None:
                for target in range(first, first + count):
                    store.link_bias(target, bias)
            self.cache.invalidate()
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

    def forget(self, label: Any) -> None:
        """Forget ``label``: its target node, its links, its sigmoid and its column of the
        progressive window go, the targets after it move down one. What the other
        targets learned stays: they learned the label's examples as examples not theirs
        (a mistyped label's examples taught them that much). A label the network does
        not know, its only label, or a column of a label-indicator matrix is refused."""
        target = self.labels.find(label)
        if target is None:
            self.labels.remove(label)  # (raises, naming the labels known)
            return
        if len(self.labels) < 2:
            raise ConfigurationError(f"{label!r} is the model's only label: a model with "
                                     "no label predicts nothing; train another instead")
        if self.indicator:
            raise ConfigurationError("a network trained on a label-indicator matrix keeps "
                                     "its columns: its labels are their numbers")
        self.drop_target(target)
        self.labels.remove(label)

    def drop_target(self, target: int) -> None:
        """:meth:`forget`'s work on the engine's state, the labels aside (a cloud's
        members share theirs); the engine whole (a network's ``engine_`` is: the parts a
        stream learns in put together)."""
        counts = self.target_counts()
        self.store.drop_target(target)
        self.counts = np.ascontiguousarray(np.delete(counts, target, axis=0))
        if self._calibration is not None and self._calibration.a.size > target:
            self._calibration = self._calibration.without(target)
        if self.progressive is not None:
            self.progressive.without(target)
        self.cache.invalidate()
        self.cache.learner = None

    def _unlikely_bias(self) -> np.ndarray | None:
        """The bias link's planes of a target added to a network that has learned: its
        score on a document with none of its features is where the network's sigmoid
        gives a label not met in ``n`` examples (epochs counted) the probability of
        Laplace's rule of succession, ``1 / (n + 2)``, but no lower than the negative side
        of the margin (``theta - negative_thickness``: where a target that met only
        negatives stands; without sigmoids, there) nor than the lowest score the
        progressive window holds (a sigmoid fitted on a few examples may be flat). Until
        its own examples move it, such a target claims no document and wins none from
        the targets that learned (one example of a new label, learned by
        ``partial_fit``, took the demo corpus from 0.933 to 0.892 when the target started
        at 0). None for a rule whose weights do not add so (multiplicative, counts, a
        missing link that weighs something, several planes), or without a bias."""
        store, kernel = self.store, self.kernel
        if kernel.multiplicative or not kernel.mistake_driven or self.bias <= 0 \
                or store.absent != 0.0 or store.n_planes != 1 or store.planes[0] == 0 \
                or store.frozen:
            return None
        calibration = self._calibration
        score = None
        if calibration is not None and calibration.a.size and calibration.normalize != "softmax":
            a, b = float(np.median(calibration.a)), float(np.median(calibration.b))
            if a < 0:  # (p = sigmoid(-(a s + b)), rising with the score)
                prior = 1.0 / (float(self.n_examples_seen) + 2.0)
                score = (-math.log(prior / (1.0 - prior)) - b) / a
        margin = -float(self.params.get("negative_thickness", 0.0))
        if score is None or (margin < 0 and score < margin):
            score = margin
        window = self.progressive
        if window is not None and window.filled:  # (no lower than a score seen)
            score = max(score, window.low)
        if score >= 0:
            return None
        theta = float(self.params["theta"])
        return np.array([(score + theta) / (self.bias * store.planes[0])])

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

    def record(self, scores: np.ndarray, positives: np.ndarray) -> None:
        """Keep a piece's scores made before learning it, and its labels, in the
        progressive window; its sigmoids are fitted again when next asked for."""
        self.progressive.add(scores, positives)
        self.calibration_due = True

    def target_counts(self) -> np.ndarray:
        """Promotions and demotions per target, ``int64[targets, 2]``, grown to every
        target; the engine adds to it in place."""
        n_targets = self.store.n_targets
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
        store = self.store
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
        :data:`KERNEL_ERRORS`)."""
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
        refuse_label_kind(self.multilabel, isinstance(y, COLLECTIONS))
        if self.store.frozen:
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
        if learner is None:
            KERNEL_ERRORS.watch()  # a numba kernel's exceptions fail the example
        if width > cache.learner_width:
            cache.learner_width = max(width, 2 * cache.learner_width, 256)
        cache.learner_queue = max(cache.learner_queue, 16 * (cache.learner_width + 2))
        fmap = store.feature_map
        slots, row_ids = fmap.arrays  # (a loaded model's map made here: then the key)
        key = (store.generation, fmap.generation)
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
        :func:`~snowpy.network.network.parse_example` gives) per target, and the best target.

        >>> import numpy as np, snowpy
        >>> engine = snowpy.Network("perceptron").fit(np.eye(2), ["a", "b"]).engine_
        >>> engine.label_of(*engine.score_one(np.array([1]), np.array([1.0])))
        'b'
        """
        if self.planes_stale:  # (a rule's derived planes: checked here, on every example)
            self.ensure_fresh(online=True)
        store = self.store
        if store.reads_file:  # (a mapped model's links read from its file: the same sums)
            out = self.scores(Rows(np.array([0, ids.shape[0]]), ids, vals, store.n_features),
                              averaged=True)[0]
            return out, int(np.argmax(out)) if out.shape[0] else 0
        absent, round32, bias, theta = self.cache.score_args or self._score_args()
        learner = self._online_learner(ids.shape[0])
        out = np.empty(store.n_targets, dtype=np.float64)
        best = learner.score(ids, vals, float(store.seen), absent, round32, bias, theta, out)
        return out, best

    @property
    def scores_texts(self) -> bool:
        """Whether :meth:`score_text` scores texts now: not while a mapped model's links
        are read from its file (:meth:`~snowpy.network.links.LinkStore.file_rows`)."""
        return not self.store.reads_file

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
        if not self.scores_texts:
            return None  # (featurised apart, then :meth:`score_one` reads the file)
        absent, round32, bias, theta = self.cache.score_args or self._score_args()
        out = np.empty(store.n_targets, dtype=np.float64)
        best = self._online_learner().score_text(words, raw, weigher, float(store.seen),
                                                 absent, round32, bias, theta, out)
        return None if best < 0 else (out, best)

    def learn_one(self, ids: np.ndarray, vals: np.ndarray, y: Any) -> None:
        """Learn one checked example (ids sorted, unique, >= 0:
        :func:`~snowpy.network.network.parse_example` gives them); an open feature space
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
        store.written()
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
        records, target = store.rows, store.target
        read = None if effective is not None else store.file_rows(rows, averaging)
        if effective is not None:
            W, U = W[:0], U[:0]
        elif read is not None:
            rows, records, target, W, U = read
        theta = float(self.params["theta"])
        indptr = X.indptr
        n = X.shape[0]
        runs = min(threads, n) if int(indptr[-1]) >= _SCORED_APART else 1
        cuts = np.searchsorted(indptr, np.arange(1, runs) * indptr[-1] // runs).tolist()
        on_threads(lambda span: score_rows(
            indptr[span[0]:span[1] + 1], rows, vals, records, target, effective, W, U,
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

    def discard(self, share: float | None, *, averaged: bool,
                stores: list[LinkStore] | None = None,
                pool: ThreadPoolExecutor | None = None) -> int:
        """Drop the links SNoW's ``-d`` calls negligible; returns how many.

        Negligible: the link's prediction weight differs from a missing link's by
        less than ``share`` times the rule's initial effective weight, or, for
        rules whose weights start at 0 or are derived (Naive Bayes'
        log-probabilities), times the mean difference from a missing link's of the
        link weights that differ from it. The bias is kept. ``stores``: the stores of
        the parts the targets are learned in (:class:`~snowpy.network.driver.Part`), their
        scale measured on ``pool``'s threads (None: this engine's store), their links
        dropped one store after the other: the sort each makes of its rows (8 bytes a row)
        comes when the pool is at its largest, and one at a time it adds half as much to a
        training's peak (20 Newsgroups, two parts: 6.5 MB less).
        """
        if share is None:
            return 0
        self.ensure_fresh()  # (a rule's derived weights, as prediction would see them)
        stores = [self.store] if stores is None else stores
        threshold = float(share) * self.discard_scale(stores, averaged=averaged, pool=pool)
        self.cache.invalidate()
        return sum(store.prune(threshold=threshold, averaged=averaged) for store in stores)

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
        sums = np.zeros(self.store.n_targets, np.float64)
        counts = np.zeros(self.store.n_targets, np.int64)
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


def _provided(rule: str) -> str:
    """`` (plugin 'name', distribution)`` for a plugin's rule, for error messages."""
    try:
        from snowpy.plugins import list_rules

        provided = list_rules().get(rule)
        return f" (plugin {provided.plugin!r}, {provided.distribution})" if provided else ""
    except Exception:  # noqa: BLE001 - the message must not fail
        return ""
