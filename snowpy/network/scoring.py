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

import numba
import numpy as np

__all__ = ["score_rows"]


@numba.njit(nogil=True, cache=True)
def score_rows(indptr, rows, vals, start, size, target, E, absent, bias, theta,
               out):  # pragma: no cover - compiled
    """Fill ``out[i, t]`` with the score of every example ``i`` of a CSR matrix.

    ``rows`` are the rows of ``X.indices`` (``-1`` for unseen features).
    """
    n_targets = out.shape[1]
    for i in range(out.shape[0]):
        for t in range(n_targets):
            out[i, t] = 0.0
        vsum = bias
        if bias != 0.0:
            for j in range(start[0], start[0] + size[0]):
                out[i, target[j]] += bias * E[j]
        for q in range(indptr[i], indptr[i + 1]):
            r = rows[q]
            v = vals[q]
            vsum += v
            if r < 0:
                continue
            for j in range(start[r], start[r] + size[r]):
                out[i, target[j]] += v * E[j]
        base = absent * vsum - theta
        for t in range(n_targets):
            out[i, t] += base


def scores(store, effective: np.ndarray, X, bias: float, theta: float) -> np.ndarray:
    """Scores ``float64[n, targets]`` of the rows of CSR matrix ``X``."""
    rows = store.prediction_rows(X)
    out = np.empty((X.shape[0], store.n_targets), dtype=np.float64)
    score_rows(X.indptr, rows, X.data, store.start, store.size, store.target, effective,
               store.absent, bias, theta, out)
    return out
