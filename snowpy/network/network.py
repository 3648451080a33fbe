"""``snowpy.Network``, and what every kind of network is.

A kind of network (:class:`Network`: links; :class:`~snowpy.Cloud`: members;
:class:`~snowpy.network.learner.LearnerNetwork`: a rule's learner, the kernel
Perceptron's support vectors) is an estimator over an engine (``engine_``: what it learned, and the
operations on it): :class:`NetworkKind`. It supplies :meth:`~NetworkKind.target_scores`
and its model file (``to_state`` and ``from_state``, registered with
:func:`snowpy.model_kinds.model_kind`); its engine supplies the one-example protocol
(``score_one``, ``learn_one``, ``score_text``, ``learn_text``, ``label_of``,
``probabilities_of``, ``check_label``). Written once over them: predictions from target
scores (winner-take-all, multi-label claims, abstention, probabilities) and River's
protocol. A kind that trains its own engine on a matrix also takes
:meth:`~NetworkKind.fit` and :meth:`~NetworkKind.partial_fit` (the checks, the labels,
cross-fitted calibration), supplying ``_as_input``, ``_begin_fit``, ``_begin_stream``,
``_check_continues`` and ``_learn``.

:class:`Network` is a sparse network of target nodes, one per label, each a linear
threshold unit over the features it is linked to, trained online by a pluggable update
rule (its epochs run by :class:`~snowpy.network.driver.Driver`), predicting by
winner-take-all (or, for multi-label networks, every target whose activation reaches
the threshold). How links are made is SNoW's: see ``links``. As scikit-learn's
``BaseSGDClassifier`` and ``SGDClassifier`` share their module, the base and the
network of links share this one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from snowpy._core.online import checked
from snowpy._lazy import lazy_module
from snowpy._validation import apply_weights, as_csr, check_length, require_rows, threads_of
from snowpy.base import Estimator, available_if
from snowpy.declared import NETWORK, defaults
from snowpy.exceptions import ConfigurationError, NotFittedError, UnknownNameError
from snowpy.model_kinds import model_kind
from snowpy.network.calibrating import ProgressiveWindow, fit_progressive, normalisation_of
from snowpy.network.driver import Driver, Plan, held_out_scores
from snowpy.network.engine import INFERENCE_ONLY, Blocks, Engine, NumericalWarning
from snowpy.network.labels import (
    COLLECTIONS,
    LabelIndex,
    check_y,
    is_multilabel,
    label_array,
    label_index,
    refuse_label_kind,
    sorted_labels,
)
from snowpy.network.links import ONLINE_WIDTH, PRECISIONS, LinkStore
from snowpy.network.options import (
    bias_strength,
    calibrating,
    check_options,
    eligibility_of,
    engine_settings,
)
from snowpy.network.state import network_state, restore_network
from snowpy.plugins import get_rule
from snowpy.progress import phase
from snowpy.rules.spec import BuildContext, RuleSpec

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp
else:
    sp = lazy_module("scipy.sparse")

__all__ = ["ABSTAIN", "Network", "NetworkKind", "NumericalWarning", "gives_probabilities",
           "parse_example"]

#: Rows scored at once by ``predict`` (bounds its memory for many targets).
_PREDICT_BLOCK = 8192

#: What ``predict(..., abstain=k)`` answers for an example it abstains on.
ABSTAIN = None


def gives_probabilities(estimator: Any) -> bool:
    """this model has no calibration; train it with calibrate='cv' to get probabilities
    (or calibrate='holdout', or calibrate='progressive')"""
    learned = getattr(estimator, "network_", estimator)  # (a classifier's: its network's)
    return estimator.calibrate not in (None, "none") or \
        getattr(learned, "calibration_", None) is not None


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
    _engine: Any
    if TYPE_CHECKING:  # (what each kind has: its options' check)
        def check_options(self) -> None: ...

    def __sklearn_is_fitted__(self) -> bool:
        """Whether the network has learned (scikit-learn's ``check_is_fitted`` asks)."""
        return "_engine" in self.__dict__  # (a cloud's: its members)

    def _check_fitted(self) -> None:
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(
                f"this {type(self).__name__} is not trained yet; call fit or partial_fit first"
            )

    # --------------------------------------- fitted attributes: the engine's
    @property
    def engine_(self) -> Any:
        """Everything the network has learned, as one value (its kind's engine, which
        also holds the operations on it); :meth:`to_state` gives it as plain data. It is
        given whole: the parts a stream's blocks were learned in on threads are put
        together first. An engine kept while the network learns more on threads is read
        again here (the parts it learns in are its driver's until then)."""
        engine = self._learned
        driver = self.__dict__.get("_driver")
        if driver is not None and driver.held is not None:
            driver.join(engine)  # (a stream's blocks learned in parts: put together)
        return engine

    @engine_.setter
    def engine_(self, engine: Any) -> None:
        # (loading a model, or a distributed round's mix, builds the engine)
        self._engine = engine
        self.__dict__.pop("_driver", None)

    @property
    def _learned(self) -> Any:
        """The engine as it stands, for what it learned beside its links (labels,
        counters, sigmoids, width): a network learning a stream's blocks in parts on
        threads keeps them apart until its links are read (:attr:`engine_` puts them
        together)."""
        try:
            return self.__dict__["_engine"]
        except KeyError:
            self._check_fitted()  # (raises NotFittedError)
            raise

    def _driven(self) -> Driver:
        """The driver of this network's learning (kept from one block to the next: its
        parts and their threads go on with a stream)."""
        driver = self.__dict__.get("_driver")
        if driver is None:
            driver = self._driver = Driver()
        return driver

    def __getstate__(self) -> dict[str, Any]:
        """The network whole (a stream's parts put together), without its driver's
        threads."""
        if "_driver" in self.__dict__ and self.__sklearn_is_fitted__():
            self.engine_  # noqa: B018
        state = self.__dict__.copy()
        state.pop("_driver", None)
        return state

    @property
    def classes_(self) -> np.ndarray:
        """The labels, one per target node, in target order."""
        self._check_fitted()
        return self._learned.labels.as_array()

    @property
    def rule_params_(self) -> Any:
        """Every rule parameter as used, defaults and derived values included."""
        return self._learned.params

    @property
    def multilabel_(self) -> bool:
        """Whether the network was trained with a set of labels per example."""
        return bool(self._learned.multilabel)

    @property
    def n_features_in_(self) -> int:
        """The width of ``X`` the network takes."""
        return int(self._learned.n_features)

    @property
    def mistakes_(self) -> list[int]:
        """Per epoch (per call for :meth:`partial_fit`, per run of :meth:`learn_one`),
        the examples mispredicted before they were learned."""
        return self._learned.mistakes

    @property
    def updates_(self) -> list[int]:
        """Per epoch, the target updates made."""
        return self._learned.updates

    @property
    def n_examples_seen_(self) -> int:
        """Examples processed by training, epochs counted."""
        return int(self._learned.n_examples_seen)

    @property
    def calibration_(self) -> Any:
        """The sigmoids from scores to probabilities, or None."""
        return self._learned.calibration

    @calibration_.setter
    def calibration_(self, calibration: Any) -> None:
        self._learned.calibration = calibration

    @property
    def _labels(self) -> LabelIndex:  # (a cloud's: its members')
        return self._learned.labels

    @property
    def _indicator(self) -> bool:
        return bool(self._learned.indicator)

    def target_scores(self, X: Any) -> np.ndarray:
        """Activation minus threshold of every target, ``float64[n, targets]`` (positive:
        the target claims the example); what every prediction below derives from. Rows
        that carry their Naive Bayes evidence (a classifier's ``evidence=True``) have it
        added at the calibration's weights (:meth:`_stacked`)."""
        raise NotImplementedError

    def _stacked(self, X: Any, scores: np.ndarray) -> np.ndarray:
        """``scores`` of ``X`` with the evidence ``X`` carries stacked at the calibration's
        weights (:meth:`snowpy.calibration.Calibration.stacked`); as they are without."""
        evidence = getattr(X, "evidence", None)
        calibration = self.calibration_
        if evidence is None or calibration is None or calibration.evidence is None:
            return scores
        return calibration.stacked(scores, evidence.by(self._labels.labels))

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
               progress: Any = None, keys: np.ndarray | None = None, fitting: bool = False,
               copy: bool = True) -> None:
        """``epochs`` passes over ``(X, y)`` (``shuffle``d by ``keys``), continuing from
        what was learned; ``fitting``: the epochs of :meth:`fit` on a fresh engine
        (discarding and progressive calibration included, as the kind does them);
        ``copy=False`` (as scikit-learn's ``copy``): ``X``'s indices were made for this
        learning, which may write over them (a calibration fold's rows: the pool rows of
        its features take their place). The engine's driver runs the epochs, whatever
        the kind's engine learns in (links, or a rule's learner)."""
        self._check_width(X, learning=True)
        engine, driver = self._engine, self._driven()
        if targets is not None:
            check_length(X.shape[0], targets, "targets")
        block = driver.block(engine, X, y, targets, keys, copy=copy)
        driver.add_targets(engine)
        plan = Plan.of(self.get_params())  # (a fit's epochs, or a partial_fit's one pass)
        driver.fit(engine, block, Plan(epochs, shuffle, plan.early_stop, plan.threads,
                                       plan.discard if fitting else None), progress,
                   first=fitting)
        self._calibrate_progressive(progress, fitting)

    def _check_width(self, X: Any, *, learning: bool = False) -> None:
        """Refuse ``X`` of another width than the engine's (``learning``: an open feature
        space widens to it)."""
        raise NotImplementedError

    def _calibrate_progressive(self, progress: Any, fitting: bool) -> None:
        """The progressive sigmoids after a learning (``fitting``: a fit's)."""
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
            shuffle_keys: np.ndarray | None = None, refold: Any = None,
            copy: bool = True) -> Any:
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
            scores its held-out examples with (:meth:`snowpy.Featurizer.refold`), and
            may give their Naive Bayes evidence by label (its ``evidence(rows)``), which
            calibration stacks with the scores (:class:`snowpy.calibration.Calibration`).
            By default the rows as they are.
        copy : bool, default True
            False (scikit-learn's ``copy``): ``X`` is this fit's own, read by nothing
            after it: the network's rows of its features are written over its indices
            (with ``shuffle_keys`` given; a CSR matrix of int32 indices), no second
            array of 4 bytes an active feature (20 Newsgroups' final network: 19 MB).

        Returns
        -------
        self
        """
        self.check_options()
        if y is None and isinstance(X, Blocks):
            return self._fit_blocks(X, progress=progress)
        X = self._as_input(X, targets)
        require_rows(X)
        y, width = check_y(y, X.shape[0], type(self).__name__)
        X, y, targets, keys = apply_weights(X, y, targets, sample_weight, shuffle_keys)
        y = label_array(y)
        multilabel = width is not None or is_multilabel(y)
        labels = label_index(y, multilabel, width)
        # the fold networks are trained (and freed) before the final one exists, so
        # calibrating never holds two networks at once
        held_out = held_out_scores(self, X, y, targets, labels, multilabel, progress, keys,
                                   refold) \
            if calibrating(self.calibrate).cross_fits else None
        self._begin_fit(X, labels, multilabel, width is not None)
        calibration = None
        if held_out is not None:  # (fitted before the final network learns, the held-out
            from snowpy.calibration import Calibration  # scores let go: examples x labels)

            scores, positives, covered, keys, evidence = held_out  # (the final shuffle's
            del held_out                                           #  keys too)
            if not covered.all():  # (holdout: the held-out fold only; cv covers all)
                scores, positives = scores[covered], positives[covered]
                evidence = None if evidence is None else evidence[covered]
            phase(progress, "calibrating")
            calibration = Calibration.fit(
                scores, positives, normalize=normalisation_of(self.engine_, multilabel),
                method=str(calibrating(self.calibrate).method), evidence=evidence)
            del scores, positives, evidence
        phase(progress, "training", X.shape[0] * int(self.epochs))
        # (without keys, the shuffle's are made from X's features once its rows are made)
        self._learn(X, y, targets, epochs=int(self.epochs), shuffle=bool(self.shuffle),
                    progress=progress, keys=keys, fitting=True,
                    copy=copy or keys is None)
        if calibration is not None:
            self.calibration_ = calibration
        return self

    def _fit_blocks(self, blocks: Blocks, *, progress: Any) -> Any:
        """:meth:`fit` on examples that come a block at a time (a kind that learns from
        them says how)."""
        raise ConfigurationError(f"a {type(self).__name__} learns from a matrix, not from "
                                 "blocks")

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
            engine = self._learned
            engine.indicator = width is not None
            for column in range(width or 0):
                engine.labels.add(column)
        else:
            self._check_continues(X)
            refuse_label_kind(self.multilabel_, multilabel)
        for label in () if classes is None else classes:
            self._learned.labels.add(label)
        self._learn(X, y, targets, epochs=1, shuffle=False, progress=progress)
        return self


_DEFAULTS = defaults(NETWORK)  # (the signature's defaults: snowpy.declared)


@model_kind("network")
class Network(NetworkKind):
    """A sparse network of target nodes trained online by an update rule.

    Parameters
    ----------
    rule : str or RuleSpec, default "winnow"
        Name of an installed update rule (``snowpy plugins`` lists them):
        ``perceptron``, ``winnow``, ``balanced-winnow``, ``thick-separator``,
        ``aggressive``, ``passive-aggressive`` or a plugin's; or a rule given as an
        object, a :class:`~snowpy.rules.RuleSpec`, registered or not (a model file names
        it: loading the file finds it registered under that name).
    epochs : int, default 10
        Passes over the data in :meth:`fit` (SNoW's cycles).
    average : bool, default True
        Predict with the average of the weights over all examples seen
        (the averaged Perceptron, Freund and Schapire 1999), for any rule.
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
    links : {"touched", "signed", "positive", "all"}, default "touched"
        When a feature is linked to a target. ``"touched"``: once an update
        first changes that weight; a missing link weighs the rule's initial
        weight, so the network learns and predicts exactly what ``"all"``
        does (the rule over every feature, as the mistake bounds analyse it), holding
        links only where weights moved. ``"positive"``: SNoW's sparse network,
        once the feature is active in an example positive for the target; a
        feature never linked contributes nothing to the target. ``"signed"``:
        as ``"positive"``, and also when a demotion of the target takes the
        weight of a feature it is not linked to below zero (negative
        evidence, which ``"positive"`` cannot hold). ``"all"``: every feature
        seen to every target (SNoW ``-s f``). ``"positive"`` and ``"signed"``
        are another algorithm when a rule's initial weight is not 0: linking
        a feature raises its weight from 0 to the initial weight, a
        promotion no mistake asked for, which can memorise the training set
        without learning (``docs/rules.md``); on text it is a useful bias
        (:class:`~snowpy.SnowClassifier` keeps ``"signed"``, as accurate in
        half the memory). ``docs/benchmarks.md`` has the measured size and
        accuracy of each.
    eligibility : int or str, default 1
        SNoW's ``-e``. An integer ``k`` (or ``"count:k"``): a feature is
        linked only once it has been active in ``k`` training examples
        (counted on data seen for the first time: the first epoch of
        :meth:`fit`, every :meth:`partial_fit`); until then it is neither
        linked nor updated. SNoW's own default was 2. ``"percent:p"`` (with
        ``links="positive"``): after the first epoch of :meth:`fit`, each
        target keeps only the links of the ``p`` percent of its features most
        often active in its positive examples (ties kept), and the remaining
        epochs create no links.
    discard : float or None, default 0.5
        SNoW's ``-d``: at the end of :meth:`fit` (and on :meth:`prune`), drop
        every link whose effective weight differs from a missing link's by
        less than ``discard`` times the rule's initial effective weight (for
        rules whose weights start at 0, times the mean magnitude of the link
        weights). The bias is kept. A dropped link weighs what a missing one
        does, so predictions move little; files and memory shrink. ``None``
        keeps every link.
    precision : {"float32", "float64"}, default "float32"
        Storage type of the weights and averaging sums; the engine computes in
        float64 either way. float32 halves the memory of the links (the
        benchmark corpora give the same accuracy) and keeps magnitudes within
        ``[1e-30, 1e30]`` (float64: ``[1e-100, 1e100]``).
    multiclass : {"ova", "constraint"}, default "ova"
        ``"ova"``: every target learns its own threshold on every example
        (one-vs-all, SNoW's default). ``"constraint"``: SNoW's constraint
        classification (``-O +``, single-label networks): an example updates
        only its true target (promoted) and the targets whose activation comes
        within ``thickness`` of it (demoted), as the multiclass Perceptron
        does; ``theta`` then plays no part in training.
    calibrate : {None, "cv", "holdout", "progressive"} or str, default None
        Fit a sigmoid per target (:mod:`snowpy.calibration`) so that
        :meth:`predict_proba` gives probabilities: ``"cv"`` cuts the examples
        in 3 folds (``"cv:k"``: in ``k``) and trains a network on the other
        folds to score each example out of fold (as scikit-learn's
        CalibratedClassifierCV does), ``"holdout"`` (``"holdout:k"``) only
        the first of those folds; the network itself is always trained on all
        the data, so calibration leaves its predictions unchanged.
        ``"progressive"`` costs nothing more: it fits the sigmoids on the
        scores each example got *before* the network learned from it (the
        first epoch of :meth:`fit`, and every :meth:`partial_fit`, the most
        recent 100,000 kept), the choice for streaming training; they are
        refitted when probabilities are next asked for.
    n_jobs : int or None, default None
        Threads learning at once (scikit-learn's meaning: None is one, -1 every
        core the process may use). Under one-vs-all each target node learns on
        its own: the targets are shared among the threads, and the network is
        the same, to the bit, for any number (``docs/rules.md`` says which
        settings learn on one thread). A batch's scores (``predict``,
        ``predict_proba``) are shared among as many threads, each example's
        the same.
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
    n_examples_seen_ : int
        Examples processed by training, epochs counted.
    n_links_ : int
        Links held (feature-target pairs with a weight of their own).
    engine_ : Engine
        What the network has learned, as one object
        (:class:`~snowpy.network.engine.Engine`), with the operations on it: its links
        (``store``), the weights as prediction uses them (``link_weights(columns)``,
        ``effective_links()``, ``effective_weights()``), per target the updates on
        positive and on negative examples (``promotions``, ``demotions``), and the
        weight updates clamped to the largest magnitude kept (``overflows``: a
        :class:`NumericalWarning` says so) or raised to the smallest (``underflows``,
        where a multiplicative weight has effectively reached zero; counted, not warned
        about).

    One example at a time, as River does it: :meth:`learn_one`,
    :meth:`predict_one`, :meth:`predict_proba_one` take a dict of feature id ->
    strength (or the active ids) and cost what the example costs.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 1]]))
    >>> net = Network("perceptron").fit(X, ["a", "b", "a"])
    >>> net.predict(X).tolist()
    ['a', 'b', 'a']
    >>> net.classes_.tolist(), net.n_links_
    (['a', 'b'], 7)
    >>> online = Network("perceptron")
    >>> for x, y in [({0: 1, 1: 1}, "a"), ({2: 1, 3: 1}, "b"), ({0: 1, 3: 1}, "a")]:
    ...     online = online.learn_one(x, y)
    >>> online.predict_one({0: 1}), online.predict_one([2, 3])
    ('a', 'b')
    """

    _option_names = tuple(NETWORK)

    def __init__(
        self,
        rule: str = _DEFAULTS["rule"],
        *,
        epochs: int = _DEFAULTS["epochs"],
        average: bool = _DEFAULTS["average"],
        shuffle: bool = _DEFAULTS["shuffle"],
        seed: int | None = _DEFAULTS["seed"],
        bias: bool | float = _DEFAULTS["bias"],
        early_stop: bool = _DEFAULTS["early_stop"],
        links: str = _DEFAULTS["links"],
        eligibility: int | str = _DEFAULTS["eligibility"],
        discard: float | None = _DEFAULTS["discard"],
        precision: str = _DEFAULTS["precision"],
        multiclass: str = _DEFAULTS["multiclass"],
        calibrate: str | None = _DEFAULTS["calibrate"],
        n_jobs: int | None = _DEFAULTS["n_jobs"],
        **rule_params: Any,
    ) -> None:
        self.rule = rule
        self.epochs = epochs
        self.average = average
        self.shuffle = shuffle
        self.seed = seed
        self.bias = bias
        self.early_stop = early_stop
        self.links = links
        self.eligibility = eligibility
        self.discard = discard
        self.precision = precision
        self.multiclass = multiclass
        self.calibrate = calibrate
        self.n_jobs = n_jobs
        self.rule_params = rule_params

    # ---------------------------------------------------------------- set-up
    def _resolve_rule(self) -> tuple[RuleSpec, dict[str, Any]]:
        """Look up the rule and validate its parameters, without training.

        Raises
        ------
        UnknownNameError
            The rule is not installed (the message lists those that are).
        ConfigurationError
            A parameter is unknown to the rule or out of its range.
        """
        if not isinstance(self.rule, (str, RuleSpec)):
            raise ConfigurationError(f"rule must be a rule's name or a RuleSpec, got "
                                     f"{self.rule!r}")
        spec = get_rule(self.rule)
        if isinstance(self.rule, RuleSpec):
            _refuse_a_namesake(spec)
        if spec.learner:
            raise ConfigurationError(f"rule {spec.name!r} keeps a learner of its own: use "
                                     "snowpy.network.learner.LearnerNetwork (or "
                                     "SnowClassifier, which picks it)")
        return spec, spec.validate(self.rule_params)

    def _nonnegative_only(self) -> bool:
        try:
            return bool(get_rule(self.rule).nonnegative)
        except Exception:  # noqa: BLE001 - an unknown rule is reported by fit, not by tags
            return False

    def _check_strengths(self, X: sp.csr_matrix) -> None:
        """Refuse negative strengths for a rule that assumes none (Winnow)."""
        if getattr(X, "binary", False):
            return
        if self._nonnegative_only() and X.data.size and X.data.min() < 0:
            raise ConfigurationError(
                f"Negative values in data passed to Network: rule "
                f"{getattr(self.rule, 'name', self.rule)!r} takes "
                "feature strengths of 0 or more (its promotion alpha ** v would demote); "
                "shift or binarise the features, or use balanced-winnow or perceptron")

    def check_options(self) -> None:
        """Check every option and the rule's parameters, without training.

        Raises
        ------
        ConfigurationError
            Naming the option or parameter and the value.
        """
        options = {name: getattr(self, name) for name in self._option_names}
        check_options(options)
        _, params = self._resolve_rule()
        limit = PRECISIONS[str(self.precision)][2]
        for name in ("theta", "thickness", "negative_thickness"):
            value = params.get(name)
            if isinstance(value, (int, float)) and math.isfinite(value) and abs(value) > limit:
                raise ConfigurationError(
                    f"{name}={value:g} is beyond the largest weight magnitude kept "
                    f"({limit:g}): activations could never reach it; choose a value of the "
                    "scale of the feature strengths")

    def _initialise(self, n_features: int, mean_active: float, multilabel: bool,
                          streamed: bool = False, *, checked: bool = False) -> None:
        """A fresh network for ``n_features`` columns; ``mean_active`` features per example
        (SNoW's rho, for data-derived initial weights) estimated from the first data
        (``checked``: the options were checked already, as :meth:`fit` does first)."""
        if not checked:
            self.check_options()
        spec, params = self._resolve_rule()
        context = BuildContext(
            mean_active_features=mean_active + (bias_strength(self.bias) > 0),
            n_features=n_features,
        )
        kernel = spec.make_kernel(params, context)
        params.update(kernel.resolved)
        eligible = eligibility_of(self.eligibility)
        store = LinkStore(kernel, n_features, policy=self.links, average=bool(self.average),
                          precision=self.precision, min_count=eligible.times,
                          link_counts=eligible.percent is not None)
        too_large = [w for w in kernel.initial_weights if abs(w) > store.max_magnitude]
        if too_large:
            raise ConfigurationError(
                f"rule {spec.name!r}: initial weight {too_large[0]:g} exceeds the largest "
                f"magnitude kept ({store.max_magnitude:g}); lower theta or set initial_weight"
            )
        if multilabel and self.multiclass == "constraint":
            raise ConfigurationError("multiclass='constraint' needs one label per example")
        # a network started by partial_fit or learn_one sees its data once: cv and holdout
        # (which need it twice) calibrate it progressively, as the stream goes
        calibrate = calibrating(self.calibrate)
        progressive = calibrate.method == "progressive" or (streamed and calibrate.cross_fits)
        self.__dict__.pop("_driver", None)
        self._engine = Engine(
            spec, params, kernel, store, LabelIndex(), multilabel=multilabel,
            n_features=n_features, progressive=ProgressiveWindow() if progressive else None,
            **engine_settings(self.get_params()))

    def start(self, n_features: int, labels: Sequence[Any], *, multilabel: bool = False,
              mean_active: float = 1.0) -> Network:
        """An untrained network of ``n_features`` columns with a target per label, before
        any example (``mean_active``: features per example, SNoW's rho, for rules whose
        initial weight derives from it). A distributed training's rounds start from it;
        returns the network.

        >>> net = Network("perceptron").start(4, ["a", "b"])
        >>> net.classes_.tolist(), net.n_links_
        (['a', 'b'], 0)
        """
        self._initialise(int(n_features), float(mean_active), bool(multilabel))
        engine = self._engine
        engine.labels = LabelIndex(labels)
        engine.store.add_targets(len(engine.labels))
        engine.target_counts()
        return self

    # -------------------------------------------------------------- training
    # -------------------------------------------- fit's steps (NetworkKind.fit)
    def _as_input(self, X: Any, targets: Any) -> Any:
        """``X`` as a CSR matrix, its strengths checked against the rule."""
        X = as_csr(X)
        self._check_strengths(X)
        return X

    def _begin_fit(self, X: Any, labels: LabelIndex, multilabel: bool, indicator: bool
                  ) -> None:
        """A fresh link store for ``X``'s width, a target per label."""
        self._initialise(X.shape[1], X.nnz / max(X.shape[0], 1), multilabel, checked=True)
        self._engine.labels = labels
        self._engine.indicator = indicator

    def _fit_blocks(self, blocks: Any, *, progress: Any = None) -> Network:
        """:meth:`fit` on examples that come a block at a time
        (:class:`~snowpy.network.engine.Blocks`, as a feature cache gives them): the
        network that ``fit`` learns from them all at once, shuffled by the same keys, in
        the memory of a block and the model. Cross-fitted calibration needs the data in
        memory and is refused."""
        if calibrating(self.calibrate).cross_fits:
            raise ConfigurationError(f"calibrate={self.calibrate!r} fits held-out folds in "
                                     "memory; blocks are calibrated progressively")
        self._initialise(blocks.width, blocks.nnz / max(blocks.n, 1), blocks.multilabel,
                         checked=True)
        engine = self._engine
        engine.labels = LabelIndex(sorted_labels(list(blocks.labels), False))
        engine.add_targets(len(engine.labels))
        for X, _, _ in blocks.epoch(None):  # rows in the stored order, as fit makes them
            self._check_strengths(X)
            engine.store.training_rows(X)
        phase(progress, "training", blocks.n * int(self.epochs))
        self._driven().fit(engine, blocks, Plan.of(self.get_params()), progress, first=True)
        self._calibrate_progressive(progress, True)
        return self

    def _calibrate_progressive(self, progress: Any, fitting: bool) -> None:
        """A fit's progressive sigmoids (a block of a stream leaves them due: fitted when
        next asked for, :attr:`~snowpy.network.engine.Engine.calibration`)."""
        if fitting and self.calibrate == "progressive":  # (cross-fitted: before training)
            phase(progress, "calibrating")
            fit_progressive(self._engine, self._engine.progressive)

    def _begin_stream(self, width: int | None, mean_active: float, multilabel: bool) -> None:
        """A fresh engine of ``width`` features, or with none an open feature space (any
        id below :data:`ONLINE_WIDTH`, ``n_features_in_`` one past the largest seen);
        targets grow with the labels met."""
        self._initialise(width or ONLINE_WIDTH, mean_active, multilabel, streamed=True)
        if width is None:
            self._engine.open_features = True
            self._engine.n_features = 0

    def _check_continues(self, X: Any) -> None:
        """Refuse to continue a network loaded from an inference-only model file (its
        width is checked as it learns: a network started one example at a time widens)."""
        if self._engine.frozen:
            raise ConfigurationError(INFERENCE_ONLY)

    def _check_width(self, X: sp.csr_matrix, *, learning: bool = False) -> None:
        if self._engine.open_features and X.shape[1] <= ONLINE_WIDTH:
            # started one example at a time, without a width: any ids below 2**31
            if learning:
                self._engine.n_features = max(self.n_features_in_, X.shape[1])
            return
        if X.shape[1] != self.n_features_in_:
            raise ConfigurationError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input (the width it was trained with)"
            )

    # ---------------------------------------------------------------- links
    def prune(self) -> int:
        """Apply ``eligibility="percent:p"`` and ``discard`` now; returns the links dropped.

        :meth:`fit` applies them itself (the percent after the first
        epoch, ``discard`` at the end); a network learning online, or trained
        block by block with :meth:`partial_fit`, calls this from time to time
        (or once at the end) to keep its size in check.
        """
        self._check_fitted()
        return self.engine_.prune(self.discard, averaged=bool(self.average))

    # ------------------------------------------------------------ prediction
    def target_scores(self, X: Any) -> np.ndarray:
        """Activation minus threshold of every target, ``float64[n, targets]``: SNoW's
        view, one column per target node whatever the number of labels.

        Positive means the target claims the example.
        """
        self._check_fitted()
        X = as_csr(X)
        self._check_width(X)
        return self._stacked(X, self.engine_.scores(X, averaged=bool(self.average),
                                                    threads=threads_of(self.n_jobs)))

    def to_state(self, inference_only: bool = False) -> tuple[dict, dict]:
        """The network as a header and named arrays (:mod:`snowpy.network.state`), what
        :meth:`save` writes and :meth:`from_state` reads.

        >>> import numpy as np
        >>> net = Network("perceptron").fit(np.eye(2), ["a", "b"])
        >>> header, arrays = net.to_state()
        >>> header["kind"], Network.from_state(header, arrays).predict(np.eye(2)).tolist()
        ('network', ['a', 'b'])
        """
        header, arrays = network_state(self, inference_only)
        return {"kind": "network", "network": header}, arrays

    @classmethod
    def from_state(cls, header: dict[str, Any], arrays: dict[str, np.ndarray],
                   where: str = "model", *, trusted: bool = False) -> Network:
        """The network :meth:`to_state` described, validated (a ``ModelFileError`` naming
        ``where`` when it is not consistent). ``trusted``: made by snowpy in this process
        (a distributed round's mix), so the costly check that no link is stored twice is
        skipped."""
        part = header.get("network")
        return restore_network(cls, part if isinstance(part, dict) else {}, arrays, where,
                               trusted=trusted)

    @property
    def n_iter_(self) -> int:
        """Epochs run by the last :meth:`fit` (scikit-learn's name)."""
        self._check_fitted()
        return len(self.mistakes_)

    # ------------------------------------------------------------ weight views
    @property
    def n_links_(self) -> int:
        """Links held: feature-target pairs with a weight of their own."""
        self._check_fitted()
        return self.engine_.store.n_links

    def link_counts(self, columns: Any = None) -> np.ndarray:
        """Links held by each feature (column of ``X``): all features seen, or ``columns``.

        0 for a feature never seen or holding no link. With no ``columns``,
        the counts follow :attr:`feature_ids_`.
        """
        self._check_fitted()
        store = self.engine_.store
        if columns is None:
            return store.size[1:store.n_rows].astype(np.int64)
        columns = np.asarray(columns, dtype=np.int64)
        rows = store.prediction_rows(sp.csr_matrix(
            (np.ones(columns.size), columns, [0, columns.size]),
            shape=(1, max(self.n_features_in_, int(columns.max(initial=-1)) + 1))))
        counts = np.zeros(columns.size, dtype=np.int64)
        seen = rows >= 0
        counts[seen] = store.size[rows[seen]]
        return counts

    @property
    def feature_ids_(self) -> np.ndarray:
        """The feature (column of ``X``) of each row of the engine's
        :meth:`~snowpy.network.engine.Engine.effective_links` from 1 on."""
        self._check_fitted()
        return self.engine_.store.feature_ids

    @property
    def coef_(self) -> np.ndarray:
        """Effective weights as scikit-learn lays them out, ``[targets, n_features]`` (dense)."""
        self._check_fitted()
        links = self.engine_.effective_links().tocoo()
        store = self.engine_.store
        coef = np.full((store.n_targets, self.n_features_in_), store.absent)
        features = links.row >= 1
        ids = self.engine_.store.feature_ids
        coef[links.col[features], ids[links.row[features] - 1]] = links.data[features]
        return coef

    @property
    def intercept_(self) -> np.ndarray:
        """Bias weight minus threshold, per target (zero bias when ``bias=False``)."""
        self._check_fitted()
        bias = np.full(self.engine_.store.n_targets, self.engine_.store.absent)
        row = self.engine_.effective_links()[0].tocoo()
        bias[row.col] = row.data
        return self.engine_.bias * bias - float(self.rule_params_["theta"])


def _refuse_a_namesake(spec: RuleSpec) -> None:
    """Refuse a rule given as an object under the name of another installed rule: its
    model file names it, and would load as that one."""
    try:
        installed = get_rule(spec.name)
    except UnknownNameError:
        return  # (a name of its own)
    if installed != spec:
        raise ConfigurationError(
            f"rule {spec.name!r} given as an object is not the installed rule of that name "
            "(a model file names its rule, and would load as the installed one): give it a "
            "name of its own")
