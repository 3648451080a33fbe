"""What every kind of network is: the public protocol, and what is written once for all.

A kind of network (:class:`~snowpy.Network`: links; :class:`~snowpy.DualNetwork`:
support vectors; :class:`~snowpy.Cloud`: members) supplies its engine through the
one-example protocol (:meth:`~NetworkKind.score_example`,
:meth:`~NetworkKind.learn_example`, :meth:`~NetworkKind.label_of`,
:meth:`~NetworkKind.probabilities_of`) and its model file (``to_state`` and
``from_state``, registered with :func:`snowpy.model_kinds.model_kind`). River's
protocol is written here once over it; a kind that trains its own engine on a
matrix also takes :meth:`~NetworkKind.fit` and :meth:`~NetworkKind.partial_fit` from
here (the checks, the labels, cross-fitted calibration), supplying
:meth:`~NetworkKind.as_input`, :meth:`~NetworkKind.begin_fit`,
:meth:`~NetworkKind.learn_rows`, :meth:`~NetworkKind.begin_stream`,
:meth:`~NetworkKind.check_continues` and :meth:`~NetworkKind.learn_pass`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from snowpy._validation import apply_weights, require_rows
from snowpy.exceptions import ConfigurationError
from snowpy.network.calibrating import held_out_scores
from snowpy.network.labels import (
    LabelIndex,
    check_y,
    is_multilabel,
    label_array,
    sorted_labels,
)
from snowpy.network.online import parse_example
from snowpy.network.options import calibrating
from snowpy.progress import phase

__all__ = ["NetworkKind"]


class NetworkKind:
    """The base of every kind of network (see the module's description)."""

    calibrate: Any
    epochs: Any
    shuffle: Any
    if TYPE_CHECKING:  # (what each kind has: its options' check and its learned state)
        def check_options(self) -> None: ...

        @property
        def state_(self) -> Any: ...

        @property
        def multilabel_(self) -> bool: ...

    # -------------------------------------------------- the engine's protocol
    def score_example(self, ids: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, int]:
        """The scores of one checked example (``ids`` sorted, unique, checked:
        :func:`~snowpy.network.online.parse_example`) per target, and the best target."""
        raise NotImplementedError

    def learn_example(self, ids: np.ndarray, vals: np.ndarray, y: Any,
                      width: int | None = None) -> Any:
        """Learn one checked example; a network it starts has ``width`` features."""
        raise NotImplementedError

    def label_of(self, scores: np.ndarray, best: int) -> Any:
        """The prediction of one example from its scores and its best target."""
        raise NotImplementedError

    def probabilities_of(self, scores: np.ndarray) -> dict[Any, float]:
        """The calibrated probability of each label, from one example's scores."""
        raise NotImplementedError

    def __sklearn_is_fitted__(self) -> bool:  # pragma: no cover - each kind's
        raise NotImplementedError

    @property
    def _labels(self) -> LabelIndex:  # (what LabelPrediction reads; a cloud its members')
        return self.state_.labels

    @property
    def _indicator(self) -> bool:
        return bool(self.state_.indicator)

    # ------------------------------------------------- River's, written once
    def learn_one(self, x: Any, y: Any) -> Any:
        """Learn one example: ``x`` a dict of feature id -> strength (or active ids, an
        ``(ids, strengths)`` pair of arrays, a sparse row), ``y`` its label (a
        collection of labels for a multi-label network). Returns the network."""
        ids, vals = parse_example(x)
        return self.learn_example(ids, vals, y)

    def predict_one(self, x: Any) -> Any:
        """The label of one example (a tuple of labels for a multi-label network); None
        before the first example is learned, as River's classifiers answer."""
        if not self.__sklearn_is_fitted__():
            return None
        return self.label_of(*self.score_example(*parse_example(x)))

    def predict_proba_one(self, x: Any) -> dict[Any, float]:
        """The calibrated probability of each label for one example, a dict; ``{}``
        before the first example is learned.

        With ``calibrate="progressive"`` the sigmoids follow the stream: fitted on the
        scores examples got before they were learned, refitted by the learning as the
        window grows (every 8 examples at first, then whenever a tenth more came).
        """
        if not self.__sklearn_is_fitted__():
            return {}
        scores, _ = self.score_example(*parse_example(x))
        return self.probabilities_of(scores)

    def learn_many(self, X: Any, y: Sequence[Any]) -> Any:
        """Learn a mini-batch in order (River's name for ``partial_fit``)."""
        return self.partial_fit(X, y)

    def predict_many(self, X: Any) -> Any:
        """The labels of a mini-batch (River's name for ``predict``)."""
        return self.predict(X)  # type: ignore[attr-defined]

    # ----------------------------------------- fit, for a kind with an engine
    def as_input(self, X: Any, targets: Any) -> Any:
        """``X`` as the engine reads it, checked (a kind refuses what it cannot take)."""
        raise NotImplementedError

    def begin_fit(self, X: Any, labels: LabelIndex, multilabel: bool, indicator: bool
                  ) -> None:
        """A fresh engine for ``X``'s width with a target per label."""
        raise NotImplementedError

    def learn_rows(self, X: Any, y: Any, targets: Any, *, progress: Any,
                   keys: np.ndarray | None) -> None:
        """Train the fresh engine for ``epochs`` passes (discarding and progressive
        calibration included, as the kind does them)."""
        raise NotImplementedError

    def normalisation(self, multilabel: bool) -> str:
        """How calibrated probabilities combine across targets."""
        raise NotImplementedError

    def begin_stream(self, X: Any, multilabel: bool) -> None:
        """A fresh engine for ``X``'s width, before the first example of a stream."""
        raise NotImplementedError

    def check_continues(self, X: Any) -> None:
        """Refuse what a trained engine cannot continue from (``X`` of another width, a
        model that kept no training state)."""
        raise NotImplementedError

    def learn_pass(self, X: Any, y: Any, targets: Any, *, progress: Any) -> None:
        """One pass over ``(X, y)`` in the given order, continuing from what was
        learned."""
        raise NotImplementedError

    def fit(self, X: Any, y: Sequence[Any], *, sample_weight: Any = None,
            targets: Sequence[Any] | None = None, progress: Any = None,
            shuffle_keys: np.ndarray | None = None) -> Any:
        """Train a new network for ``epochs`` passes over ``(X, y)``.

        Parameters
        ----------
        X : sparse matrix or array, shape (n_examples, n_features)
            Active features: binary presence or real strengths.
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

        Returns
        -------
        self
        """
        self.check_options()
        return self.fit_checked(X, y, sample_weight=sample_weight, targets=targets,
                                progress=progress, shuffle_keys=shuffle_keys)

    def fit_checked(self, X: Any, y: Sequence[Any], *, sample_weight: Any = None,
                    targets: Sequence[Any] | None = None, progress: Any = None,
                    shuffle_keys: np.ndarray | None = None) -> Any:
        """:meth:`fit`, the options checked already: a fold network of cross-fitted
        calibration has the options of the network it calibrates, checked once."""
        X = self.as_input(X, targets)
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
        held_out = held_out_scores(self, X, y, targets, labels, multilabel, progress, keys) \
            if calibrating(self.calibrate).cross_fits else None
        if held_out is not None:
            keys = held_out[3]  # (computed once: the folds and the final shuffle share them)
        self.begin_fit(X, labels, multilabel, width is not None)
        phase(progress, "training", X.shape[0] * int(self.epochs))
        self.learn_rows(X, y, targets, progress=progress, keys=keys)
        if held_out is not None:
            from snowpy.calibration import Calibration

            scores, positives, covered, _ = held_out
            if not covered.all():  # (holdout: the held-out fold only; cv covers all)
                scores, positives = scores[covered], positives[covered]
            self.calibration_ = Calibration.fit(
                scores, positives, normalize=self.normalisation(multilabel),
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
        X = self.as_input(X, targets)
        y, width = check_y(y, X.shape[0], type(self).__name__)
        X, y, targets, _ = apply_weights(X, y, targets, sample_weight)
        y = label_array(y)
        multilabel = width is not None or (
            is_multilabel(y) if len(y) else fitted and self.multilabel_)
        if not fitted:
            self.begin_stream(X, multilabel)
            state = self.state_
            state.indicator = width is not None
            for column in range(width or 0):
                state.labels.add(column)
        else:
            self.check_continues(X)
            if multilabel != self.multilabel_:
                kind = "multi-label" if self.multilabel_ else "single-label"
                raise ConfigurationError(f"this network was trained {kind}; y must be {kind} "
                                         "too")
        for label in () if classes is None else classes:
            self.state_.labels.add(label)
        self.learn_pass(X, y, targets, progress=progress)
        return self
