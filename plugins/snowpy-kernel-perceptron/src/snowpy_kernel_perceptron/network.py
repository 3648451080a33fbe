"""``DualNetwork``: target nodes that keep support vectors, for dual rules.

The network of a rule whose state is not a weight table
(:mod:`snowpy_kernel_perceptron.kernel`): the kernel Perceptron keeps the examples it
erred on with a coefficient per target, and scores ``f_t(x) = sum_s alpha[s,
t] K(x_s, x)``. One target per label, winner-take-all (or, multi-label, every
target at ``theta``), SNoW's test per target, calibration by cross-fitting,
one example at a time, model files as data: what a :class:`~snowpy.Network`
offers, with memory bounded by the rule's budget of support vectors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from snowpy._validation import as_csr
from snowpy.declared import NETWORK, Setting, defaults
from snowpy.exceptions import (
    ConfigurationError,
    ModelFileError,
    NotFittedError,
    PluginError,
    SnowpyError,
)
from snowpy.model_kinds import model_kind
from snowpy.network.calibrating import (
    ProgressiveWindow,
    calibration_from_file,
    calibration_to_file,
    fit_progressive,
)
from snowpy.network.network import NetworkKind
from snowpy.network.labels import LabelIndex, encode_labels
from snowpy.network.options import check_training_options, upgraded
from snowpy.network.state import plain
from snowpy.network.training import chunks, example_keys, shuffled
from snowpy.plugins import get_rule
from snowpy.progress import as_progress
from snowpy.rules.spec import BuildContext

from snowpy_kernel_perceptron._dual import dual_scores
from snowpy_kernel_perceptron.engine import OLDEST, USED, DualEngine
from snowpy_kernel_perceptron.kernel import DualKernel

if TYPE_CHECKING:  # pragma: no cover (scipy is imported where a matrix is made: as_csr)
    import scipy.sparse as sp

__all__ = ["DualNetwork"]

#: The parameters of a :class:`DualNetwork`: the network's that apply to support vectors.
DUAL_NETWORK: dict[str, Setting] = {
    "rule": Setting("kernel-perceptron", "update rule that keeps support vectors"),
    **{name: NETWORK[name] for name in ("epochs", "shuffle", "seed", "early_stop",
                                        "calibrate")},
}
_DEFAULTS = defaults(DUAL_NETWORK)


@model_kind("dual")
class DualNetwork(NetworkKind):
    """A network of target nodes for a dual rule (the kernel Perceptron).

    Parameters
    ----------
    rule : str, default "kernel-perceptron"
        A rule registered with ``network=DualNetwork`` (``snowpy plugins`` lists them).
    epochs : int, default 10
        Passes over the data in :meth:`fit` (stopping after one without update).
    shuffle, seed, early_stop, calibrate :
        As for :class:`~snowpy.Network` (``calibrate`` is ``None``, ``"cv"`` or
        ``"holdout"``, with their number of folds, or ``"progressive"``).
    **rule_params
        The rule's parameters (kernel, degree, budget...).

    Attributes
    ----------
    n_support_ : int
        Support vectors held.
    mistakes_, updates_ : list of int
        Per epoch (one entry per ``partial_fit``, or per run of ``learn_one``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from snowpy_kernel_perceptron import DualNetwork
    >>> X = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 1], [0, 0]], dtype=float))
    >>> xor = ["no", "no", "yes", "yes"]  # not linearly separable
    >>> net = DualNetwork("kernel-perceptron", kernel="polynomial", degree=2,
    ...                   epochs=50, shuffle=False)  # doctest: +SKIP
    >>> net.fit(X, xor).predict(X).tolist()  # doctest: +SKIP
    ['no', 'no', 'yes', 'yes']
    """

    _option_names = tuple(DUAL_NETWORK)

    def __init__(self, rule: str = _DEFAULTS["rule"], *, epochs: int = _DEFAULTS["epochs"],
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

    # ---------------------------------------------------------------- checks
    def _resolve_rule(self) -> tuple[Any, dict[str, Any]]:
        """The rule's spec and its validated parameters."""
        spec = get_rule(self.rule)
        if spec.network is not DualNetwork:
            own = "snowpy.Network" if spec.network is None else \
                f"{spec.network.__module__.split('.')[0]}.{spec.network.__name__}"
            raise ConfigurationError(f"rule {self.rule!r} does not keep support vectors: use "
                                     f"{own} (or snowpy.SnowClassifier, which picks it)")
        return spec, spec.validate(self.rule_params)

    def check_options(self) -> None:
        """Validate the rule, its parameters and the options."""
        self._resolve_rule()
        check_training_options(self.get_params())

    def _check_fitted(self) -> None:
        if "_engine" not in self.__dict__:
            raise NotFittedError(f"this {type(self).__name__} is not trained yet; call fit or "
                                 "partial_fit first")

    # ---------------------------------------------------------------- state
    def start(self, n_features: int, labels: Any = (), *, multilabel: bool = False
              ) -> DualNetwork:
        """An untrained network of ``n_features`` columns with a target per label, before
        any example; returns the network."""
        spec, params = self._resolve_rule()
        kernel = spec.make_kernel(params, BuildContext(mean_active_features=1.0,
                                                       n_features=n_features))
        if not isinstance(kernel, DualKernel):
            raise PluginError(f"rule {self.rule!r} keeps support vectors: its build must "
                              f"return a DualKernel, got {type(kernel).__name__}")
        try:
            kernel.compiled  # a similarity that does not compile fails here
        except PluginError as exc:
            raise PluginError(f"rule {self.rule!r}: {exc}") from exc
        params.update(kernel.resolved)
        index = labels if isinstance(labels, LabelIndex) else LabelIndex(labels)
        self._engine = DualEngine(index, kernel, params, n_features=n_features,
                                multilabel=multilabel, seed=self.seed,
                                progressive=ProgressiveWindow(len(index))
                                if self.calibrate == "progressive" else None)
        return self

    @property
    def engine_(self) -> DualEngine:
        """Everything the network has learned but its figures, as one value
        (:class:`~snowpy_kernel_perceptron.engine.DualEngine`): the support vectors, their
        coefficients, the labels; :meth:`to_state` gives it as plain data."""
        self._check_fitted()
        return self._engine

    # -------------------------------------------------------------- training
    # -------------------------------------------- fit's steps (NetworkKind.fit)
    def _as_input(self, X: Any, targets: Any) -> Any:
        """``X`` in canonical CSR; ``targets`` is not available to dual rules."""
        _refuse_targets(targets)
        return _canonical(X)

    def _begin_fit(self, X: Any, labels: LabelIndex, multilabel: bool, indicator: bool
                  ) -> None:
        """No support vector yet, a target per label."""
        self.start(X.shape[1], labels, multilabel=multilabel)
        self._engine.indicator = indicator

    def _begin_stream(self, width: int | None, mean_active: float, multilabel: bool) -> None:
        """No support vector yet; targets grow with the labels met."""
        if width is None:
            raise ConfigurationError("a dual network learns one example at a time once "
                                     "it knows its width: fit or partial_fit first")
        self.check_options()
        self.start(width, multilabel=multilabel)

    def _check_continues(self, X: Any) -> None:
        """Refuse ``X`` of another width than the support vectors'."""
        if X.shape[1] != self.n_features_in_:
            raise ConfigurationError(f"X has {X.shape[1]} features; the network has "
                                     f"{self.n_features_in_}")

    def _learn(self, X: sp.csr_matrix, y: Any, targets: Any, *, epochs: int, shuffle: bool,
               progress: Any, keys: np.ndarray | None = None, fitting: bool = False) -> None:
        """``epochs`` passes (``targets``: refused already), the progressive sigmoids
        fitted at the end."""
        progress = as_progress(progress)
        y_indptr, y_targets = encode_labels(self._labels, y, self.multilabel_)
        self._engine.cover_targets()
        ids = X.indices.astype(np.int64)
        vals = X.data.astype(np.float64)
        indptr = X.indptr.astype(np.int64)
        if shuffle and keys is None:
            keys = example_keys(X, y_indptr, y_targets)
        positives = self._engine.positives(y_indptr, y_targets)

        for epoch in range(epochs):  # (SNoW's early stop: after a pass without update)
            order = (shuffled(keys, self._engine.rng) if shuffle and keys is not None
                     else np.arange(X.shape[0])).astype(np.int64)
            mistakes = updates = 0
            for start, stop in chunks(order.size, progress is not None,
                                      None if progress is None else progress.every):
                done_m, done_u = self._engine.run(indptr, ids, vals, order[start:stop], y_indptr,
                                                y_targets, positives if epoch == 0 else None)
                mistakes += done_m
                updates += done_u
                if progress is not None:
                    progress(epoch, stop, order.size, done_m)
            self._engine.n_examples_seen += int(order.size)
            self._engine.mistakes.append(mistakes)
            self._engine.updates.append(updates)
            if updates == 0 and self.early_stop:
                break
        if self.calibrate == "progressive" and self._engine.progressive is not None \
                and self._engine.progressive.filled:
            fit_progressive(self._engine, self._engine.progressive)

    # ------------------------------------------------------------ prediction
    @property
    def classes_(self) -> np.ndarray:
        self._check_fitted()
        return self._labels.as_array()

    @property
    def n_support_(self) -> int:
        """Support vectors held (at most the budget)."""
        self._check_fitted()
        return int(self._engine.ring[USED])

    @property
    def dual_coef_(self) -> np.ndarray:
        """``float64[support vectors, targets]``: each support vector's coefficients."""
        self._check_fitted()
        return self._engine.alpha[:self.n_support_]

    @property
    def n_links_(self) -> int:
        """Non-zero coefficients: what a dual network holds in place of links."""
        self._check_fitted()
        return int(np.count_nonzero(self.dual_coef_))

    def target_scores(self, X: Any) -> np.ndarray:
        """``f_t(x) - theta`` of every target, ``float64[n, targets]``."""
        self._check_fitted()
        X = _canonical(X)
        self._check_continues(X)
        return self._engine.scores(X.indptr, X.indices, X.data)

    def kernel_values(self, X: Any) -> np.ndarray:
        """``K(s, x)`` of each support vector ``s`` with each row ``x`` of ``X``,
        ``float64[n, support vectors]``: a target's score is ``kernel_values(X) @
        dual_coef_[:, t] - theta``, which :meth:`snowpy.SnowClassifier.explain` lays out
        support vector by support vector."""
        self._check_fitted()
        X = _canonical(X)
        engine = self._engine
        n_support, width = self.n_support_, engine.width
        out = np.empty((X.shape[0], n_support))
        indptr, indices = X.indptr.astype(np.int64), X.indices.astype(np.int64)
        data = X.data.astype(np.float64)
        for start in range(0, n_support, 256):  # (an identity of coefficients, by blocks)
            end = min(start + 256, n_support)
            block = np.empty((X.shape[0], end - start))
            dual_scores(engine.kernel.compiled, engine.ids[start * width:end * width],
                        engine.vals[start * width:end * width], engine.lengths[start:end],
                        width, end - start, np.eye(end - start), indptr, indices, data,
                        engine.kernel.params, 0.0, block)
            out[:, start:end] = block
        return out

    # ------------------------------------------------------- what it says of itself
    def explain_terms(self, X: Any, targets: Any, scores: np.ndarray) -> list[dict[str, Any]]:
        """The terms of each of ``targets``' scores on the one row of ``X`` (``scores``,
        of every target), for :meth:`snowpy.SnowClassifier.explain`: each support vector's
        ``kernel`` value times its ``coefficient``, largest contributions first; they add
        up, less ``theta``, to the score (``residual``: the float64 rounding between)."""
        kernel = self.kernel_values(X)[0]
        theta = float(self.rule_params_["theta"])
        explained = []
        for t in targets:
            terms = kernel * self.dual_coef_[:, t]
            support = [{"support_vector": int(s), "kernel": float(kernel[s]),
                        "coefficient": float(self.dual_coef_[s, t]),
                        "contribution": float(terms[s])} for s in np.flatnonzero(terms)]
            support.sort(key=lambda row: -abs(row["contribution"]))
            explained.append({"theta": theta, "support_vectors": support,
                              "residual": float(scores[t] - (float(terms.sum()) - theta))})
        return explained

    def describe(self) -> dict[str, Any]:
        """What ``snowpy inspect`` shows: the rule, the labels, the support vectors (held,
        the budget, those with a positive coefficient by label), the training figures and
        the calibration."""
        alpha = self.dual_coef_
        return {
            "rule": self.rule, "rule_params": self.rule_params_,
            "classes": [str(c) for c in self.classes_],
            "support_vectors": self.n_support_, "budget": self._engine.kernel.budget,
            "positive_support_vectors": {str(label): int(np.count_nonzero(alpha[:, t] > 0))
                                         for t, label in enumerate(self.classes_)},
            "training": {"examples": int(self.n_examples_seen_),
                         "mistakes_per_epoch": list(self.mistakes_)},
            "calibration": self.calibration_.header() if self.calibration_ is not None
            else None,
        }

    # ------------------------------------------ what a classifier asks of a network
    @property
    def feature_ids_(self) -> np.ndarray:
        """The features of the support vectors, sorted."""
        self._check_fitted()
        return np.unique(self._engine.held(self._engine.ids))

    def link_counts(self, columns: Any = None) -> np.ndarray:
        """Support vectors holding each feature (of :attr:`feature_ids_`, or ``columns``)."""
        columns = self.feature_ids_ if columns is None else np.asarray(columns)
        held = np.sort(self._engine.held(self._engine.ids))
        return np.searchsorted(held, columns, side="right") - \
            np.searchsorted(held, columns, side="left")

    def prune(self) -> int:
        """Nothing to drop: the budget bounds the support vectors. Returns 0."""
        return 0

    # ------------------------------------------------------------ model files
    def to_state(self, inference_only: bool = False) -> tuple[dict, dict]:
        """The network as a header (model kind ``dual``) and named arrays: the support
        vectors without gaps (their feature ids and strengths one after the other, and
        each one's length), their coefficients per target, the ring position of the
        oldest, the labels, the options, the calibration and the progressive window. The
        support vectors are what prediction needs, so ``inference_only`` keeps all."""
        engine = self.engine_
        part: dict[str, Any] = {
            "options": plain(self.get_params()), "rule_params": plain(self.rule_params_),
            "labels": plain(list(engine.labels.labels)), "multilabel": self.multilabel_,
            "indicator": bool(engine.indicator), "n_features": self.n_features_in_,
            "oldest": int(engine.ring[OLDEST]), "mistakes": list(self.mistakes_),
            "updates": list(self.updates_), "examples_seen": int(self.n_examples_seen_),
            "calibration": None,  # (its place: calibration_to_file fills it)
        }
        arrays = {"sv_ids": engine.held(engine.ids), "sv_vals": engine.held(engine.vals),
                  "sv_len": engine.lengths[:engine.n_support].copy(),
                  "sv_alpha": np.ascontiguousarray(self.dual_coef_)}
        calibration_to_file(self.calibration_, engine.progressive, part, arrays)
        return {"kind": "dual", "dual": part}, arrays

    @classmethod
    def from_state(cls, header: dict[str, Any], arrays: dict[str, np.ndarray],
                   where: str = "model") -> DualNetwork:
        """The network :meth:`to_state` described; every part is checked to agree
        (lengths, shapes, ids within the feature space, the budget) before any is used."""
        part = header.get("dual")
        header = part if isinstance(part, dict) else {}
        try:
            options = upgraded(header["options"])
            rule = options.pop("rule")
            labels = list(header["labels"])
            net = cls(rule, **options)
            net.check_options()
            net.start(int(header["n_features"]), labels, multilabel=bool(header["multilabel"]))
        except (KeyError, TypeError, ValueError, SnowpyError) as exc:
            raise ModelFileError(f"{where}: the dual network description is invalid "
                                 f"({type(exc).__name__}: {exc})") from None
        lengths, alpha = arrays.get("sv_len"), arrays.get("sv_alpha")
        ids, vals = arrays.get("sv_ids"), arrays.get("sv_vals")
        if lengths is None or alpha is None or ids is None or vals is None or \
                lengths.ndim != 1 or alpha.shape != (lengths.size, max(len(labels), 1)) or \
                ids.size != vals.size or ids.size != int(lengths.sum()) or \
                np.any(lengths < 0) or (ids.size and (ids.min() < 0 or
                                                      ids.max() >= net.n_features_in_)):
            raise ModelFileError(f"{where}: the support vectors are inconsistent")
        engine = net.engine_
        budget = engine.kernel.budget
        if budget and lengths.size > budget:
            raise ModelFileError(f"{where}: {lengths.size} support vectors exceed the "
                                 f"budget {budget}")
        engine.adopt(ids, vals, lengths, alpha, int(header.get("oldest", 0)), budget)
        engine.mistakes = [int(v) for v in header.get("mistakes", [])]
        engine.updates = [int(v) for v in header.get("updates", [])]
        engine.n_examples_seen = int(header.get("examples_seen", 0))
        engine.indicator = bool(header.get("indicator", False))
        calibration_from_file(engine, net.calibrate, header, arrays, where)
        return net


def _canonical(X: Any) -> sp.csr_matrix:
    """CSR with sorted, unique ids per row (the similarity merges them)."""
    X = as_csr(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def _refuse_targets(targets: Any) -> None:
    if targets is not None:
        raise ConfigurationError("targets= (SNoW's sequential model) is not available to dual "
                                 "rules: every target scores every example")


