"""Calibrating a network: the scores its sigmoids are fitted on.

* cross-fitting (``calibrate="cv"`` / ``"holdout"``): networks with the same
  settings trained on the other folds score each held-out example; they are
  trained, and freed, before the final network exists;
* progressive (``calibrate="progressive"``): the scores the engine recorded
  for each example before learning from it, the most recent
  :data:`PROGRESSIVE_WINDOW` kept across ``partial_fit`` calls.

The sigmoids themselves are :class:`snowpy.calibration.Calibration`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from snowpy.calibration import Calibration
from snowpy.network.labels import LabelIndex

__all__ = ["held_out_scores", "keep_progressive", "fit_progressive", "PROGRESSIVE_WINDOW"]

#: Progressive scores kept for calibration while streaming (the most recent ones).
PROGRESSIVE_WINDOW = 100_000


def held_out_scores(net: Any, X: sp.csr_matrix, y: Sequence[Any], targets: Any,
                    labels: LabelIndex, multilabel: bool):
    """Out-of-fold decision scores, for calibration (see ``calibrate``)."""
    n = X.shape[0]
    positives = np.zeros((n, len(labels)), dtype=bool)
    y_indptr, y_targets = labels.encode(y, multilabel=multilabel, grow=False)
    positives[np.repeat(np.arange(n), np.diff(y_indptr)), y_targets] = True
    folds = np.array_split(np.random.default_rng(net.seed).permutation(n),
                           int(net.calibration_folds))
    if net.calibrate == "holdout":
        folds = folds[:1]
    scores = np.zeros((n, len(labels)))
    covered = np.zeros(n, dtype=bool)
    params = net.get_params()
    params["calibrate"] = None
    for held in folds:
        train = np.setdiff1d(np.arange(n), held)
        if train.size == 0 or held.size == 0:
            continue
        part_y = [y[i] for i in train]
        part_targets = None if targets is None else [targets[i] for i in train]
        clone = type(net)(**params).fit(X[train], part_y, targets=part_targets)
        part_scores = clone.decision_function(X[held])
        # a label missing from the other folds scores as the lowest seen
        columns = np.full((held.size, len(labels)), part_scores.min() - 1.0)
        for column, label in enumerate(clone._labels.labels):
            columns[:, labels.find(label)] = part_scores[:, column]
        scores[held] = columns
        covered[held] = True
        del clone, part_scores, columns
    return scores, positives, covered


def keep_progressive(net: Any, scores: np.ndarray, positives: np.ndarray) -> None:
    """Add progressive scores to the window kept for calibration (newest last)."""
    previous = getattr(net, "_progressive", None)
    if previous is not None:
        old_scores, old_positives = previous
        width = scores.shape[1]
        if old_scores.shape[1] < width:  # targets grown since: they scored nothing
            pad = width - old_scores.shape[1]
            low = float(old_scores.min()) - 1.0 if old_scores.size else -1.0
            old_scores = np.hstack([old_scores, np.full((len(old_scores), pad), low)])
            old_positives = np.hstack([old_positives,
                                       np.zeros((len(old_positives), pad), bool)])
        scores = np.vstack([old_scores, scores])
        positives = np.vstack([old_positives, positives])
    net._progressive = (scores[-PROGRESSIVE_WINDOW:], positives[-PROGRESSIVE_WINDOW:])
    net._progressive_stale = True


def fit_progressive(net: Any) -> None:
    """Fit the network's sigmoids on its progressive window."""
    scores, positives = net._progressive
    net.calibration_ = Calibration.fit(
        scores, positives, normalize="none" if net.multilabel_ else "sum",
        method="progressive")
    net._progressive_stale = False
