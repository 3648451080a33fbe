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

from typing import Any

import numpy as np

from snowpy._core.scoring import score_rows
from snowpy._rows import Rows

__all__ = ["score_rows", "scores", "worth_a_table"]


def scores(store: Any, effective: np.ndarray | None, X: Any, bias: float, theta: float, *,
           averaged: bool = True) -> np.ndarray:
    """Scores ``float64[n, targets]`` of the rows of CSR matrix ``X``: from ``effective``
    (:meth:`~snowpy.network.links.LinkStore.effective`, every link's weight), or, when it
    is None, each link's weight computed as it is read (``averaged`` as there)."""
    rows = store.prediction_rows(X)
    out = np.empty((X.shape[0], store.n_targets), dtype=np.float64)
    vals = X.strengths if isinstance(X, Rows) else X.data
    W, U, seen, planes, averaging, round32, absent = store.weighing(averaged=averaged)
    if effective is not None:
        W, U = W[:0], U[:0]
    score_rows(X.indptr, rows, vals, store.rows, store.target, effective, W, U, seen, planes,
               averaging, round32, absent, bias, theta, out)
    return out


def worth_a_table(store: Any, X: Any) -> bool:
    """Whether scoring ``X`` should compute every link's weight first (a table, kept for
    the next call) rather than each link's on the way: when ``X`` reads a good share of
    the network's rows (a few documents of a large model read a sliver of it)."""
    return int(X.indptr[-1]) * 8 >= store.n_rows
