"""The compiled loops of :mod:`snowpy.distributed.mixing`: a network's links as sorted
keys, what one round changed, and the linear merges of sorted tables."""

from __future__ import annotations

import numpy as np

from snowpy._jit import jit

__all__ = ["changes", "merge", "table"]


@jit
def table(features, sizes, targets, W, U, averaging, reference, geometric,
          n_targets):  # pragma: no cover - compiled
    """Keys ``(feature + 1) * n_targets + target`` in increasing order; per key
    ``f(w) - f(reference)`` of each weight plane (``f`` the logarithm when
    ``geometric``), the averaging sums (``U``, when ``averaging``) and the link each
    came from. ``features[0]`` is the bias (-1); a row's links lie in the order made."""
    n_rows = sizes.shape[0]
    starts = np.zeros(n_rows + 1, np.int64)
    for r in range(n_rows):
        starts[r + 1] = starts[r] + sizes[r]
    order = np.argsort(features)
    total = starts[n_rows]
    planes = W.shape[1]
    keys = np.empty(total, np.int64)
    out_W = np.empty((total, planes), np.float64)
    out_U = np.empty((total, planes if averaging else 0), np.float64)
    source = np.empty(total, np.int64)
    k = 0
    local = np.empty(n_targets + 1, np.int64)
    for q in range(n_rows):
        r = order[q]
        base = (features[r] + 1) * n_targets
        count = 0  # the row's links in target order
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
                out_W[k, p] = (np.log(w) - np.log(reference[p])) if geometric \
                    else w - reference[p]
                if averaging:
                    out_U[k, p] = np.float64(U[j, p])
            k += 1
    return keys, out_W, out_U, source


@jit
def changes(start_keys, start_W, start_U, keys, W, U, weight):  # pragma: no cover
    """What a round changed: the links of the trained table that are new or whose
    weights or sums moved, with ``weight`` times the change, the weight of the shard
    as a changer of each (0 for a link made and left at its initial weight: it
    exists, and says nothing of where the weight should go), and the positions (in
    the trained table) they came from."""
    n = keys.shape[0]
    out_keys = np.empty(n, np.int64)
    out_W = np.empty((n, W.shape[1]), np.float64)
    out_U = np.empty((n, U.shape[1]), np.float64)
    out_C = np.empty(n, np.float64)
    taken = np.empty(n, np.int64)
    s = 0
    k = 0
    for i in range(n):
        while s < start_keys.shape[0] and start_keys[s] < keys[i]:
            s += 1
        known = s < start_keys.shape[0] and start_keys[s] == keys[i]
        moved = False
        for p in range(W.shape[1]):
            before = start_W[s, p] if known else 0.0
            out_W[k, p] = weight * (W[i, p] - before)
            if W[i, p] != before:
                moved = True
        for p in range(U.shape[1]):
            before = start_U[s, p] if known else 0.0
            out_U[k, p] = weight * (U[i, p] - before)
            if U[i, p] != before:
                moved = True
        if moved or not known:
            out_keys[k] = keys[i]
            out_C[k] = weight if moved else 0.0
            taken[k] = i
            k += 1
    return out_keys[:k], out_W[:k], out_U[:k], out_C[:k], taken[:k]


@jit(inline="always")
def _add(W, U, C, k, W_from, U_from, C_from, i):  # pragma: no cover - compiled
    """Row ``i`` of a table added to row ``k`` of the sum."""
    for p in range(W_from.shape[1]):
        W[k, p] += W_from[i, p]
    for p in range(U_from.shape[1]):
        U[k, p] += U_from[i, p]
    C[k] += C_from[i]


@jit
def merge(ka, Wa, Ua, Ca, ca, kb, Wb, Ub, Cb, cb, adding):  # pragma: no cover - compiled
    """Two sorted tables as one: the values (``W``, ``U``, and the weights ``C`` of the
    shards that changed each link) of a key in both added; counts added
    (``adding``) or the larger kept; empty count arrays stay empty."""
    n = ka.shape[0] + kb.shape[0]
    keys = np.empty(n, np.int64)
    W = np.zeros((n, Wa.shape[1]), np.float64)
    U = np.zeros((n, Ua.shape[1]), np.float64)
    C = np.zeros(n, np.float64)
    counting = ca.shape[0] > 0 or cb.shape[0] > 0
    counts = np.zeros(n if counting else 0, np.int64)
    i = j = k = 0
    while i < ka.shape[0] or j < kb.shape[0]:
        take_a = j >= kb.shape[0] or (i < ka.shape[0] and ka[i] <= kb[j])
        take_b = i >= ka.shape[0] or (j < kb.shape[0] and kb[j] <= ka[i])
        if take_a:
            keys[k] = ka[i]
            _add(W, U, C, k, Wa, Ua, Ca, i)
            if counting and ca.shape[0] > 0:
                counts[k] = ca[i]
            i += 1
        if take_b:
            keys[k] = kb[j]
            _add(W, U, C, k, Wb, Ub, Cb, j)
            if counting and cb.shape[0] > 0:
                if take_a:
                    counts[k] = counts[k] + cb[j] if adding else max(counts[k], cb[j])
                else:
                    counts[k] = cb[j]
            j += 1
        k += 1
    return keys[:k], W[:k], U[:k], C[:k], counts[:k]
