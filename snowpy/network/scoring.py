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


@numba.njit(nogil=True, cache=True, inline="always")
def _add_row(out, i, r, v, start, size, ordered, target, E):  # pragma: no cover
    first = start[r]
    n = size[r]
    if n == out.shape[1] and ordered[r] == 1:  # a dense row: target t at offset t
        for t in range(n):
            out[i, t] += v * E[first + t]
    else:
        for j in range(first, first + n):
            out[i, target[j]] += v * E[j]


@numba.njit(nogil=True, cache=True)
def score_rows(indptr, rows, vals, start, size, ordered, target, E, absent, bias, theta,
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
            _add_row(out, i, 0, bias, start, size, ordered, target, E)
        for q in range(indptr[i], indptr[i + 1]):
            r = rows[q]
            v = vals[q]
            vsum += v
            if r >= 0:
                _add_row(out, i, r, v, start, size, ordered, target, E)
        base = absent * vsum - theta
        for t in range(n_targets):
            out[i, t] += base


def scores(store, effective: np.ndarray, X, bias: float, theta: float) -> np.ndarray:
    """Scores ``float64[n, targets]`` of the rows of CSR matrix ``X``."""
    rows = store.prediction_rows(X)
    out = np.empty((X.shape[0], store.n_targets), dtype=np.float64)
    score_rows(X.indptr, rows, X.data, store.start, store.size, store.ordered, store.target,
               effective, store.absent, bias, theta, out)
    return out
