"""The one-example path: the network's arrays in one numba struct, one call per example.

A compiled call costs about 75 ns per array argument: the training engine
takes thirty, which made calling it cost more than learning a short
example. :class:`OnlineArrays` holds them (and the feature map's) in one
numba struct, passed as one argument; :func:`learn_example` maps the
example's features to rows and runs the engine on it, and
:func:`score_example` maps and scores, each in a single call. The struct
is rebuilt when the store replaces an array (it counts its replacements:
``generation``), which happens a logarithmic number of times.

With ``NUMBA_DISABLE_JIT=1`` the struct is a plain object with the same
attributes, and the functions run as Python.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy._jit import interpreted, jit
from snowpy.bundles import bundle
from snowpy.hashmap import _probe, lookup
from snowpy.network.engine import epoch_loop, new_workspace

__all__ = ["GROW_MAP", "GROW_QUEUE", "GROW_ROWS", "OnlineArrays", "learn_example", "pack", "score_example",
           "score_one"]

#: :func:`learn_example`'s status: the feature map must grow, or the rows, or the
#: workspace's queue of link lists (to the size given as the room figure).
GROW_MAP, GROW_ROWS, GROW_QUEUE = 1, 2, 3

FIELDS = ("slots", "row_ids", "start", "size", "cap", "count", "dense", "target", "W", "U",
          "lcount", "meta", "S", "counts", "planes", "params", "init_w", "absent_w",
          "indptr", "y_indptr", "order", "none64", "none32", "no_scores", "ws")


#: The network's arrays and its feature map's, as one compiled argument.
OnlineArrays = bundle("OnlineArrays", FIELDS, __name__)


@jit(nogil=False)
def _new_arrays(slots, row_ids, start, size, cap, count, dense, target, W, U, lcount, meta, S,
                counts, planes, params, init_w, absent_w, indptr, y_indptr, order, none64,
                none32, no_scores, ws):  # pragma: no cover - compiled
    """An :data:`OnlineArrays` built in compiled code cached on disk (the proxy's own
    constructor is compiled anew in every process: most of a second)."""
    return OnlineArrays(slots, row_ids, start, size, cap, count, dense, target, W, U, lcount,
                        meta, S, counts, planes, params, init_w, absent_w, indptr, y_indptr,
                        order, none64, none32, no_scores, ws)


def pack(store: Any, counts: np.ndarray, kernel_params: np.ndarray, width: int,
         queue: int) -> Any:
    """The struct of a :class:`~snowpy.network.links.LinkStore`'s current arrays, with
    a training workspace for examples of up to ``width`` features and ``queue``
    entries of link lists."""
    fmap = store._map
    planes = np.asarray(store.planes, dtype=np.float64)
    return _new_arrays(
        fmap._slots, fmap._row_ids, store.start, store.size, store.cap, store.count,
        store.dense, store.target, store.W, store.U, store.lcount, store.meta, store.S,
        counts, planes, kernel_params, store.initial_weights, store.absent_planes,
        np.zeros(2, np.int64), np.zeros(2, np.int64), np.zeros(1, np.int64),
        np.empty(0, np.int64), np.empty(0, np.int32), np.empty((0, 0), np.float64),
        new_workspace(width, store.n_targets, planes.shape[0], store.W, queue))


@jit
def score_one(rows, vals, start, size, cap, dense, target, W, U, seen, planes, absent, round32,
              bias, theta, out):  # pragma: no cover - compiled
    """Scores of one example (rows ``-1``: unseen features) from the weights themselves.

    The same arithmetic, in the same order, as
    :meth:`~snowpy.network.links.LinkStore.effective` followed by
    :func:`~snowpy.network.scoring.score_rows`: the example scores exactly as
    the batch path scores it.
    """
    n_targets = out.shape[0]
    averaging = U.shape[0] > 0 and seen > 0
    for t in range(n_targets):
        out[t] = 0.0
    vsum = bias
    for k in range(-1, rows.shape[0]):
        if k < 0:
            if bias == 0.0:
                continue
            r = 0
            v = bias
        else:
            r = rows[k]
            v = vals[k]
            vsum += v
            if r < 0:
                continue
        first = start[r]
        is_dense = dense[r] == 1
        stop = first + (min(cap[r], n_targets) if is_dense else size[r])
        for j in range(first, stop):
            effective = 0.0
            for p in range(planes.shape[0]):
                if planes[p] == 0.0:
                    continue
                weight = float(W[j, p])
                if averaging:
                    weight -= float(U[j, p]) / seen  # in float64, as compiled
                effective += planes[p] * weight
            if round32:
                effective = float(np.float32(effective))
            t = j - first if is_dense else target[j]
            out[t] += v * (effective - absent)
    base = absent * vsum - theta
    for t in range(n_targets):
        out[t] += base


@jit
def learn_example(a, kernel, ids, vals, targets, next_row, policy, min_count, multiplicative,
                  min_magnitude, max_magnitude, theta, pos_thickness, neg_thickness, bias,
                  multilabel, constraint, seen, scores):  # pragma: no cover - compiled
    """Learn one example (ids sorted and unique, no more than the workspace's width):
    ``(status, next_row)`` followed by
    the engine's :data:`~snowpy.network.engine.RESULT_FIELDS`.

    ``status`` is 0, or :data:`GROW_MAP` / :data:`GROW_ROWS` /
    :data:`GROW_QUEUE` when the feature map, the rows or the workspace must
    grow first (then nothing was learned; features already mapped keep their
    rows, and the call is repeated).
    """
    n = ids.shape[0]
    rows = np.empty(n, np.int32)
    stop, next_row = _probe(a.slots, a.row_ids, ids, rows, 0, next_row)
    if stop < n:
        return GROW_MAP, next_row, 0, 0, 0, 0, 0, 0, seen, 0
    if next_row > a.start.shape[0]:
        return GROW_ROWS, next_row, 0, 0, 0, 0, 0, 0, seen, 0
    a.indptr[1] = n
    a.y_indptr[1] = targets.shape[0]
    # (a computed True, not the literal: numba would type a literal as a constant and
    # compile epoch_loop a second time for this caller, 7 s of a first run)
    yes = n >= 0
    r = epoch_loop(kernel, a.start, a.size, a.cap, a.count, a.dense, a.target, a.W, a.U,
                   a.lcount, a.meta, a.S, a.planes, a.params, a.init_w, a.absent_w, policy,
                   min_count, yes, yes, multiplicative, min_magnitude, max_magnitude,
                   a.indptr, rows, vals, a.order, a.y_indptr, targets, a.none64, a.none32,
                   theta, pos_thickness, neg_thickness, bias, multilabel, constraint, seen,
                   a.counts, scores, a.ws)
    if r[8]:
        return GROW_QUEUE, next_row, 0, 0, 0, 0, 0, 0, seen, r[8]
    return 0, next_row, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]


@jit
def score_example(a, ids, vals, seen, absent, round32, bias, theta,
                  out):  # pragma: no cover - compiled
    """Scores of one example into ``out``; returns the best target (the first of ties)."""
    n = ids.shape[0]
    rows = np.empty(n, np.int32)
    if n:
        lookup(a.slots, ids, rows, -1)
    score_one(rows, vals, a.start, a.size, a.cap, a.dense, a.target, a.W, a.U, seen,
              a.planes, absent, round32, bias, theta, out)
    best = 0
    for t in range(1, out.shape[0]):
        if out[t] > out[best]:
            best = t
    return best


if interpreted():  # as Python: the map's hash multiplies modulo 2**64 on purpose
    _learn_python, _score_python = learn_example, score_example

    def learn_example(*args: Any) -> Any:
        with np.errstate(over="ignore"):
            return _learn_python(*args)

    def score_example(*args: Any) -> Any:
        with np.errstate(over="ignore"):
            return _score_python(*args)
