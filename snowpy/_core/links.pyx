"""The link store's whole-pool passes, compiled: its links in row order without gaps,
their slots, the slot of a (row, target) link, dense rows recognised, and which links
are worth keeping. (The per-example block operations are in ``pool.pxd``.)"""

from libc.stdint cimport int32_t, int64_t, uint8_t

import numpy as np

from snowpy._core.pool cimport row_t, weight_t

ctypedef fused plane_t:
    float
    double


cdef inline int64_t _stop(const row_t row) noexcept nogil:
    """The end of a row's slots: its links (sparse), or its whole block (dense)."""
    return row.start + (row.cap if row.dense else row.size)


def compact(const row_t[::1] rows, int64_t n_rows, const int32_t[::1] target,
            const plane_t[:, ::1] W, const plane_t[:, ::1] U, const int32_t[::1] lcount,
            const uint8_t[::1] keep):
    """The links of rows ``0 .. n_rows`` in one exact run, in row order (a dense row's
    holes left out, its links in target order): ``(sizes, target, W, U, lcount)``.
    ``keep`` (a flag per pool slot, or empty for all) drops links."""
    cdef bint keeping = keep.shape[0] > 0
    cdef int64_t total = 0
    cdef int64_t r, j, stop, out = 0
    cdef Py_ssize_t q
    cdef Py_ssize_t planes = W.shape[1]
    cdef bint averaging = U.shape[0] > 0
    cdef bint counted = lcount.shape[0] > 0
    for r in range(n_rows):
        stop = _stop(rows[r])
        for j in range(rows[r].start, stop):
            if target[j] >= 0 and (not keeping or keep[j]):
                total += 1
    dtype = np.float32 if plane_t is float else np.float64
    sizes_array = np.zeros(n_rows, np.int32)
    target_array = np.empty(total, np.int32)
    W_array = np.empty((total, planes), dtype)
    U_array = np.empty((total if averaging else 0, U.shape[1]), dtype)
    lcount_array = np.empty(total if counted else 0, np.int32)
    cdef int32_t[::1] sizes = sizes_array
    cdef int32_t[::1] new_target = target_array
    cdef plane_t[:, ::1] new_W = W_array
    cdef plane_t[:, ::1] new_U = U_array
    cdef int32_t[::1] new_lcount = lcount_array
    with nogil:
        for r in range(n_rows):
            stop = _stop(rows[r])
            for j in range(rows[r].start, stop):
                if target[j] < 0 or (keeping and not keep[j]):
                    continue
                new_target[out] = target[j]
                for q in range(planes):
                    new_W[out, q] = W[j, q]
                if averaging:
                    for q in range(U.shape[1]):
                        new_U[out, q] = U[j, q]
                if counted:
                    new_lcount[out] = lcount[j]
                sizes[r] += 1
                out += 1
    return sizes_array, target_array, W_array, U_array, lcount_array


def link_positions(const row_t[::1] rows, const int32_t[::1] target, int64_t n_rows):
    """Pool slots that hold a link, in row order."""
    cdef int64_t total = 0
    cdef int64_t r, j, k = 0
    for r in range(n_rows):
        total += rows[r].size
    positions = np.empty(total, np.int64)
    cdef int64_t[::1] out = positions
    with nogil:
        for r in range(n_rows):
            for j in range(rows[r].start, _stop(rows[r])):
                if target[j] >= 0:
                    out[k] = j
                    k += 1
    return positions


def positions(const row_t[::1] rows, const int32_t[::1] target, const int64_t[::1] which,
              int64_t t):
    """The slot of target ``t``'s link in each row of ``which`` (-1 for a row -1 or no
    link)."""
    found = np.full(which.shape[0], -1, np.int64)
    cdef int64_t[::1] out = found
    cdef Py_ssize_t k
    cdef int64_t r, j, first
    with nogil:
        for k in range(which.shape[0]):
            r = which[k]
            if r < 0:
                continue
            first = rows[r].start
            if rows[r].dense:
                if t < rows[r].cap and target[first + t] == t:
                    out[k] = first + t
                continue
            for j in range(first, first + rows[r].size):
                if target[j] == t:
                    out[k] = j
                    break
    return found


def dense_flags(row_t[::1] rows, const int32_t[::1] target, int64_t n_rows,
                int64_t n_targets):
    """Mark the rows whose blocks hold targets 0, 1, 2... n_targets - 1 in that order."""
    cdef int64_t r, q
    cdef int32_t flag
    with nogil:
        for r in range(n_rows):
            flag = 1 if rows[r].size == n_targets and n_targets > 0 else 0
            if flag:
                for q in range(rows[r].size):
                    if target[rows[r].start + q] != q:
                        flag = 0
                        break
            rows[r].dense = flag


def compact_in_place(row_t[::1] rows, int64_t n_rows, int64_t used, int32_t[::1] target,
                     plane_t[:, ::1] W, plane_t[:, ::1] U, int32_t[::1] lcount,
                     const uint8_t[::1] keep, double threshold, bint averaged, double seen,
                     const double[::1] planes, double absent, bint round32):
    """Drop links in place and leave every row a tight block; returns the slots used.

    A link goes when its slot's ``keep`` flag is false, or, with ``keep`` empty, when its
    prediction weight (planes weighted, the averaged weights ``W - U / seen`` when
    ``averaged``, rounded to float32 when ``round32``) differs from a missing link's (``absent``) by less than
    ``threshold``; the bias row's links always stay then. The blocks are visited in the
    order they lie in the pool and each kept link moves down to the first free slot, so
    no link is written over before it is read, and a row's links keep their order (the
    sums of a score are taken alike). The free lists are left for the caller to empty,
    and the dense flags to set again.
    """
    cdef bint by_mask = keep.shape[0] > 0
    cdef bint averaging = U.shape[0] > 0
    cdef bint counted = lcount.shape[0] > 0
    cdef Py_ssize_t n_planes = W.shape[1]
    if averaged and not averaging:
        raise ValueError("averaged weights asked of a pool without averaging sums")
    cdef Py_ssize_t q
    cdef int64_t r, j, s, stop, first, out = 0
    cdef double effective, weight
    cdef bint kept
    owner_array = np.full(used, -1, np.int32)  # the row whose block starts at each slot
    cdef int32_t[::1] owner = owner_array
    with nogil:
        for r in range(n_rows):
            if rows[r].cap > 0:
                owner[rows[r].start] = <int32_t>r
            else:
                rows[r].start = rows[r].size = rows[r].dense = 0
        for j in range(used):
            r = owner[j]
            if r < 0:
                continue
            first = out
            stop = _stop(rows[r])
            for s in range(j, stop):
                if target[s] < 0:
                    continue
                if by_mask:
                    kept = keep[s] != 0
                elif r == 0:
                    kept = True
                else:
                    effective = 0.0
                    for q in range(n_planes):
                        weight = W[s, q]
                        if averaged:
                            weight -= U[s, q] / seen
                        effective += planes[q] * weight
                    if round32:
                        effective = <float>effective
                    kept = (effective - absent if effective >= absent
                            else absent - effective) >= threshold
                if not kept:
                    continue
                if s != out:
                    target[out] = target[s]
                    for q in range(n_planes):
                        W[out, q] = W[s, q]
                    if averaging:
                        for q in range(n_planes):
                            U[out, q] = U[s, q]
                    if counted:
                        lcount[out] = lcount[s]
                out += 1
            rows[r].start = <int32_t>first
            rows[r].size = rows[r].cap = <int32_t>(out - first)
            rows[r].dense = 0
    return out


def distinct_links(const int32_t[::1] sizes, const int32_t[::1] targets, int64_t n_targets):
    """Whether no row of an exact layout (``sizes`` links per row, their ``targets`` in
    row order, each in ``0 .. n_targets - 1``) links a target twice: one pass, a mark per
    target, no temporary the size of the links."""
    marks_array = np.full(n_targets if n_targets > 0 else 1, -1, np.int64)
    cdef int64_t[::1] marks = marks_array
    cdef int64_t r, j = 0, stop, t
    cdef bint distinct = True
    with nogil:
        for r in range(sizes.shape[0]):
            stop = j + sizes[r]
            if stop > targets.shape[0]:
                distinct = False
                break
            while j < stop:
                t = targets[j]
                if t < 0 or t >= n_targets or marks[t] == r:
                    distinct = False
                    break
                marks[t] = r
                j += 1
            if not distinct:
                break
    return distinct
