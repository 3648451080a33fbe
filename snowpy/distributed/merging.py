"""The compiled loops of :mod:`snowpy.distributed.mixing`: a network's links as sorted
keys and weighted sums, and the linear merge of two such tables."""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["merge", "table"]


@numba.njit(nogil=True, cache=True)
def table(features, sizes, targets, W, U, seen, reference, geometric, weight,
          n_targets):  # pragma: no cover - compiled
    """Keys ``(feature + 1) * n_targets + target`` in increasing order, and per key
    ``weight * (f(w) - f(reference))`` of the current (``W``) and the averaged
    (``W - U / seen``; ``U`` empty: no averaging) planes, ``f`` the logarithm when
    ``geometric``, and the link each came from. ``features[0]`` is the bias (-1)."""
    n_rows = sizes.shape[0]
    starts = np.zeros(n_rows + 1, np.int64)
    for r in range(n_rows):
        starts[r + 1] = starts[r] + sizes[r]
    order = np.argsort(features)
    total = starts[n_rows]
    planes = W.shape[1]
    averaging = U.shape[0] > 0
    keys = np.empty(total, np.int64)
    out_W = np.empty((total, planes), np.float64)
    out_V = np.empty((total, planes if averaging else 0), np.float64)
    source = np.empty(total, np.int64)
    k = 0
    local = np.empty(n_targets + 1, np.int64)
    for q in range(n_rows):
        r = order[q]
        base = (features[r] + 1) * n_targets
        count = 0  # the row's links in target order (they lie in the order made)
        for j in range(starts[r], starts[r + 1]):
            at = count
            while at > 0 and targets[local[at - 1]] > targets[j]:
                local[at] = local[at - 1]
                at -= 1
            local[at] = j
            count += 1
        for m in range(count):
            j = local[m]
            keys[k] = base + targets[j]
            source[k] = j
            for p in range(planes):
                w = np.float64(W[j, p])
                ref = reference[p]
                if averaging:
                    v = w - np.float64(U[j, p]) / seen if seen > 0 else w
                    out_V[k, p] = weight * ((np.log(v) - np.log(ref)) if geometric else
                                            (v - ref))
                out_W[k, p] = weight * ((np.log(w) - np.log(ref)) if geometric else (w - ref))
            k += 1
    return keys, out_W, out_V, source


@numba.njit(nogil=True, cache=True)
def merge(ka, Wa, Va, ca, kb, Wb, Vb, cb, adding):  # pragma: no cover - compiled
    """Two sorted tables as one: values of a key in both added; counts added (``adding``)
    or the larger kept; empty count arrays stay empty."""
    n = ka.shape[0] + kb.shape[0]
    keys = np.empty(n, np.int64)
    W = np.zeros((n, Wa.shape[1]), np.float64)
    V = np.zeros((n, Va.shape[1]), np.float64)
    counting = ca.shape[0] > 0 or cb.shape[0] > 0
    counts = np.zeros(n if counting else 0, np.int64)
    i = j = k = 0
    while i < ka.shape[0] or j < kb.shape[0]:
        take_a = j >= kb.shape[0] or (i < ka.shape[0] and ka[i] <= kb[j])
        take_b = i >= ka.shape[0] or (j < kb.shape[0] and kb[j] <= ka[i])
        if take_a:
            keys[k] = ka[i]
            for p in range(Wa.shape[1]):
                W[k, p] += Wa[i, p]
            for p in range(Va.shape[1]):
                V[k, p] += Va[i, p]
            if counting and ca.shape[0] > 0:
                counts[k] = ca[i]
            i += 1
        if take_b:
            keys[k] = kb[j]
            for p in range(Wb.shape[1]):
                W[k, p] += Wb[j, p]
            for p in range(Vb.shape[1]):
                V[k, p] += Vb[j, p]
            if counting and cb.shape[0] > 0:
                if take_a:
                    counts[k] = counts[k] + cb[j] if adding else max(counts[k], cb[j])
                else:
                    counts[k] = cb[j]
            j += 1
        k += 1
    return keys[:k], W[:k], V[:k], counts[:k]
