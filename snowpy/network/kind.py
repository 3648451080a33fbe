"""What every kind of network is: the public protocol, and what is written once for all.

A kind of network (:class:`~snowpy.Network`: links; :class:`~snowpy.Cloud`: members; a
network a plugin brings for its rule, ``RuleSpec.network``: the kernel Perceptron's
support vectors) is an estimator over an engine
(``engine_``: what it learned, and the operations on it). It supplies
:meth:`~NetworkKind.target_scores` and its model file (``to_state`` and
``from_state``, registered with :func:`snowpy.model_kinds.model_kind`); its engine
supplies the one-example protocol (``score_one``, ``learn_one``, ``score_text``,
``learn_text``, ``label_of``, ``probabilities_of``, ``check_label``). Written here
once over them: predictions from target scores (winner-take-all, multi-label claims,
abstention, probabilities) and River's protocol. A kind that trains its own engine on
a matrix also takes :meth:`~NetworkKind.fit` and :meth:`~NetworkKind.partial_fit` from
here (the checks, the labels, cross-fitted calibration), supplying ``_as_input``,
``_begin_fit``, ``_begin_stream``, ``_check_continues`` and ``_learn``."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from snowpy._core.online import checked
from snowpy._lazy import lazy_module
from snowpy._validation import apply_weights, as_csr, check_length, require_rows
from snowpy.base import Estimator, available_if
from snowpy.exceptions import ConfigurationError, NotFittedError
from snowpy.network.calibrating import held_out_scores, normalisation_of
from snowpy.network.engine import Blocks
from snowpy.network.labels import (
    COLLECTIONS,
    LabelIndex,
    check_y,
    is_multilabel,
    label_array,
    sorted_labels,
)
from snowpy.network.options import calibrating
from snowpy.progress import phase

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp
else:
    sp = lazy_module("scipy.sparse")

__all__ = ["ABSTAIN", "NetworkKind", "gives_probabilities", "parse_example"]

#: Rows scored at once by ``predict`` (bounds its memory for many targets).
_PREDICT_BLOCK = 8192

#: What ``predict(..., abstain=k)`` answers for an example it abstains on.
ABSTAIN = None


def gives_probabilities(estimator: Any) -> bool:
    """this model has no calibration; train it with calibrate='cv' to get probabilities
    (or calibrate='holdout', or calibrate='progressive')"""
    return estimator.calibrate not in (None, "none") or \
        getattr(estimator, "calibration_", None) is not None


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


class NetworkKind(Estimator):
    """The base of every kind of network (see the module's description)."""

    calibrate: Any
    epochs: Any
    shuffle: Any
    classes_: Any
    if TYPE_CHECKING:  # (what each kind has: its options' check and its learned state)
        def check_options(self) -> None: ...

        @property
        def engine_(self) -> Any: ...

    # --------------------------------------- fitted attributes: the engine's
    @property
    def rule_params_(self) -> Any:
        """Every rule parameter as used, defaults and derived values included."""
        return self.engine_.params

    @property
    def multilabel_(self) -> bool:
        """Whether the network was trained with a set of labels per example."""
        return bool(self.engine_.multilabel)

    @property
    def n_features_in_(self) -> int:
        """The width of ``X`` the network takes."""
        return int(self.engine_.n_features)

    @property
    def mistakes_(self) -> list[int]:
        """Per epoch (per call for :meth:`partial_fit`, per run of :meth:`learn_one`),
        the examples mispredicted before they were learned."""
        return self.engine_.mistakes

    @property
    def updates_(self) -> list[int]:
        """Per epoch, the target updates made."""
        return self.engine_.updates

    @property
    def n_examples_seen_(self) -> int:
        """Examples processed by training, epochs counted."""
        return int(self.engine_.n_examples_seen)

    @property
    def calibration_(self) -> Any:
        """The sigmoids from scores to probabilities, or None."""
        return self.engine_.calibration

    @calibration_.setter
    def calibration_(self, calibration: Any) -> None:
        self.engine_.calibration = calibration

    @property
    def _labels(self) -> LabelIndex:  # (a cloud's: its members')
        return self.engine_.labels

    @property
    def _indicator(self) -> bool:
        return bool(self.engine_.indicator)

    def target_scores(self, X: Any) -> np.ndarray:
        """Activation minus threshold of every target, ``float64[n, targets]`` (positive:
        the target claims the example); what every prediction below derives from."""
        raise NotImplementedError

    # ----------------------------------------- predictions from target scores
    def decision_function(self, X: Any) -> np.ndarray:
        """scikit-learn's decision scores: :meth:`target_scores`, ``float64[n, targets]``,
        except for a single-label network of two labels, where it is ``float64[n]``: the
        score of ``classes_[1]`` minus that of ``classes_[0]`` (positive: ``classes_[1]``
        wins), as ``roc_auc_score`` and binary scorers expect.
        """
        scores = self.target_scores(X)
        if scores.shape[1] == 2 and not self.multilabel_:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X: Any, *, targets: Sequence[Any] | None = None,
                abstain: float | None = None) -> Any:
        """Predicted label of each example (winner-take-all).

        For a multi-label network, a list with the tuple of labels whose
        target reaches the threshold, per example. ``targets`` restricts each
        example to some targets, as in :meth:`fit`.

        ``abstain=k`` (SNoW's ``-p k``): an example whose two most probable labels
        are less than ``k`` apart gets no label, :data:`ABSTAIN` (``None``), in an
        object array. Probabilities are the calibrated ones, or for an uncalibrated
        network the softmax of the activations (SNoW's normalised activations).
        """
        if abstain is not None:
            return self._predict_or_abstain(X, targets, float(abstain))
        self._check_fitted()
        X = as_csr(X)
        if targets is not None:
            check_length(X.shape[0], targets, "targets")
        classes = self.classes_
        if self.multilabel_:
            claimed: list[tuple] = []
            for begin in range(0, X.shape[0], _PREDICT_BLOCK):
                scores = self.target_scores(X[begin:begin + _PREDICT_BLOCK])
                part = None if targets is None else targets[begin:begin + _PREDICT_BLOCK]
                above = (scores >= 0) & self._allowed_mask(part, scores.shape)
                claimed.extend(tuple(classes[np.flatnonzero(row)].tolist()) for row in above)
            if self._indicator:  # trained on an indicator matrix
                return self._as_indicator(claimed)
            return claimed
        if not len(classes):
            return classes[:0]
        winners = np.empty(X.shape[0], dtype=np.int64)
        for begin in range(0, X.shape[0], _PREDICT_BLOCK):
            scores = self.target_scores(X[begin:begin + _PREDICT_BLOCK])
            part = None if targets is None else targets[begin:begin + _PREDICT_BLOCK]
            allowed = self._allowed_mask(part, scores.shape)
            if allowed is not True:
                scores = np.where(allowed, scores, -np.inf)
            winners[begin:begin + scores.shape[0]] = np.argmax(scores, axis=1)
        return classes[winners]

    def _predict_or_abstain(self, X: Any, targets: Any, margin: float) -> np.ndarray:
        if self.multilabel_:
            raise ConfigurationError("abstain applies to single-label networks (a "
                                     "multi-label network already answers no label at all)")
        if not 0.0 <= margin <= 1.0:
            raise ConfigurationError(f"abstain must be a probability margin from 0 to 1, "
                                     f"got {margin}")
        labels = self.predict(X, targets=targets)
        normalised = self.normalised_scores(X)
        top = np.sort(normalised, axis=1)[:, -2:] if normalised.shape[1] > 1 else None
        out = np.asarray(labels, dtype=object).copy()
        if top is not None:
            out[(top[:, 1] - top[:, 0]) < margin] = ABSTAIN
        return out

    @available_if(gives_probabilities, NotFittedError)
    def predict_proba(self, X: Any) -> np.ndarray:
        """Calibrated probability of every target, ``float64[n, targets]``.

        Rows sum to 1 for single-label networks; for multi-label networks
        each column is that label's own probability. Needs ``calibrate``.
        """
        self._check_fitted()
        calibration = self.calibration_
        if calibration is None:
            raise NotFittedError(
                "this network has no calibration; train it with calibrate='cv' to get "
                "probabilities (or calibrate='holdout', or calibrate='progressive')"
            )
        return calibration.probabilities(self.target_scores(X))

    def normalised_scores(self, X: Any) -> np.ndarray:
        """Each target's share of an example, summing to 1: the calibrated
        probabilities, or the softmax of the activations without calibration (SNoW's
        normalised output)."""
        if self.calibration_ is not None:
            return self.predict_proba(X)
        scores = self.target_scores(X)
        shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)

    def _as_indicator(self, claimed: list[tuple]) -> np.ndarray:
        """Label sets as a 0/1 matrix ``[n, labels]`` in the order of ``classes_``."""
        out = np.zeros((len(claimed), len(self._labels)), dtype=np.int64)
        for row, labels in enumerate(claimed):
            for label in labels:
                out[row, self._labels.find(label)] = 1
        return out

    def _allowed_mask(self, targets: Any, shape: tuple[int, int]) -> Any:
        if targets is None:
            return True
        mask = np.zeros(shape, dtype=bool)
        for i, labels in enumerate(targets):
            for label in labels:
                target = self._labels.find(label)
                if target is not None:
                    mask[i, target] = True
        return mask

    def score(self, X: Any, y: Sequence[Any]) -> float:
        """Accuracy (exact set match for multi-label networks)."""
        predicted = self.predict(X)
        if self._indicator:
            return float(np.mean(np.all(predicted == np.asarray(y), axis=1)))
        if self.multilabel_:
            return float(np.mean([set(p) == set(t) for p, t in zip(predicted, y)]))
        return float(np.mean(np.asarray(predicted, dtype=object) == np.asarray(y, dtype=object)))

    # ------------------------------------------------- River's, written once
    def learn_one(self, x: Any, y: Any, *, width: int | None = None) -> Any:
        """Learn one example: ``x`` a dict of feature id -> strength (or active ids, an
        ``(ids, strengths)`` pair of arrays, a sparse row), ``y`` its label (a
        collection of labels for a multi-label network). A network the example starts
        has ``width`` features (None: an open feature space, as wide as the ids met).
        Returns the network."""
        ids, vals = parse_example(x)
        if not self.__sklearn_is_fitted__():
            self._begin_stream(width, float(ids.size), isinstance(y, COLLECTIONS))
        self.engine_.learn_one(ids, vals, y)
        return self

    def predict_one(self, x: Any) -> Any:
        """The label of one example (a tuple of labels for a multi-label network); None
        before the first example is learned, as River's classifiers answer."""
        if not self.__sklearn_is_fitted__():
            return None
        engine = self.engine_
        return engine.label_of(*engine.score_one(*parse_example(x)))

    def predict_proba_one(self, x: Any) -> dict[Any, float]:
        """The calibrated probability of each label for one example, a dict; ``{}``
        before the first example is learned.

        With ``calibrate="progressive"`` the sigmoids follow the stream: fitted on the
        scores examples got before they were learned, refitted by the learning as the
        window grows (every 8 examples at first, then whenever a tenth more came).
        """
        if not self.__sklearn_is_fitted__():
            return {}
        engine = self.engine_
        return engine.probabilities_of(engine.score_one(*parse_example(x))[0])

    # ----------------------------------------- fit, for a kind with an engine
    def _as_input(self, X: Any, targets: Any) -> Any:
        """``X`` as the engine reads it, checked (a kind refuses what it cannot take)."""
        raise NotImplementedError

    def _begin_fit(self, X: Any, labels: LabelIndex, multilabel: bool, indicator: bool
                  ) -> None:
        """A fresh engine for ``X``'s width with a target per label."""
        raise NotImplementedError

    def _learn(self, X: Any, y: Any, targets: Any, *, epochs: int, shuffle: bool,
               progress: Any, keys: np.ndarray | None = None, fitting: bool = False) -> None:
        """``epochs`` passes over ``(X, y)`` (``shuffle``d by ``keys``), continuing from
        what was learned; ``fitting``: the epochs of :meth:`fit` on a fresh engine
        (discarding and progressive calibration included, as the kind does them)."""
        raise NotImplementedError

    def _begin_stream(self, width: int | None, mean_active: float, multilabel: bool) -> None:
        """A fresh engine of ``width`` features (None: an open feature space, as wide as
        the ids met) before the first example of a stream (``mean_active`` features per
        example, from the first ones)."""
        raise NotImplementedError

    def _check_continues(self, X: Any) -> None:
        """Refuse what a trained engine cannot continue from (``X`` of another width, a
        model that kept no training state)."""
        raise NotImplementedError

    def fit(self, X: Any, y: Sequence[Any] | None = None, *, sample_weight: Any = None,
            targets: Sequence[Any] | None = None, progress: Any = None,
            shuffle_keys: np.ndarray | None = None, refold: Any = None) -> Any:
        """Train a new network for ``epochs`` passes over ``(X, y)``.

        Parameters
        ----------
        X : sparse matrix or array, shape (n_examples, n_features), or Blocks
            Active features: binary presence or real strengths. Or examples that
            come a block at a time (:class:`~snowpy.network.engine.Blocks`, as a
            feature cache gives them, with their labels: no ``y``), learned in the
            memory of a block and the model.
        y : sequence or array
            One label per example, or one collection of labels per example
            (multi-label; an empty collection is negative for every target), or
            a 0/1 indicator matrix (scikit-learn's multi-label form: ``predict``
            then answers with one too).
        sample_weight : array of whole numbers, optional
            How many times each example counts: an example of weight 2 is
            learned as two copies of it (an online learner has no other
            meaning for a weight), 0 drops it.
        targets : sequence of collections of labels, optional
            Per example, the only targets that see it (SNoW's sequential
            model); targets not listed are neither trained nor predicted.
        progress : callable, optional
            ``progress(epoch, done, total, mistakes)`` is called as training
            goes: after 1, 2, 4, 8... examples of each epoch (and at least
            every 16,384), with the mistakes made since the previous call.
            Training in such chunks gives the same model.
        shuffle_keys : array of uint64, optional
            A key per example that the shuffle orders by (the examples are sorted by
            their keys mixed with a salt per epoch). By default the keys come from the
            features and labels; :class:`~snowpy.SnowClassifier` gives keys of the
            texts. Equal keys shuffle alike whatever the examples' positions.
        refold : callable, optional
            For cross-fitted calibration, when ``X``'s strengths were counted on every
            example (a front end's idf and relevance): ``refold(rows, labels)`` of a
            fold's training examples gives a function that weighs rows as they would
            be had that fold alone been counted, which the fold's network learns and
            scores its held-out examples with (:meth:`snowpy.Featurizer.refold`). By
            default the rows as they are.

        Returns
        -------
        self
        """
        self.check_options()
        if y is None and isinstance(X, Blocks):
            return self._fit_blocks(X, progress=progress)
        return self._fit_checked(X, y, sample_weight=sample_weight, targets=targets,
                                progress=progress, shuffle_keys=shuffle_keys, refold=refold)

    def _fit_blocks(self, blocks: Blocks, *, progress: Any) -> Any:
        """:meth:`fit` on examples that come a block at a time (a kind that learns from
        them says how)."""
        raise ConfigurationError(f"a {type(self).__name__} learns from a matrix, not from "
                                 "blocks")

    def _fit_checked(self, X: Any, y: Sequence[Any] | None, *, sample_weight: Any = None,
                    targets: Sequence[Any] | None = None, progress: Any = None,
                    shuffle_keys: np.ndarray | None = None, refold: Any = None) -> Any:
        """:meth:`fit`, the options checked already: a fold network of cross-fitted
        calibration has the options of the network it calibrates, checked once."""
        X = self._as_input(X, targets)
        require_rows(X)
        y, width = check_y(y, X.shape[0], type(self).__name__)
        X, y, targets, keys = apply_weights(X, y, targets, sample_weight, shuffle_keys)
        y = label_array(y)
        multilabel = width is not None or is_multilabel(y)
        labels = LabelIndex(list(range(width)) if width is not None
                            else sorted_labels(y, multilabel))
        if len(labels) < 2 and not multilabel:
            warnings.warn(
                f"y holds one class only ({', '.join(map(repr, labels.labels[:1]))}): every "
                "prediction will be it until partial_fit meets another", UserWarning,
                stacklevel=3)
        # the fold networks are trained (and freed) before the final one exists, so
        # calibrating never holds two networks at once
        held_out = held_out_scores(self, X, y, targets, labels, multilabel, progress, keys,
                                   refold) \
            if calibrating(self.calibrate).cross_fits else None
        if held_out is not None:
            keys = held_out[3]  # (computed once: the folds and the final shuffle share them)
        self._begin_fit(X, labels, multilabel, width is not None)
        phase(progress, "training", X.shape[0] * int(self.epochs))
        self._learn(X, y, targets, epochs=int(self.epochs), shuffle=bool(self.shuffle),
                    progress=progress, keys=keys, fitting=True)
        if held_out is not None:
            from snowpy.calibration import Calibration

            scores, positives, covered, _ = held_out
            if not covered.all():  # (holdout: the held-out fold only; cv covers all)
                scores, positives = scores[covered], positives[covered]
            self.calibration_ = Calibration.fit(
                scores, positives, normalize=normalisation_of(self.engine_, multilabel),
                method=str(calibrating(self.calibrate).method))
        return self

    def partial_fit(self, X: Any, y: Sequence[Any], *, classes: Sequence[Any] | None = None,
                    sample_weight: Any = None, targets: Sequence[Any] | None = None,
                    progress: Any = None) -> Any:
        """Learn from ``(X, y)`` in one pass, in the given order.

        The first call creates the network. ``classes``, when given, fixes the
        order of the first targets (scikit-learn's incremental protocol); a
        label not seen before grows a new target node at any time, so it is
        never required. The other parameters are :meth:`fit`'s.

        Returns
        -------
        self

        Raises
        ------
        ConfigurationError
            ``y`` is single-label where the network learned sets of labels (or the
            reverse), or the network cannot continue from ``X``.
        """
        fitted = self.__sklearn_is_fitted__()
        X = self._as_input(X, targets)
        y, width = check_y(y, X.shape[0], type(self).__name__)
        X, y, targets, _ = apply_weights(X, y, targets, sample_weight)
        y = label_array(y)
        multilabel = width is not None or (
            is_multilabel(y) if len(y) else fitted and self.multilabel_)
        if not fitted:
            self._begin_stream(X.shape[1], X.nnz / max(X.shape[0], 1), multilabel)
            engine = self.engine_
            engine.indicator = width is not None
            for column in range(width or 0):
                engine.labels.add(column)
        else:
            self._check_continues(X)
            if multilabel != self.multilabel_:
                kind = "multi-label" if self.multilabel_ else "single-label"
                raise ConfigurationError(f"this network was trained {kind}; y must be {kind} "
                                         "too")
        for label in () if classes is None else classes:
            self.engine_.labels.add(label)
        self._learn(X, y, targets, epochs=1, shuffle=False, progress=progress)
        return self
