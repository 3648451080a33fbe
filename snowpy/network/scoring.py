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

from snowpy._jit import jit

__all__ = ["score_rows"]


@jit
def score_rows(indptr, rows, vals, start, size, cap, dense, target, E, absent, bias, theta,
               out):  # pragma: no cover - compiled
    """Fill ``out[i, t]`` with the score of every example ``i`` of a CSR matrix.

    ``rows`` are the rows of ``X.indices`` (``-1`` for unseen features); the
    bias is row 0. Written out flat: a helper taking these arrays would cost
    a reference count per array per call.
    """
    n_targets = out.shape[1]
    acc = np.empty(n_targets, np.float64)
    for i in range(out.shape[0]):
        for t in range(n_targets):
            acc[t] = 0.0
        vsum = bias
        for q in range(indptr[i] - 1, indptr[i + 1]):
            if q < indptr[i]:  # the bias first
                if bias == 0.0:
                    continue
                r = 0
                v = bias
            else:
                r = rows[q]
                v = vals[q]
                vsum += v
                if r < 0:
                    continue
            first = start[r]
            if dense[r] == 1:  # target t at offset t; a hole weighs nothing
                for t in range(min(cap[r], n_targets)):
                    acc[t] += v * E[first + t]
            else:
                for j in range(first, first + size[r]):
                    acc[target[j]] += v * E[j]
        base = absent * vsum - theta
        for t in range(n_targets):
            out[i, t] = acc[t] + base


def scores(store, effective: np.ndarray, X, bias: float, theta: float) -> np.ndarray:
    """Scores ``float64[n, targets]`` of the rows of CSR matrix ``X``."""
    rows = store.prediction_rows(X)
    out = np.empty((X.shape[0], store.n_targets), dtype=np.float64)
    score_rows(X.indptr, rows, X.data, store.start, store.size, store.cap, store.dense,
               store.target, effective, store.absent, bias, theta, out)
    return out
