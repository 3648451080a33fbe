"""Scoring examples through the links, compiled: activations minus the threshold.

The score of target ``t`` on an example with strengths ``v_k`` on rows ``r_k`` (the
bias first, with its strength) is ``absent * sum_k v_k + sum_k v_k * sum_{links j of
r_k} E[j] - theta``, ``E[j]`` link ``j``'s effective weight minus the absent weight; a
feature never seen (row -1) and a missing link both weigh the absent weight. The cost
is the links of the active features, whatever the number of targets.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc

from snowpy._core._types cimport index_t
from snowpy._core.effective cimport delta as _delta, plane_t
from snowpy._core.pool cimport SNOWPY_PREFETCH, row_stop, row_t

#: Rows ahead whose first links :func:`moved_by_target` asks the memory for (the blocks of
#: a pool that grew as links came lie anywhere).
cdef enum:
    AHEAD = 32

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


def moved_by_target(const row_t[::1] rows, const int32_t[::1] target, int64_t n_rows,
                    int64_t n_targets, const plane_t[:, ::1] W, const plane_t[:, ::1] U,
                    double seen, const double[::1] planes, bint averaging, bint round32,
                    double absent):
    """Per target, the sum of ``|weight - absent|`` over its links whose weight differs
    from a missing link's, and how many such links (each link's weight as ``links_csr``
    gives it, the absent weight added then taken away). Each target's links are summed
    rows in order, whatever the pool's order: a network learned in parts (a part holding
    some targets) sums alike, and the parts' sums put together in target order give, to
    the bit, the sums of the same network on one thread."""
    cdef int64_t r, j
    cdef int32_t t
    cdef double d
    cdef Py_ssize_t n = W.shape[1]
    cdef const plane_t *w = &W[0, 0] if W.shape[0] and n else NULL
    cdef const plane_t *u = &U[0, 0] if averaging and U.shape[0] else NULL
    if planes.shape[0] != n:
        raise ValueError("the weight planes do not match")
    sums = np.zeros(n_targets, np.float64)
    counts = np.zeros(n_targets, np.int64)
    cdef double[::1] s = sums
    cdef int64_t[::1] c = counts
    with nogil:
        for r in range(n_rows):
            if r + AHEAD < n_rows:
                j = rows[r + AHEAD].start
                SNOWPY_PREFETCH(&target[j])
                if w != NULL:
                    SNOWPY_PREFETCH(w + j * n)
                if u != NULL:
                    SNOWPY_PREFETCH(u + j * n)
            for j in range(rows[r].start, row_stop(rows[r])):
                t = target[j]
                if t >= 0:
                    d = _delta(w, u, j, n, &planes[0], seen, averaging, round32, absent)
                    d = (d + absent) - absent
                    if d != 0.0:
                        s[t] += d if d > 0.0 else -d
                        c[t] += 1
    return sums, counts


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
