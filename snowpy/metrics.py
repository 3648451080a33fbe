"""Evaluation metrics: classification quality and probability calibration.

Conventions (stated here because they differ between libraries):

* precision, recall and F1 of a class with no prediction or no example are 0;
  a label of the truth or the predictions that ``labels`` does not list (a
  label the model never learned) is counted after those listed, as scikit-learn
  counts the union of the labels; *macro* averages the figures of the classes that are in the truth or in the
  predictions (scikit-learn's convention: a class the model knows but no
  document has and no prediction gives does not count), *micro* pools their
  counts (for a single-label task micro-F1 equals accuracy);
* log loss is the mean negative log probability of the true class, with
  probabilities clipped to ``[1e-15, 1 - 1e-15]``;
* the Brier score is the mean over examples of ``sum_k (p_k - y_k)^2`` (for
  two classes, twice the binary Brier score);
* the expected calibration error (ECE) uses ``bins`` equal-width bins of the
  top-class confidence over ``[0, 1]`` (15 by default; the upper edge belongs
  to the last bin): ``sum_b |accuracy_b - confidence_b| * n_b / n``;
* for multi-label models each (document, label) pair is a binary prediction:
  log loss is the mean binary cross-entropy over the pairs, the Brier score is
  the mean of ``(p_k - y_k)^2`` over the pairs, and the ECE bins the pairs by
  their probability and compares it with the fraction that hold the label.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "brier_score",
    "classification_report",
    "confusion_matrix",
    "confusion_report",
    "expected_calibration_error",
    "log_loss",
    "multilabel_calibration",
    "multilabel_report",
    "reliability",
]


def confusion_matrix(truth: Sequence[Any], predicted: Sequence[Any], labels: Sequence[Any]
                     ) -> np.ndarray:
    """Counts ``[true label, predicted label]`` in the order of ``labels``.

    >>> confusion_matrix(["a", "b", "b"], ["a", "a", "b"], ["a", "b"]).tolist()
    [[1, 0], [1, 1]]
    """
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for t, p in zip(truth, predicted):
        if t in index and p in index:
            matrix[index[t], index[p]] += 1
    return matrix


def _prf(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> tuple[np.ndarray, ...]:
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 0.0)
        recall = np.where(tp + fn > 0, tp / np.maximum(tp + fn, 1), 0.0)
        f1 = np.where(precision + recall > 0,
                      2 * precision * recall / np.maximum(precision + recall, 1e-300), 0.0)
    return precision, recall, f1


def _averages(tp, fp, fn, labels) -> dict[str, Any]:
    precision, recall, f1 = _prf(tp, fp, fn)
    micro = _prf(np.array([tp.sum()]), np.array([fp.sum()]), np.array([fn.sum()]))
    present = (tp + fn > 0) | (tp + fp > 0)  # (in the truth or in the predictions)
    return {
        "per_class": {str(label): {"precision": float(precision[i]), "recall": float(recall[i]),
                                   "f1": float(f1[i]), "support": int(tp[i] + fn[i])}
                      for i, label in enumerate(labels)},
        "macro": {"precision": float(precision[present].mean()) if present.any() else 0.0,
                  "recall": float(recall[present].mean()) if present.any() else 0.0,
                  "f1": float(f1[present].mean()) if present.any() else 0.0,
                  "classes": int(present.sum())},
        "micro": {"precision": float(micro[0][0]), "recall": float(micro[1][0]),
                  "f1": float(micro[2][0])},
    }


def _with_unlisted(labels: Sequence[Any], *found: Any) -> list[Any]:
    """``labels``, then the labels in ``found`` that it does not list, in order of their
    names: a document whose label the model does not know counts as a mistake."""
    listed = set(labels)
    return [*labels, *sorted({label for group in found for label in group} - listed, key=str)]


def classification_report(truth: Sequence[Any], predicted: Sequence[Any],
                          labels: Sequence[Any]) -> dict[str, Any]:
    """Accuracy, per-class precision/recall/F1, macro and micro averages, confusion.

    >>> report = classification_report(["a", "b", "b"], ["a", "a", "b"], ["a", "b"])
    >>> report["accuracy"], report["per_class"]["a"]["precision"]
    (0.6666666666666666, 0.5)

    The macro averages cover the classes in ``truth`` or ``predicted`` only:

    >>> report = classification_report(["a", "b"], ["a", "a"], ["a", "b", "c"])
    >>> round(report["macro"]["f1"], 4), report["macro"]["classes"]
    (0.3333, 2)

    A label ``labels`` does not list is counted too, so micro-F1 equals accuracy:

    >>> report = classification_report(["a", "b", "c", "a"], ["a", "a", "a", "a"], ["a"])
    >>> report["accuracy"], report["micro"]["f1"], report["per_class"]["b"]["support"]
    (0.5, 0.5, 1)
    """
    labels = _with_unlisted(labels, truth, predicted)
    total = len(truth)
    correct = sum(1 for t, p in zip(truth, predicted) if t == p)
    return {"accuracy": correct / total if total else 0.0, "documents": total,
            **confusion_report(confusion_matrix(truth, predicted, labels), labels)}


def confusion_report(matrix: np.ndarray, labels: Sequence[Any]) -> dict[str, Any]:
    """Per-class precision/recall/F1, macro and micro averages, and the confusion, of
    the counts ``matrix`` ``[true label, predicted label]`` in the order of ``labels``
    (:func:`confusion_matrix`'s, or counts added up elsewhere: a cluster's workers')."""
    tp = np.diag(matrix).astype(np.float64)
    fp = matrix.sum(axis=0) - tp
    fn = matrix.sum(axis=1) - tp
    return {**_averages(tp, fp, fn, labels), "confusion": {
        "labels": [str(x) for x in labels], "matrix": np.asarray(matrix).tolist()}}


def multilabel_report(truth: Sequence[Sequence[Any]], predicted: Sequence[Sequence[Any]],
                      labels: Sequence[Any]) -> dict[str, Any]:
    """Subset accuracy, per-label precision/recall/F1 and micro/macro averages.

    >>> r = multilabel_report([("a",), ("a", "b")], [("a",), ("a",)], ["a", "b"])
    >>> r["micro"]["f1"], r["subset_accuracy"]
    (0.8, 0.5)
    """
    true_sets = [set(labels_) for labels_ in truth]
    predicted_sets = [set(labels_) for labels_ in predicted]
    labels = _with_unlisted(labels, *true_sets, *predicted_sets)
    index = {label: i for i, label in enumerate(labels)}
    tp = np.zeros(len(labels))
    fp = np.zeros(len(labels))
    fn = np.zeros(len(labels))
    exact = 0
    for t, p in zip(true_sets, predicted_sets):
        exact += t == p
        for counts, labels_ in ((tp, t & p), (fp, p - t), (fn, t - p)):
            for label in labels_:
                counts[index[label]] += 1
    return {"subset_accuracy": exact / len(truth) if len(truth) else 0.0,
            "documents": len(truth), **_averages(tp, fp, fn, labels)}


def log_loss(probabilities: np.ndarray, true_index: np.ndarray) -> float:
    """Mean negative log probability of the true class (clipped at 1e-15).

    >>> round(log_loss(np.array([[0.8, 0.2], [0.4, 0.6]]), np.array([0, 1])), 4)
    0.367
    """
    p = np.clip(probabilities[np.arange(len(true_index)), true_index], 1e-15, 1 - 1e-15)
    return float(-np.mean(np.log(p)))


def brier_score(probabilities: np.ndarray, true_index: np.ndarray) -> float:
    """Mean over examples of ``sum_k (p_k - y_k)^2``.

    >>> round(brier_score(np.array([[0.8, 0.2], [0.4, 0.6]]), np.array([0, 1])), 4)
    0.2
    """
    onehot = np.zeros_like(probabilities)
    onehot[np.arange(len(true_index)), true_index] = 1.0
    return float(np.mean(np.sum((probabilities - onehot) ** 2, axis=1)))


def reliability(probabilities: np.ndarray, true_index: np.ndarray, bins: int = 15
                ) -> dict[str, list[float]]:
    """Reliability-diagram data over equal-width bins of the top-class confidence.

    Returns the bins' edges and, per bin, the number of examples, the mean
    confidence and the accuracy (``nan`` for an empty bin).
    """
    return _binned(probabilities.max(axis=1), probabilities.argmax(axis=1) == true_index,
                   bins)


def _binned(confidence: np.ndarray, hits: np.ndarray, bins: int) -> dict[str, list[float]]:
    """Per equal-width bin of ``confidence``: its count, mean confidence and share of
    ``hits`` (``nan`` for an empty bin)."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(confidence, edges[1:-1], right=False), 0, bins - 1)
    counts = np.bincount(which, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_confidence = np.bincount(which, confidence, minlength=bins) / counts
        accuracy = np.bincount(which, hits.astype(float), minlength=bins) / counts
    return {"edges": edges.tolist(), "counts": counts.tolist(),
            "confidence": mean_confidence.tolist(), "accuracy": accuracy.tolist()}


def _calibration_error(data: dict[str, list[float]]) -> float:
    """The bins' gaps between accuracy and confidence, weighted by their counts."""
    counts = np.asarray(data["counts"], dtype=float)
    gap = np.abs(np.nan_to_num(np.asarray(data["accuracy"]) - np.asarray(data["confidence"])))
    return float(np.sum(gap * counts) / max(counts.sum(), 1.0))


def expected_calibration_error(probabilities: np.ndarray, true_index: np.ndarray,
                               bins: int = 15) -> float:
    """ECE over equal-width bins of the top-class confidence (see the module docstring).

    >>> p = np.array([[0.9, 0.1], [0.9, 0.1], [0.6, 0.4], [0.6, 0.4]])
    >>> round(expected_calibration_error(p, np.array([0, 0, 0, 1]), bins=10), 3)
    0.1
    """
    return _calibration_error(reliability(probabilities, true_index, bins))


def multilabel_calibration(probabilities: np.ndarray, indicator: np.ndarray, bins: int = 15
                           ) -> dict[str, Any]:
    """Log loss, Brier score, ECE and reliability data of a multi-label model's per-label
    probabilities ``[n, labels]`` against the 0/1 ``indicator`` of the true labels.

    >>> r = multilabel_calibration(np.array([[0.9, 0.2]]), np.array([[1, 0]]), bins=10)
    >>> round(r["log_loss"], 4), round(r["brier"], 4), round(r["ece"], 4)
    (0.1643, 0.025, 0.15)
    """
    p = np.clip(np.asarray(probabilities, dtype=float), 1e-15, 1 - 1e-15).ravel()
    y = np.asarray(indicator, dtype=float).ravel()
    binned = _binned(p, y, bins)
    n = len(indicator)
    return {
        "log_loss": float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))),
        "brier": float(np.mean((np.asarray(probabilities, dtype=float) - indicator) ** 2))
        if n else 0.0,
        "ece": _calibration_error(binned), "reliability": binned,
    }
