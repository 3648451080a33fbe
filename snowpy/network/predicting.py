"""Predictions from target scores: winner-take-all, multi-label claims, abstention.

What a :class:`~snowpy.Network` and a :class:`~snowpy.Cloud` share: both give
``target_scores`` (positive: the target claims the example), ``classes_``,
``multilabel_``, their ``_labels`` and ``calibration_`` (or None), and this
mixin turns the scores into labels, abstentions and accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from snowpy._validation import as_csr, check_length
from snowpy.base import available_if
from snowpy.exceptions import ConfigurationError, NotFittedError

__all__ = ["ABSTAIN", "LabelPrediction", "gives_probabilities"]

#: Rows scored at once by ``predict`` (bounds its memory for many targets).
_PREDICT_BLOCK = 8192

#: What ``predict(..., abstain=k)`` answers for an example it abstains on.
ABSTAIN = None


def gives_probabilities(estimator: Any) -> bool:
    """this model has no calibration; train it with calibrate='cv' to get probabilities
    (or calibrate='holdout', or calibrate='progressive')"""
    return estimator.calibrate not in (None, "none") or \
        getattr(estimator, "calibration_", None) is not None


class LabelPrediction:
    """``predict``, ``decision_function``, ``normalised_scores`` and ``score`` from
    ``target_scores``."""

    _labels: Any
    calibration_: Any
    multilabel_: bool
    classes_: Any

    def _check_fitted(self) -> None:  # pragma: no cover - the estimator's
        raise NotImplementedError

    def target_scores(self, X: Any) -> np.ndarray:  # pragma: no cover - the estimator's
        raise NotImplementedError

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
            if getattr(self, "_indicator", False):  # trained on an indicator matrix
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
        if getattr(self, "_indicator", False):
            return float(np.mean(np.all(predicted == np.asarray(y), axis=1)))
        if self.multilabel_:
            return float(np.mean([set(p) == set(t) for p, t in zip(predicted, y)]))
        return float(np.mean(np.asarray(predicted, dtype=object) == np.asarray(y, dtype=object)))

    # one example at a time: its scores to a label, or to probabilities
    def label_of(self, scores: np.ndarray, best: int) -> Any:
        """The prediction of one example from its scores and its best target."""
        labels = self._labels.labels
        if self.multilabel_:
            return tuple(labels[t] for t in np.flatnonzero(scores >= 0))
        return labels[best] if scores.size else None

    def probabilities_of(self, scores: np.ndarray) -> dict[Any, float]:
        """The calibrated probability of each label, from one example's scores."""
        if self.calibration_ is None:
            raise ConfigurationError(
                "this network has no calibration; train it with calibrate='progressive' "
                "(online) or calibrate='cv' to get probabilities"
            )
        probabilities = self.calibration_.probabilities(scores[None, :])[0]
        return dict(zip(self._labels.labels, probabilities.tolist()))
