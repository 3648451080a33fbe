"""Scoring examples through the links: activations minus the threshold.

The score of target ``t`` on an example with strengths ``v_k`` on rows
``r_k`` (the bias first, with its strength) is

    absent * sum_k v_k + sum_k v_k * sum_{links j of r_k} E[j] - theta

where ``E[j]`` is link ``j``'s effective weight minus the absent weight
(:meth:`snowpy.network.links.LinkStore.effective`). A feature never seen
in training (row ``-1``) and a missing link both weigh the absent weight.
The cost is proportional to the links of the active features, whatever the
number of targets.
"""

from __future__ import annotations

import numpy as np

from snowpy._core.scoring import score_rows
from snowpy._rows import Rows

__all__ = ["score_rows", "scores"]


def scores(store, effective: np.ndarray, X, bias: float, theta: float) -> np.ndarray:
    """Scores ``float64[n, targets]`` of the rows of CSR matrix ``X``."""
    rows = store.prediction_rows(X)
    out = np.empty((X.shape[0], store.n_targets), dtype=np.float64)
    vals = X.strengths if isinstance(X, Rows) else X.data
    score_rows(X.indptr, rows, vals, store.rows, store.target, effective, store.absent,
               bias, theta, out)
    return out
