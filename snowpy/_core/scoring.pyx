"""Scoring examples through the links, compiled: activations minus the threshold.

The score of target ``t`` on an example with strengths ``v_k`` on rows ``r_k`` (the
bias first, with its strength) is ``absent * sum_k v_k + sum_k v_k * sum_{links j of
r_k} E[j] - theta``, ``E[j]`` link ``j``'s effective weight minus the absent weight; a
feature never seen (row -1) and a missing link both weigh the absent weight. The cost
is the links of the active features, whatever the number of targets.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc, qsort

from snowpy._core._types cimport index_t
from snowpy._core.effective cimport delta as _delta, plane_t
from snowpy._core.pool cimport row_stop, row_t

import numpy as np


def score_rows(const index_t[::1] indptr, const int32_t[::1] rows, const double[::1] vals,
               const row_t[::1] pool_rows, const int32_t[::1] target, const double[::1] E,
               const plane_t[:, ::1] W, const plane_t[:, ::1] U, double seen,
               const double[::1] planes, bint averaging, bint round32, double absent,
               double bias, double theta, double[:, ::1] out):
    """Fill ``out[i, t]`` with the score of every row ``i`` of a CSR matrix whose
    ``rows`` are pool rows (-1: a feature never seen; the bias is row 0), whose
    bookkeeping is ``pool_rows``.

    ``E``: every slot's effective weight minus the absent weight
    (:func:`effective_weights`); or None, and each link's is computed as it is read from
    ``W`` and ``U`` (``seen``, ``planes``, ``averaging``, ``round32`` as there): the
    same numbers, for a few examples of a large network, whose other links are never
    read (nor brought into memory, from a mapped file)."""
    cdef row_t row
    cdef Py_ssize_t n_targets = out.shape[1]
    cdef double *acc
    cdef Py_ssize_t i, t, stop
    cdef int64_t q, r, first, j
    cdef double v, vsum, base
    cdef bint binary = vals is None
    cdef bint table = E is not None
    cdef const double *e = NULL
    cdef const plane_t *w = NULL
    cdef const plane_t *u = NULL
    cdef Py_ssize_t n_planes = W.shape[1]
    if not binary and vals.shape[0] < rows.shape[0]:
        raise ValueError("the rows have fewer strengths than features")
    if table:
        e = &E[0] if E.shape[0] else NULL
    else:
        if planes.shape[0] != n_planes or (averaging and U.shape[0] != W.shape[0]):
            raise ValueError("the weight planes do not match")
        w = &W[0, 0] if W.shape[0] and n_planes else NULL
        u = &U[0, 0] if averaging and U.shape[0] else NULL
    acc = <double *>malloc((n_targets if n_targets else 1) * sizeof(double))
    if acc == NULL:
        raise MemoryError("no memory to score")
    with nogil:
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
                    v = 1.0 if binary else vals[q]
                    vsum += v
                    if r < 0:
                        continue
                row = pool_rows[r]
                first = row.start
                if row.dense == 1:  # target t at offset t; a hole weighs nothing
                    stop = row.cap if row.cap < n_targets else n_targets
                    for t in range(stop):
                        acc[t] += v * (e[first + t] if table else _delta(
                            w, u, first + t, n_planes, &planes[0], seen, averaging, round32,
                            absent))
                else:
                    for j in range(first, first + row.size):
                        acc[target[j]] += v * (e[j] if table else _delta(
                            w, u, j, n_planes, &planes[0], seen, averaging, round32, absent))
            base = absent * vsum - theta
            for t in range(n_targets):
                out[i, t] = acc[t] + base
    free(acc)


cdef struct pair_t:
    int32_t target
    double delta


cdef int _by_target(const void *a, const void *b) noexcept nogil:
    cdef int32_t x = (<const pair_t *>a).target
    cdef int32_t y = (<const pair_t *>b).target
    return (x > y) - (x < y)


def link_deltas(const row_t[::1] rows, const int32_t[::1] target, int64_t n_rows,
                const plane_t[:, ::1] W, const plane_t[:, ::1] U, double seen,
                const double[::1] planes, bint averaging, bint round32, double absent):
    """:func:`effective_weights` of the links alone, rows in order and each row's links
    by target: the weights of ``links_csr`` minus the absent weight, without a number per
    pool slot or a list of the slots. The order is the exact layout's, whatever the
    pool's (links appended as they came, or a network learned in parts and put
    together): a sum over them rounds alike on any number of threads."""
    cdef int64_t total = 0, widest = 0
    cdef int64_t r, j, k = 0, m, i
    cdef bint ordered
    cdef int32_t last
    cdef Py_ssize_t n = W.shape[1]
    cdef const plane_t *w = &W[0, 0] if W.shape[0] and n else NULL
    cdef const plane_t *u = &U[0, 0] if averaging and U.shape[0] else NULL
    cdef pair_t *row_links
    if planes.shape[0] != n:
        raise ValueError("the weight planes do not match")
    for r in range(n_rows):
        total += rows[r].size
        if rows[r].size > widest:
            widest = rows[r].size
    deltas = np.empty(total, np.float64)
    cdef double[::1] out = deltas
    row_links = <pair_t *>malloc(max(widest, 1) * sizeof(pair_t))
    if row_links == NULL:
        raise MemoryError("no memory for the links' weights")
    with nogil:
        for r in range(n_rows):
            m = 0
            ordered = True
            last = -1
            for j in range(rows[r].start, row_stop(rows[r])):
                if target[j] >= 0:
                    row_links[m].target = target[j]
                    row_links[m].delta = _delta(w, u, j, n, &planes[0], seen, averaging,
                                                round32, absent)
                    ordered = ordered and target[j] > last
                    last = target[j]
                    m += 1
            if not ordered:  # (a row appended as its links came; a dense row is in order)
                qsort(row_links, m, sizeof(pair_t), _by_target)
            for i in range(m):
                out[k] = row_links[i].delta
                k += 1
    free(row_links)
    return deltas


def effective_weights(const plane_t[:, ::1] W, const plane_t[:, ::1] U, int64_t used,
                      double seen, const double[::1] planes, bint averaging, bint round32,
                      double absent, double[::1] out):
    """Per pool slot up to ``used``, ``sum_p planes[p] * (W[:, p] - U[:, p] / seen)`` (the
    averaged weights when ``averaging``), rounded to float32 when ``round32``, minus the
    absent weight: the numbers :func:`score_rows` reads."""
    cdef int64_t j
    cdef Py_ssize_t n = W.shape[1]
    cdef const plane_t *w = &W[0, 0] if W.shape[0] and n else NULL
    cdef const plane_t *u = &U[0, 0] if averaging and U.shape[0] else NULL
    if planes.shape[0] != n or (averaging and U.shape[0] < used) or W.shape[0] < used \
            or out.shape[0] < used:
        raise ValueError("the weight planes do not match")
    with nogil:
        for j in range(used):
            out[j] = _delta(w, u, j, n, &planes[0], seen, averaging, round32, absent)
