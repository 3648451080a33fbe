"""``snowpy.Network``: a sparse one-vs-all network of target nodes.

One target node per label, each a linear threshold unit over the features,
trained online by a pluggable update rule, predicting by winner-take-all
(or, for multi-label networks, every target whose activation reaches the
threshold).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numba
import numpy as np
import scipy.sparse as sp

from snowpy._validation import as_csr, check_length
from snowpy.base import RuleParamsEstimator
from snowpy.exceptions import ConfigurationError, NotFittedError, NumericalError, PluginError
from snowpy.network.calibrating import fit_progressive, held_out_scores, keep_progressive
from snowpy.network.engine import MAX_MAGNITUDE, run_epoch
from snowpy.network.labels import LabelIndex, is_multilabel
from snowpy.network.storage import STORAGES, WeightTable
from snowpy.plugins import get_rule
from snowpy.rules.spec import BuildContext, RuleKernel, RuleSpec

__all__ = ["Network", "NumericalWarning"]

_NO_TARGETS = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int32))
_NO_SCORES = np.empty((0, 0), dtype=np.float64)


class NumericalWarning(RuntimeWarning):
    """Weights reached the largest magnitude kept (``1e100``) and were clamped."""


class Network(RuleParamsEstimator):
    """A sparse network of target nodes trained online by an update rule.

    Parameters
    ----------
    rule : str, default "winnow"
        Name of an installed update rule (``snowpy plugins`` lists them):
        ``perceptron``, ``winnow``, ``balanced-winnow``, ``thick-separator``,
        ``aggressive``, ``passive-aggressive`` or a plugin's.
    epochs : int, default 10
        Passes over the data in :meth:`fit` (SNoW's cycles).
    average : bool, default True
        Predict with the average of the weights over all examples seen
        (the averaged Perceptron, seed 000 section 6.2), for any rule.
    shuffle : bool, default True
        Present the examples of each epoch of :meth:`fit` in a new random
        order. :meth:`partial_fit` keeps the given order.
    seed : int or None, default 0
        Seed of the shuffling; a fixed seed gives identical models.
    bias : bool or float, default True
        Add SNoW's fixed feature to every example, a learned per-target
        threshold. ``True`` gives it strength 1 (SNoW's, right for binary
        features); a number sets the strength, which multiplicative rules
        want close to the strengths of the other features (for example
        ``0.1`` with l2-normalised rows); ``False`` or ``0`` leaves it out.
    early_stop : bool, default True
        Stop :meth:`fit` after an epoch that made no update (SNoW).
    storage : {"compact", "dense"}, default "compact"
        ``"compact"`` keeps rows only for features seen in training (memory
        proportional to them); ``"dense"`` one row per column of ``X``.
    multiclass : {"ova", "constraint"}, default "ova"
        ``"ova"``: every target learns its own threshold on every example
        (one-vs-all, SNoW's default). ``"constraint"``: SNoW's constraint
        classification (``-O +``, single-label networks): an example updates
        only its true target (promoted) and the targets whose activation comes
        within ``thickness`` of it (demoted), as the multiclass Perceptron
        does; ``theta`` then plays no part in training.
    calibrate : {None, "cv", "holdout", "progressive"}, default None
        Fit a sigmoid per target (:mod:`snowpy.calibration`) so that
        :meth:`predict_proba` gives probabilities: ``"cv"`` trains
        ``calibration_folds`` networks on the other folds to score each
        example out of fold (as scikit-learn's CalibratedClassifierCV does),
        ``"holdout"`` only the first of those folds; the network itself is
        always trained on all the data, so calibration leaves its
        predictions unchanged. ``"progressive"`` costs nothing more: it fits
        the sigmoids on the scores each example got *before* the network
        learned from it (the first epoch of :meth:`fit`, and every
        :meth:`partial_fit`, the most recent 100,000 kept), the choice for
        streaming training; they are refitted when probabilities are next
        asked for.
    calibration_folds : int, default 3
        Folds for ``calibrate``.
    **rule_params
        Parameters of the rule (``alpha=1.5``, ``theta=2``, ``thickness=1``);
        checked at fit against what the rule declares. Every rule accepts
        ``theta``, ``thickness`` and ``negative_thickness``.

    Attributes
    ----------
    classes_ : ndarray
        The labels, in target order.
    multilabel_ : bool
        Whether the network was trained with a set of labels per example.
    rule_params_ : dict
        Every rule parameter as used, defaults and derived values included.
    mistakes_ : list of int
        Per epoch (per call for :meth:`partial_fit`), the examples the
        network mispredicted before learning from them.
    updates_ : list of int
        Per epoch, the target updates made.
    promotions_, demotions_ : ndarray of int
        Per target, updates on positive and on negative examples.
    n_examples_seen_ : int
        Examples processed by training, epochs counted.
    overflows_, underflows_ : int
        Weight updates whose result was clamped to the largest magnitude kept
        (``1e100``; a :class:`NumericalWarning` says so) or raised to the
        smallest (``1e-100``, where a multiplicative weight has effectively
        reached zero; counted, not warned about).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 1]]))
    >>> net = Network("perceptron").fit(X, ["a", "b", "a"])
    >>> net.predict(X).tolist()
    ['a', 'b', 'a']
    >>> net.classes_.tolist(), net.mistakes_[0] > 0
    (['a', 'b'], True)
    """

    _option_names = ("rule", "epochs", "average", "shuffle", "seed", "bias", "early_stop",
                     "storage", "multiclass", "calibrate", "calibration_folds")

    def __init__(
        self,
        rule: str = "winnow",
        *,
        epochs: int = 10,
        average: bool = True,
        shuffle: bool = True,
        seed: int | None = 0,
        bias: bool | float = True,
        early_stop: bool = True,
        storage: str = "compact",
        multiclass: str = "ova",
        calibrate: str | None = None,
        calibration_folds: int = 3,
        **rule_params: Any,
    ) -> None:
        self.rule = rule
        self.epochs = epochs
        self.average = average
        self.shuffle = shuffle
        self.seed = seed
        self.bias = bias
        self.early_stop = early_stop
        self.storage = storage
        self.multiclass = multiclass
        self.calibrate = calibrate
        self.calibration_folds = calibration_folds
        self.rule_params = rule_params

    # ---------------------------------------------------------------- set-up
    def resolve_rule(self) -> tuple[RuleSpec, dict[str, Any]]:
        """Look up the rule and validate its parameters, without training.

        Raises
        ------
        UnknownNameError
            The rule is not installed (the message lists those that are).
        ConfigurationError
            A parameter is unknown to the rule or out of its range.
        """
        if not isinstance(self.rule, str):
            raise ConfigurationError(f"rule must be a rule name, got {self.rule!r}")
        spec = get_rule(self.rule)
        return spec, spec.validate(self.rule_params)

    def _check_options(self) -> None:
        epochs = self.epochs
        if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 1:
            raise ConfigurationError(f"epochs must be a positive integer, got {self.epochs!r}")
        if self.calibrate not in (None, "cv", "holdout", "progressive"):
            raise ConfigurationError(
                f"calibrate must be None, 'cv', 'holdout' or 'progressive', "
                f"got {self.calibrate!r}"
            )
        if isinstance(self.calibration_folds, bool) or not isinstance(
                self.calibration_folds, (int, np.integer)) or self.calibration_folds < 2:
            raise ConfigurationError(
                f"calibration_folds must be an integer >= 2, got {self.calibration_folds!r}"
            )
        if self.multiclass not in ("ova", "constraint"):
            raise ConfigurationError(
                f"multiclass must be 'ova' or 'constraint', got {self.multiclass!r}"
            )
        if self.storage not in STORAGES:
            raise ConfigurationError(
                f"storage must be one of {', '.join(STORAGES)}, got {self.storage!r}"
            )
        if self.seed is not None and not isinstance(self.seed, (int, np.integer)):
            raise ConfigurationError(f"seed must be an integer or None, got {self.seed!r}")
        self._bias_strength()

    def _bias_strength(self) -> float:
        strength = self.bias
        if isinstance(strength, (bool, np.bool_)):
            return 1.0 if strength else 0.0
        if not isinstance(strength, (int, float, np.number)) or not np.isfinite(strength) \
                or strength < 0:
            raise ConfigurationError(
                f"bias must be true, false or a non-negative strength, got {strength!r}"
            )
        return float(strength)

    def _initialise(self, X: sp.csr_matrix, multilabel: bool) -> None:
        self._check_options()
        spec, params = self.resolve_rule()
        context = BuildContext(
            mean_active_features=X.nnz / max(X.shape[0], 1) + (self._bias_strength() > 0),
            n_features=X.shape[1],
        )
        kernel = spec.make_kernel(params, context)
        params.update(kernel.resolved)
        too_large = [w for w in kernel.initial_weights if abs(w) > MAX_MAGNITUDE]
        if too_large:
            raise ConfigurationError(
                f"rule {spec.name!r}: initial weight {too_large[0]:g} exceeds the largest "
                f"magnitude kept ({MAX_MAGNITUDE:g}); lower theta or set initial_weight"
            )
        self.rule_spec_: RuleSpec = spec
        self.rule_params_: dict[str, Any] = params
        self.kernel_: RuleKernel = kernel
        self.multilabel_ = multilabel
        if multilabel and self.multiclass == "constraint":
            raise ConfigurationError("multiclass='constraint' needs one label per example")
        self.n_features_in_ = X.shape[1]
        self._labels = LabelIndex()
        self._table = WeightTable(
            kernel, 0, X.shape[1], storage=self.storage, average=bool(self.average)
        )
        self._rng = np.random.default_rng(self.seed)
        self.mistakes_: list[int] = []
        self.updates_: list[int] = []
        self.n_examples_seen_ = 0
        self.overflows_ = 0
        self.underflows_ = 0
        self._progressive = None
        self._progressive_stale = False
        self._effective_cache: dict[bool, np.ndarray] = {}

    def _is_fitted(self) -> bool:
        return hasattr(self, "_table")

    def _check_fitted(self) -> None:
        if not self._is_fitted():
            raise NotFittedError(
                f"this {type(self).__name__} is not trained yet; call fit or partial_fit first"
            )

    # -------------------------------------------------------------- training
    def fit(self, X: Any, y: Sequence[Any], *, targets: Sequence[Any] | None = None,
            progress: Any = None) -> Network:
        """Train a new network for ``epochs`` passes over ``(X, y)``.

        Parameters
        ----------
        X : sparse matrix or array, shape (n_examples, n_features)
            Active features: binary presence or real strengths.
        y : sequence
            One label per example, or one collection of labels per example
            (multi-label; an empty collection is negative for every target).
        targets : sequence of collections of labels, optional
            Per example, the only targets that see it (SNoW's sequential
            model); targets not listed are neither trained nor predicted.
        progress : callable, optional
            ``progress(epoch, done, total, mistakes)`` is called as training
            goes: after 1, 2, 4, 8... examples of each epoch (and at least
            every 16,384), with the mistakes made since the previous call.
            Training in such chunks gives the same model.

        Returns
        -------
        self
        """
        X = as_csr(X)
        check_length(X.shape[0], y, "y")
        y = _label_array(y)
        multilabel = is_multilabel(y)
        self._check_options()
        labels = LabelIndex(_sorted_labels(y, multilabel))
        # the fold networks are trained (and freed) before the final one exists, so
        # calibrating never holds two networks at once
        held_out = held_out_scores(self, X, y, targets, labels, multilabel) \
            if self.calibrate in ("cv", "holdout") else None
        self._initialise(X, multilabel)
        self._labels = labels
        self.calibration_ = None
        self._train(X, y, targets, epochs=int(self.epochs), shuffle=bool(self.shuffle),
                    progress=progress)
        if self.calibrate == "progressive":
            fit_progressive(self)
        if held_out is not None:
            from snowpy.calibration import Calibration

            scores, positives, covered = held_out
            self.calibration_ = Calibration.fit(
                scores[covered], positives[covered],
                normalize="none" if multilabel else "sum", method=self.calibrate,
            )
        return self

    def _start(self, X: sp.csr_matrix, labels: Sequence[Any], multilabel: bool) -> None:
        """Create the network from a first block and the full label set (streamed fits)."""
        self._initialise(X, multilabel)
        self._labels = LabelIndex(labels)
        self.calibration_ = None

    def partial_fit(
        self, X: Any, y: Sequence[Any], *, targets: Sequence[Any] | None = None,
        progress: Any = None,
    ) -> Network:
        """Learn from ``(X, y)`` in one pass, in the given order.

        The first call creates the network; a label not seen before grows a
        new target node (no ``classes=`` argument is needed).
        """
        if self._is_fitted() and self._table.frozen:
            raise ConfigurationError(
                "this network was loaded from an inference-only model file: it keeps no "
                "training state to continue from; train afresh with fit, or keep a full "
                "model file (saved without inference_only) to continue training"
            )
        X = as_csr(X)
        check_length(X.shape[0], y, "y")
        y = _label_array(y)
        multilabel = is_multilabel(y) if len(y) else getattr(self, "multilabel_", False)
        if not self._is_fitted():
            self._initialise(X, multilabel)
        elif multilabel != self.multilabel_:
            kind = "multi-label" if self.multilabel_ else "single-label"
            raise ConfigurationError(f"this network was trained {kind}; y must be {kind} too")
        return self._train(X, y, targets, epochs=1, shuffle=False, progress=progress)

    def _learn_encoded(self, X: Any, codes: np.ndarray, progress: Any = None) -> Network:
        """One pass over a block of single-label examples whose labels are given as
        target numbers (streamed fits, after :meth:`_start`): no per-block encoding."""
        X = as_csr(X)
        check_length(X.shape[0], codes, "y")
        return self._train(X, None, None, epochs=1, shuffle=False, progress=progress,
                           codes=codes)

    def _train(
        self, X: sp.csr_matrix, y: Sequence[Any] | None, targets: Any, *, epochs: int,
        shuffle: bool, progress: Any = None, codes: np.ndarray | None = None,
    ) -> Network:
        self._check_width(X)
        table = self._table
        if codes is None:
            y_indptr, y_targets = _encode_labels(self._labels, y, self.multilabel_)
        else:
            y_indptr = np.arange(len(codes) + 1, dtype=np.int64)
            y_targets = np.asarray(codes, dtype=np.int32)
        if targets is not None:
            check_length(X.shape[0], targets, "targets")
            a_indptr, a_targets = self._labels.encode(targets, multilabel=True)
        else:
            a_indptr, a_targets = _NO_TARGETS
        table.add_targets(len(self._labels) - table.n_targets)
        rows = table.training_rows(X)
        self._effective_cache.clear()
        params = self.rule_params_
        counts = np.zeros((table.n_targets, 2), dtype=np.int64)
        planes = np.asarray(self.kernel_.planes, dtype=np.float64)
        indptr = X.indptr.astype(np.int64, copy=False)
        max_active = int(np.diff(indptr).max()) if X.shape[0] else 0
        n = X.shape[0]
        run = (table, planes, indptr, rows, X.data, y_indptr, y_targets, a_indptr, a_targets,
               params, counts, max_active)
        overflows = 0
        progressive = self.calibrate == "progressive"
        record = np.empty((n, table.n_targets)) if progressive else None
        try:
            for epoch in range(epochs):
                order = (self._rng.permutation(n) if shuffle else np.arange(n)).astype(np.int64)
                mistakes, updates, epoch_overflows = self._epoch(
                    epoch, order, run, progress, record if epoch == 0 else None)
                overflows += epoch_overflows
                self.mistakes_.append(mistakes)
                self.updates_.append(updates)
                if self.early_stop and updates == 0:
                    break
        finally:  # an interrupted training still leaves a consistent network
            self._add_counts(counts)
        if progressive:
            positives = np.zeros(record.shape, dtype=bool)
            positives[np.repeat(np.arange(n), np.diff(y_indptr)), y_targets] = True
            keep_progressive(self, record, positives)
        if overflows:
            self.overflows_ += overflows
            warnings.warn(
                f"{overflows} weight updates exceeded the largest magnitude kept "
                f"({MAX_MAGNITUDE:g}) and were clamped; use milder promotion/demotion, or a "
                "bias strength closer to the feature strengths",
                NumericalWarning,
                stacklevel=3,
            )
        return self

    def _epoch(self, epoch: int, order: np.ndarray, run: tuple, progress: Any,
               record: np.ndarray | None = None) -> tuple[int, int, int]:
        """One pass over ``order`` (in chunks when reporting progress).

        ``record``, when given, receives each example's progressive scores (row = example).
        """
        (table, planes, indptr, rows, data, y_indptr, y_targets, a_indptr, a_targets,
         params, counts, max_active) = run
        mistakes = updates = overflows = 0
        n = order.size
        for start, stop in _chunks(n, progress is not None):
            chunk_scores = None
            if record is not None:
                chunk_scores = np.empty((stop - start, table.n_targets), dtype=np.float64)
            result = self._run_epoch(table, planes, indptr, rows, data, order[start:stop],
                                     y_indptr, y_targets, a_indptr, a_targets, params, counts,
                                     max_active, chunk_scores)
            if record is not None:
                record[order[start:stop]] = chunk_scores
            chunk_mistakes, chunk_updates, chunk_overflows, underflows, nonfinite, seen = result
            processed = seen - table.seen
            table.seen = seen
            self.n_examples_seen_ += processed
            self.underflows_ += underflows
            if nonfinite:
                raise NumericalError(
                    f"rule {self.rule!r} produced NaN at example {int(order[start + processed])};"
                    f" check its parameters {self.kernel_.params.tolist()}"
                )
            mistakes += int(chunk_mistakes)
            updates += int(chunk_updates)
            overflows += int(chunk_overflows)
            if progress is not None:
                self._effective_cache.clear()
                progress(epoch, stop, n, int(chunk_mistakes))
        return mistakes, updates, overflows

    def _run_epoch(self, table: WeightTable, planes, indptr, rows, data, order, y_indptr,
                   y_targets, a_indptr, a_targets, params, counts, max_active, scores=None):
        try:
            return run_epoch(
                self.kernel_.compiled, table.W, table.S, planes, self.kernel_.params,
                indptr, rows, data, order, y_indptr, y_targets, a_indptr, a_targets,
                float(params["theta"]), float(params["thickness"]),
                float(params["negative_thickness"]), self._bias_strength(), bool(self.multilabel_),
                self.multiclass == "constraint",
                table.U, table.seen, counts, max_active,
                _NO_SCORES if scores is None else scores,
            )
        except numba.core.errors.TypingError as exc:
            first = str(exc).strip().splitlines()[0]
            raise PluginError(
                f"rule {self.rule!r}: its update kernel does not compile against the kernel "
                f"contract (see snowpy.rules.spec): {first}"
            ) from exc
        except (ArithmeticError, IndexError, ValueError) as exc:
            raise PluginError(
                f"rule {self.rule!r}: its update kernel failed: {type(exc).__name__}: {exc}"
            ) from exc

    def _add_counts(self, counts: np.ndarray) -> None:
        n_targets = counts.shape[0]
        for name, column in (("promotions_", 0), ("demotions_", 1)):
            previous = getattr(self, name, np.zeros(0, dtype=np.int64))
            grown = np.zeros(n_targets, dtype=np.int64)
            grown[: previous.size] = previous
            setattr(self, name, grown + counts[:, column])

    def _check_width(self, X: sp.csr_matrix) -> None:
        if X.shape[1] != self.n_features_in_:
            raise ConfigurationError(
                f"X has {X.shape[1]} features but the network was trained with "
                f"{self.n_features_in_}"
            )

    # ------------------------------------------------------------ prediction
    @property
    def classes_(self) -> np.ndarray:
        """The labels, one per target node, in target order."""
        self._check_fitted()
        return self._labels.as_array()

    def effective_weights(self) -> np.ndarray:
        """Weights used for prediction, ``float64[rows, targets]`` (row 0: bias).

        Averaged when ``average`` is on. In compact storage rows follow the
        order in which features were first seen (see ``feature_ids``) and a
        last row holds the weight of features never seen.
        """
        self._check_fitted()
        averaged = bool(self.average)
        cached = self._effective_cache.get(averaged)
        if cached is None:
            cached = self._effective_cache[averaged] = self._table.effective(averaged=averaged)
        return cached

    def decision_function(self, X: Any) -> np.ndarray:
        """Activation minus threshold of every target, ``float64[n, targets]``.

        Positive means the target claims the example.
        """
        self._check_fitted()
        X = as_csr(X)
        self._check_width(X)
        weights = self.effective_weights()
        rows = self._table.prediction_rows(X)
        mapped = sp.csr_matrix((X.data, rows, X.indptr), shape=(X.shape[0], weights.shape[0]))
        scores = np.asarray(mapped @ weights)
        scores += self._bias_strength() * weights[0] - float(self.rule_params_["theta"])
        return scores

    def predict_proba(self, X: Any) -> np.ndarray:
        """Calibrated probability of every target, ``float64[n, targets]``.

        Rows sum to 1 for single-label networks; for multi-label networks
        each column is that label's own probability. Needs ``calibrate``.
        """
        self._check_fitted()
        if getattr(self, "_progressive", None) is not None and self._progressive_stale:
            fit_progressive(self)
        calibration = getattr(self, "calibration_", None)
        if calibration is None:
            raise NotFittedError(
                "this network has no calibration; train it with calibrate='cv', 'holdout' or "
                "'progressive' to get probabilities"
            )
        return calibration.probabilities(self.decision_function(X))

    def predict(self, X: Any, *, targets: Sequence[Any] | None = None) -> Any:
        """Predicted label of each example (winner-take-all).

        For a multi-label network, a list with the tuple of labels whose
        target reaches the threshold, per example. ``targets`` restricts each
        example to some targets, as in :meth:`fit`.
        """
        scores = self.decision_function(X)
        allowed = self._allowed_mask(targets, scores.shape)
        classes = self.classes_
        if self.multilabel_:
            claimed = (scores >= 0) & allowed
            return [tuple(classes[np.flatnonzero(row)].tolist()) for row in claimed]
        if allowed is not True:
            scores = np.where(allowed, scores, -np.inf)
        return classes[np.argmax(scores, axis=1)] if scores.shape[1] else classes[:0]

    def _allowed_mask(self, targets: Any, shape: tuple[int, int]) -> Any:
        if targets is None:
            return True
        check_length(shape[0], targets, "targets")
        mask = np.zeros(shape, dtype=bool)
        for i, labels in enumerate(targets):
            for label in labels:
                target = self._labels.find(label)
                if target is not None:
                    mask[i, target] = True
        return mask

    def save(self, path: Any, *, inference_only: bool = False) -> Any:
        """Save the trained network atomically (:func:`snowpy.save`)."""
        from snowpy.persistence import save

        return save(self, path, inference_only=inference_only)

    def score(self, X: Any, y: Sequence[Any]) -> float:
        """Accuracy (exact set match for multi-label networks)."""
        predicted = self.predict(X)
        if self.multilabel_:
            return float(np.mean([set(p) == set(t) for p, t in zip(predicted, y)]))
        return float(np.mean(np.asarray(predicted, dtype=object) == np.asarray(y, dtype=object)))

    @property
    def coef_(self) -> np.ndarray:
        """Effective weights as scikit-learn lays them out, ``[targets, n_features]``."""
        weights = self.effective_weights()
        initial = self.kernel_.initial_effective_weight
        coef = np.full((weights.shape[1], self.n_features_in_), initial)
        coef[:, self._table.feature_ids] = weights[1 : self._table.n_rows].T
        return coef

    @property
    def intercept_(self) -> np.ndarray:
        """Bias weight minus threshold, per target (zero bias when ``bias=False``)."""
        weights = self.effective_weights()
        return self._bias_strength() * weights[0] - float(self.rule_params_["theta"])

    @property
    def n_iter_(self) -> int:
        """Epochs run by the last :meth:`fit` (scikit-learn's name)."""
        self._check_fitted()
        return len(self.mistakes_)


def _chunks(n: int, chunked: bool) -> list[tuple[int, int]]:
    """Example ranges of one epoch: whole, or cut at 1, 2, 4, 8... and every 16,384."""
    if not chunked:
        return [(0, n)]
    bounds = [0]
    mark = 1
    while bounds[-1] < n:
        step = min(mark, bounds[-1] + 16384)
        bounds.append(min(n, max(step, bounds[-1] + 1)))
        if bounds[-1] >= mark:
            mark *= 2
    return list(zip(bounds[:-1], bounds[1:]))


def _label_array(y: Sequence[Any]) -> Any:
    """Single labels all str or all int as a numpy array (vectorised handling), else ``y``."""
    if isinstance(y, np.ndarray) or not isinstance(y, (list, tuple)) or not y:
        return y
    kinds = set(map(type, y))
    if all(issubclass(kind, str) for kind in kinds):
        return np.array(y, dtype=str)
    if all(issubclass(kind, (int, np.integer)) and not issubclass(kind, (bool, np.bool_))
           for kind in kinds):
        return np.array(y, dtype=np.int64)
    return y


def _sorted_labels(y: Sequence[Any], multilabel: bool) -> list[Any]:
    """The distinct labels of ``y``, sorted when they can be (scikit-learn's order)."""
    if not multilabel and isinstance(y, np.ndarray) and y.dtype.kind in "iuUSb":
        return np.unique(y).tolist()
    index = LabelIndex()
    for item in y:
        for label in item if multilabel else (item,):
            index.add(label)
    try:
        return sorted(index.labels)
    except TypeError:
        return index.labels


def _encode_labels(index: LabelIndex, y: Sequence[Any], multilabel: bool):
    if not multilabel and isinstance(y, np.ndarray) and y.dtype.kind in "iuUSb":
        uniques, inverse = np.unique(y, return_inverse=True)
        mapping = np.array([index.add(label) for label in uniques.tolist()], dtype=np.int32)
        return np.arange(len(y) + 1, dtype=np.int64), mapping[inverse.reshape(-1)]
    return index.encode(y, multilabel=multilabel)
