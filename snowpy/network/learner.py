"""The network of a rule whose state is no weight table: :class:`LearnerNetwork`.

A rule declared ``RuleSpec(learner=True)`` builds a :class:`~snowpy.rules.Learner` (the
kernel Perceptron's support vectors, in the ``snowpy-kernel-perceptron`` plugin), which
keeps what its targets learn and scores examples. This network hosts it as
:class:`~snowpy.Network` hosts links: one target per label, winner-take-all (or, multi-
label, every target at or above the threshold), the epochs with their shuffle and early
stop, calibration by cross-fitting or progressively, one example at a time, and the
model file (kind ``learner``) around the learner's own state. Its engine,
:class:`LearnerEngine`, is what it learned as one value: the learner, the labels, the
calibration and the training figures.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from snowpy._validation import as_csr
from snowpy.declared import LEARNER_NETWORK, defaults
from snowpy.exceptions import (
    ConfigurationError,
    ModelFileError,
    PluginError,
    SnowpyError,
)
from snowpy.model_kinds import model_kind
from snowpy.network.calibrating import (
    ProgressiveWindow,
    calibration_from_file,
    calibration_to_file,
    fit_progressive,
    refresh_progressive,
)
from snowpy.network.cloud import Cloud, cloud_members, share_params
from snowpy.network.engine import OneExample
from snowpy.network.labels import (
    COLLECTIONS,
    LabelIndex,
    encode_labels,
    positive_matrix,
    refuse_label_kind,
)
from snowpy.network.network import Network, NetworkKind
from snowpy.network.options import check_training_options, upgraded
from snowpy.network.state import plain
from snowpy.plugins import get_rule
from snowpy.rules.spec import BuildContext, Examples, Learner

if TYPE_CHECKING:  # pragma: no cover (scipy is imported where a matrix is made: as_csr)
    import scipy.sparse as sp

__all__ = ["LearnerEngine", "LearnerNetwork", "network_for"]

_DEFAULTS = defaults(LEARNER_NETWORK)


class LearnerEngine(OneExample):
    """What a :class:`LearnerNetwork` learned, as one value: the ``rule``'s name and
    ``learner``, its ``params`` as used, the ``labels`` (one per target), ``multilabel`` and
    ``indicator`` (the labels came as a 0/1 matrix), the ``calibration`` and the
    ``progressive`` window it is fitted on, the training figures (``mistakes`` and
    ``updates`` per epoch, ``n_examples_seen``) and the shuffle's generator ``rng``."""

    def __init__(self, learner: Learner, params: dict[str, Any], labels: LabelIndex, *,
                 n_features: int, multilabel: bool, seed: int | None,
                 progressive: ProgressiveWindow | None, rule: str = "") -> None:
        self.learner = learner
        self.rule = rule
        self.params = params
        self.labels = labels
        self.n_features = int(n_features)
        self.multilabel = bool(multilabel)
        self.indicator = False
        self.calibration: Any = None
        self.progressive = progressive
        self.mistakes: list[int] = []
        self.updates: list[int] = []
        self.n_examples_seen = 0
        self.online = False
        self.rng = np.random.default_rng(seed)

    def examples(self, X: sp.csr_matrix, y_indptr: Any = None, y_targets: Any = None
                 ) -> Examples:
        """The rows of ``X`` (canonical CSR) and their targets, as the learner reads them."""
        if y_indptr is None:
            return Examples(X.indptr.astype(np.int64), X.indices.astype(np.int64),
                            X.data.astype(np.float64), len(self.labels))
        return Examples(X.indptr.astype(np.int64), X.indices.astype(np.int64),
                        X.data.astype(np.float64), len(self.labels), y_indptr, y_targets,
                        self.multilabel)

    @property
    def n_targets(self) -> int:
        """The target nodes: one per label."""
        return len(self.labels)

    def learn(self, examples: Examples, order: np.ndarray,
              before: np.ndarray | None = None) -> tuple[int, int]:
        """The learner's :meth:`~snowpy.rules.Learner.learn` of ``order``; ``before``
        receives the scores before learning, which the learner must write."""
        if before is not None:
            before.fill(np.nan)
        done = self.learner.learn(examples, order, before)
        if before is not None and not np.isfinite(before).all():
            raise PluginError(f"rule {self.rule!r}: its learner left "
                              "scores before learning unwritten or not finite")
        return done

    def record(self, scores: np.ndarray, positives: np.ndarray) -> None:
        """Keep the scores before learning in the progressive window, its sigmoids
        refitted as it grows."""
        window = self.progressive
        assert window is not None  # (recorded only with one)
        window.add(scores, positives)
        refresh_progressive(self, window)

    def scores(self, X: sp.csr_matrix) -> np.ndarray:
        """Each target's score (the threshold subtracted) of each row of ``X``."""
        return self._checked(self.learner.scores(self.examples(X)), X.shape[0])

    def _checked(self, scores: Any, n: int) -> np.ndarray:
        """The learner's ``scores`` of ``n`` examples, refused unless ``float64[n,
        targets]``."""
        if not isinstance(scores, np.ndarray) or scores.shape != (n, len(self.labels)):
            raise PluginError(f"a {type(self.learner).__name__}'s scores must be an array of "
                              f"shape ({n}, {len(self.labels)}), got "
                              f"{getattr(scores, 'shape', type(scores).__name__)}")
        return scores.astype(np.float64, copy=False)

    def normalisation(self, multilabel: bool) -> str:
        """Probabilities of a set of labels stand alone; of one label, they sum to 1."""
        return "none" if multilabel else "sum"

    # ------------------------------------------------- one example at a time
    frozen = False  # (a learner keeps what it learns from in every model file)

    def check_label(self, y: Any) -> None:
        """Refuse a label of the other kind than the network learned."""
        refuse_label_kind(self.multilabel, isinstance(y, COLLECTIONS))

    def _check_width(self, ids: np.ndarray) -> None:
        if ids.size and ids[-1] >= self.n_features:
            raise ConfigurationError(f"feature id {int(ids[-1])} is beyond the network's "
                                     f"{self.n_features} features")

    def _one(self, ids: np.ndarray, vals: np.ndarray, targets: list[int] = []) -> Examples:
        return Examples(np.array([0, ids.size], np.int64), ids.astype(np.int64),
                        vals.astype(np.float64), len(self.labels),
                        np.array([0, len(targets)], np.int64), np.array(targets, np.int32),
                        self.multilabel)

    def score_one(self, ids: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, int]:
        """The scores of one checked example per target, and the best target."""
        self._check_width(ids)
        scores = self._checked(self.learner.scores(self._one(ids, vals)), 1)[0]
        return scores, int(np.argmax(scores)) if scores.size else -1

    def learn_one(self, ids: np.ndarray, vals: np.ndarray, y: Any) -> None:
        """Learn one checked example."""
        self.check_label(y)
        self._check_width(ids)
        targets = [self.labels.add(label)
                   for label in (y if isinstance(y, COLLECTIONS) else [y])]
        example, window = self._one(ids, vals, targets), self.progressive
        before = None if window is None else np.empty((1, len(self.labels)))
        mistakes, updates = self.learn(example, np.zeros(1, np.int64), before)
        if before is not None:
            self.record(before, positive_matrix(np.array([0, len(targets)]),
                                                np.array(targets, np.int32),
                                                len(self.labels)))
        if not self.online:  # one entry of the figures for a run of one-example learning
            self.mistakes.append(0)
            self.updates.append(0)
            self.online = True
        self.mistakes[-1] += mistakes
        self.updates[-1] += updates
        self.n_examples_seen += 1


@model_kind("learner")
class LearnerNetwork(NetworkKind):
    """A network of target nodes whose rule keeps what they learn in a
    :class:`~snowpy.rules.Learner` (the module's description).

    Parameters
    ----------
    rule : str or RuleSpec
        A rule declared with ``RuleSpec(learner=True)`` (``snowpy plugins`` lists them):
        the kernel Perceptron's, ``"kernel-perceptron"``, once its plugin is installed.
    epochs, shuffle, seed, early_stop, calibrate :
        As for :class:`~snowpy.Network` (``calibrate`` is ``None``, ``"cv"`` or
        ``"holdout"``, with their number of folds, or ``"progressive"``).
    **rule_params
        The rule's parameters.

    Attributes
    ----------
    mistakes_, updates_ : list of int
        Per epoch (one entry per ``partial_fit``, or per run of ``learn_one``).
    """

    _option_names = tuple(LEARNER_NETWORK)

    def __init__(self, rule: Any = _DEFAULTS["rule"], *, epochs: int = _DEFAULTS["epochs"],
                 shuffle: bool = _DEFAULTS["shuffle"], seed: int | None = _DEFAULTS["seed"],
                 early_stop: bool = _DEFAULTS["early_stop"],
                 calibrate: str | None = _DEFAULTS["calibrate"],
                 **rule_params: Any) -> None:
        self.rule = rule
        self.epochs = epochs
        self.shuffle = shuffle
        self.seed = seed
        self.early_stop = early_stop
        self.calibrate = calibrate
        self.rule_params = rule_params

    def _resolve_rule(self) -> tuple[Any, dict[str, Any]]:
        """The rule's record and its validated parameters."""
        if self.rule is None:
            raise ConfigurationError("a LearnerNetwork needs rule=, a rule whose state is "
                                     "a learner (snowpy plugins lists the rules)")
        spec = get_rule(self.rule)
        if not spec.learner:
            raise ConfigurationError(f"rule {spec.name!r} keeps a weight table: use "
                                     "snowpy.Network (or snowpy.SnowClassifier, which "
                                     "picks it)")
        return spec, spec.validate(self.rule_params)

    def check_options(self) -> None:
        """Validate the rule, its parameters and the options."""
        self._resolve_rule()
        check_training_options(self.get_params())

    def start(self, n_features: int, labels: Any = (), *, multilabel: bool = False
              ) -> LearnerNetwork:
        """An untrained network of ``n_features`` columns with a target per label, before
        any example; returns the network."""
        spec, params = self._resolve_rule()
        learner = spec.make_kernel(params, BuildContext(mean_active_features=1.0,
                                                        n_features=int(n_features)))
        index = labels if isinstance(labels, LabelIndex) else LabelIndex(labels)
        self._engine = LearnerEngine(learner, params, index, n_features=n_features,
                                     multilabel=multilabel, seed=self.seed,
                                     progressive=ProgressiveWindow(len(index))
                                     if self.calibrate == "progressive" else None,
                                     rule=spec.name)
        return self

    @property
    def learner_(self) -> Learner:
        """The rule's learner: what the targets learned."""
        return self.engine_.learner

    # ---------------------------------------------- fit's steps (NetworkKind.fit)
    def _as_input(self, X: Any, targets: Any) -> Any:
        if targets is not None:
            raise ConfigurationError("targets= (SNoW's sequential model) is not available "
                                     "to a learner's rule: every target scores every example")
        return _canonical(X)

    def _begin_fit(self, X: Any, labels: LabelIndex, multilabel: bool, indicator: bool
                   ) -> None:
        self.start(X.shape[1], labels, multilabel=multilabel)
        self._engine.indicator = indicator

    def _begin_stream(self, width: int | None, mean_active: float, multilabel: bool) -> None:
        if width is None:
            raise ConfigurationError("a learner's network learns one example at a time "
                                     "once it knows its width: fit or partial_fit first")
        self.check_options()
        self.start(width, multilabel=multilabel)

    def _check_width(self, X: Any, *, learning: bool = False) -> None:
        if X.shape[1] != self.n_features_in_:
            raise ConfigurationError(f"X has {X.shape[1]} features; the network has "
                                     f"{self.n_features_in_}")

    _check_continues = _check_width  # (a learner's network goes on at its width)

    def _calibrate_progressive(self, progress: Any, fitting: bool) -> None:
        """The progressive sigmoids fitted again after every learning (a fit's and a
        ``partial_fit``'s: the window's scores were refitted on as it grew)."""
        window = self._engine.progressive
        if window is not None and window.filled:
            fit_progressive(self._engine, window)

    # ------------------------------------------------------------ prediction
    def target_scores(self, X: Any) -> np.ndarray:
        """Each target's score minus the threshold, ``float64[n, targets]``."""
        self._check_fitted()
        canonical = _canonical(X)
        self._check_width(canonical)
        return self._stacked(X, self._engine.scores(canonical))

    def explain_terms(self, X: Any, targets: Any, scores: np.ndarray) -> list[dict[str, Any]]:
        """The terms of each of ``targets``' scores on the one row of ``X``, as the
        learner gives them (:meth:`~snowpy.rules.Learner.explain`)."""
        return self.learner_.explain(self._engine.examples(_canonical(X)), list(targets),
                                     scores)

    def describe(self) -> dict[str, Any]:
        """What ``snowpy inspect`` shows: the rule, the labels, what the learner says of
        itself, the training figures and the calibration."""
        own = {"rule": getattr(self.rule, "name", self.rule),
               "rule_params": self.rule_params_, "classes": [str(c) for c in self.classes_],
               "training": {"examples": int(self.n_examples_seen_),
                            "mistakes_per_epoch": list(self.mistakes_)},
               "calibration": None if self.calibration_ is None
               else self.calibration_.header()}
        return _beside(own, self.learner_.describe(self.classes_.tolist()), "describe")

    # ------------------------------------------ what a classifier asks of a network
    @property
    def n_links_(self) -> int:
        """The links the learner holds (a feature of a target's score each)."""
        return int(self.learner_.features().size)

    @property
    def feature_ids_(self) -> np.ndarray:
        """The features the learner holds, sorted."""
        return np.unique(self.learner_.features())

    def link_counts(self, columns: Any = None) -> np.ndarray:
        """Links the learner holds to each feature (of :attr:`feature_ids_`, or
        ``columns``)."""
        held = np.sort(self.learner_.features())
        columns = np.unique(held) if columns is None else np.asarray(columns)
        return np.searchsorted(held, columns, side="right") - \
            np.searchsorted(held, columns, side="left")

    def prune(self) -> int:
        """Nothing to drop: a learner bounds what it holds. Returns 0."""
        return 0

    # ------------------------------------------------------------ model files
    def to_state(self, inference_only: bool = False) -> tuple[dict, dict]:
        """The network as a header (model kind ``learner``) and named arrays: the
        learner's state (:meth:`~snowpy.rules.Learner.to_state`), the labels, the options,
        the training figures, the calibration and the progressive window. What the
        learner holds is what prediction needs, so ``inference_only`` keeps all."""
        engine = self.engine_
        held, arrays = engine.learner.to_state()
        own: dict[str, Any] = {
            "options": plain({**self.get_params(), "rule": getattr(self.rule, "name",
                                                                   self.rule)}),
            "rule_params": plain(self.rule_params_),
            "labels": plain(list(engine.labels.labels)), "multilabel": self.multilabel_,
            "indicator": bool(engine.indicator), "n_features": self.n_features_in_,
            "mistakes": list(self.mistakes_), "updates": list(self.updates_),
            "examples_seen": int(self.n_examples_seen_),
        }
        own_arrays: dict[str, np.ndarray] = {}
        calibration_to_file(self.calibration_, engine.progressive, own, own_arrays)
        return {"kind": "learner", "learner": _beside(own, plain(held), "to_state",
                                                      _RESERVED)}, \
            _beside(own_arrays, arrays, "to_state", _RESERVED)

    @classmethod
    def from_state(cls, header: dict[str, Any], arrays: dict[str, np.ndarray],
                   where: str = "model") -> LearnerNetwork:
        """The network :meth:`to_state` described, every part checked before any is used."""
        part = header.get("learner", header.get("dual"))  # (dual: snowpy 0.x's name)
        part = part if isinstance(part, dict) else {}
        try:
            options = upgraded(part["options"])
            net = cls(options.pop("rule"), **options)
            net.check_options()
            net.start(int(part["n_features"]), list(part["labels"]),
                      multilabel=bool(part["multilabel"]))
        except (KeyError, TypeError, ValueError, SnowpyError) as exc:
            raise ModelFileError(f"{where}: the network description is invalid "
                                 f"({type(exc).__name__}: {exc})") from None
        engine = net.engine_
        try:
            engine.learner.restore(part, arrays, n_features=net.n_features_in_,
                                   n_targets=len(engine.labels), where=where)
        except ModelFileError:
            raise
        except Exception as exc:  # (a learner's own check failing otherwise: one line)
            raise ModelFileError(f"{where}: the learner's state is invalid "
                                 f"({type(exc).__name__}: {exc})") from None
        engine.mistakes = [int(v) for v in part.get("mistakes", [])]
        engine.updates = [int(v) for v in part.get("updates", [])]
        engine.n_examples_seen = int(part.get("examples_seen", 0))
        engine.indicator = bool(part.get("indicator", False))
        calibration_from_file(engine, net.calibrate, part, arrays, where)
        return net


model_kind("dual")(LearnerNetwork)  # (snowpy 0.x's files of the kernel Perceptron)


def network_for(rule: Any, options: Mapping[str, Any], rule_params: Mapping[str, Any]) -> Any:
    """The untrained network ``rule`` learns in: a :class:`~snowpy.Cloud` for several
    rules (``"winnow+perceptron"``, each member given the rule parameters it declares),
    a :class:`Network`, or for a rule whose state is no weight table
    (``RuleSpec(learner=True)``) a :class:`LearnerNetwork`, given the ``options`` it
    takes and every rule parameter."""
    members = cloud_members(rule)
    if members is not None:  # (SNoW's cloud)
        return Cloud(share_params(members, dict(rule_params)), **options)
    if not get_rule(rule).learner:
        return Network(rule, **options, **rule_params)
    taken = inspect.signature(LearnerNetwork).parameters
    return LearnerNetwork(rule, **{name: value for name, value in options.items()
                                   if name in taken}, **rule_params)


#: What a learner's network writes for its calibration, in its part of a model file and
#: among the arrays, when it has one: names a learner's own may not start with.
_RESERVED = ("calibration", "progressive")


def _beside(own: dict[str, Any], learners: dict[str, Any], where: str,
            reserved: tuple[str, ...] = ()) -> dict[str, Any]:
    """``own`` (the network's) and the learner's entries side by side; a learner's entry
    that takes one of the network's names (or starts with one ``reserved``) is
    refused."""
    taken = [name for name in learners if name in own or name.startswith(reserved)]
    if taken:
        raise PluginError(f"a learner's {where} names {taken[0]!r}, which its network "
                          "writes itself: name it otherwise")
    return {**own, **learners}


def _canonical(X: Any) -> sp.csr_matrix:
    """CSR with sorted, unique ids per row."""
    X = as_csr(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X
