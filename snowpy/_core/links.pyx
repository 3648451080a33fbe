"""The link store's whole-pool passes, compiled: its links in row order without gaps,
their slots, the slot of a (row, target) link, dense rows recognised, and which links
are worth keeping. (The per-example block operations are in ``pool.pxd``.)"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, qsort
from libc.math cimport fabs
from libc.string cimport memcpy, memmove

import numpy as np

from snowpy._core.pool cimport row_stop as _stop
from snowpy._core.effective cimport delta
from snowpy._core.pool cimport FREE, IDLE, SNOWPY_PREFETCH, USED, row_t, weight_t

#: Rows (the compaction: slots) ahead whose memory the whole-pool passes ask for: the
#: blocks of a pool that grew as links came lie anywhere, and so do their rows' records.
cdef enum:
    AHEAD = 32

ctypedef fused plane_t:
    float
    double



cdef struct source_t:
    # one pool read by gather: its rows, targets, and each slot's bytes of W, U, count
    const row_t *rows
    const int32_t *target
    const uint8_t *W
    const uint8_t *U
    const int32_t *lcount


cdef struct pick_t:
    int64_t target   # the network's target (a part's target t is t * k + part)
    int64_t part
    int64_t slot


cdef int _by_target(const void *a, const void *b) noexcept nogil:
    cdef int64_t x = (<const pick_t *>a).target, y = (<const pick_t *>b).target
    return (x > y) - (x < y)


cdef inline void _sort_picks(pick_t *picks, int64_t n) noexcept nogil:
    """Sort by target (a row has one link a target: any sort gives the same order). A
    dense row's links are in order; a row that grew as links came holds them in the order
    they came, in which an insertion sort takes time in the square of their number."""
    cdef int64_t i, j
    cdef pick_t moving
    for i in range(1, n):
        if picks[i - 1].target > picks[i].target:
            break
    else:
        return
    if n > 32:
        qsort(picks, n, sizeof(pick_t), _by_target)
        return
    for i in range(1, n):
        if picks[i - 1].target <= picks[i].target:
            continue
        moving = picks[i]
        j = i - 1
        while j >= 0 and picks[j].target > moving.target:
            picks[j + 1] = picks[j]
            j -= 1
        picks[j + 1] = moving


cdef inline int64_t _picks(const source_t *parts, int64_t k, int64_t r, pick_t *picks
                           ) noexcept nogil:
    """Row ``r``'s links in every part (a dense row's holes left out), by target."""
    cdef int64_t p, j, stop, n = 0
    cdef row_t row
    for p in range(k):
        row = parts[p].rows[r]
        stop = _stop(row)
        for j in range(row.start, stop):
            if parts[p].target[j] >= 0:
                picks[n].target = parts[p].target[j] * k + p
                picks[n].part = p
                picks[n].slot = j
                n += 1
    _sort_picks(picks, n)
    return n


cdef inline void _copy(uint8_t *to, const uint8_t *source, int64_t n) noexcept nogil:
    """``n`` bytes of a link's weights or sums: one float32 or one float64 plane (the
    common widths) as one word, not as a call."""
    if n == 4:
        (<uint32_t *>to)[0] = (<const uint32_t *>source)[0]
    elif n == 8:
        (<uint64_t *>to)[0] = (<const uint64_t *>source)[0]
    else:
        memcpy(to, source, n)


cdef inline void _ask(const source_t *parts, int64_t k, int64_t r, int64_t w_bytes,
                      int64_t u_bytes) noexcept nogil:
    """Ask the memory for row ``r``'s first links in every part: their targets, and
    their weights and sums when ``w_bytes`` and ``u_bytes``."""
    cdef int64_t p, start
    for p in range(k):
        start = parts[p].rows[r].start
        SNOWPY_PREFETCH(parts[p].target + start)
        if w_bytes:
            SNOWPY_PREFETCH(parts[p].W + start * w_bytes)
        if u_bytes and parts[p].U != NULL:
            SNOWPY_PREFETCH(parts[p].U + start * u_bytes)


cdef class Gathering:
    """The links of rows ``0 .. n_rows`` of one pool, or of the ``k`` pools of a network
    learned in parts (part ``p`` holds targets ``p, p + k, ...`` as ``0, 1, ...``), put in
    one exact run: rows in order, each row's links by target, a dense row's holes left
    out. :meth:`count` and :meth:`fill` take a range of rows, so that threads can share
    the rows (each releases the GIL). With ``order``, the run holds row ``order[i]`` in
    place ``i`` (a model file's rows, in the order of their features' ids).

    ``pools``: ``(rows, target, W, U, lcount)`` per pool, ``W`` and ``U`` as bytes
    (``uint8[slots, w_bytes]``; ``U`` empty when not averaging, ``lcount`` when not
    counted).
    """

    cdef source_t *parts
    cdef int64_t k
    cdef int64_t n_targets
    cdef int64_t w_bytes
    cdef int64_t u_bytes
    cdef object held
    cdef const int64_t *order

    def __cinit__(self, list pools, int64_t n_rows, int64_t n_targets, int64_t w_bytes,
                  int64_t u_bytes, order=None):
        cdef int64_t p
        cdef const row_t[::1] rows_view
        cdef const int32_t[::1] int_view
        cdef const uint8_t[:, ::1] byte_view
        self.k = len(pools)
        self.n_targets = n_targets
        self.w_bytes = w_bytes
        self.u_bytes = u_bytes
        self.parts = <source_t *>malloc(max(self.k, 1) * sizeof(source_t))
        if self.parts == NULL:
            raise MemoryError("no memory to gather the links")
        self.held = list(pools)  # (the pools' arrays, alive while their pointers are read)
        cdef const int64_t[::1] order_view
        self.order = NULL
        if order is not None:
            order_view = order
            if order_view.shape[0] != n_rows:
                raise ValueError("the order names another number of rows")
            for p in range(n_rows):
                if not 0 <= order_view[p] < n_rows:
                    raise ValueError("the order names a row the network does not have")
            self.held.append(order)
            self.order = &order_view[0] if n_rows else NULL
        for p, (rows, target, W, U, lcount) in enumerate(pools):
            rows_view = rows
            if rows_view.shape[0] < n_rows:
                raise ValueError("a pool has fewer rows than the network")
            self.parts[p].rows = &rows_view[0] if rows_view.shape[0] else NULL
            int_view = target
            self.parts[p].target = &int_view[0] if int_view.shape[0] else NULL
            byte_view = W
            self.parts[p].W = &byte_view[0, 0] if byte_view.shape[0] and w_bytes else NULL
            byte_view = U
            self.parts[p].U = &byte_view[0, 0] if byte_view.shape[0] and u_bytes else NULL
            int_view = lcount
            self.parts[p].lcount = &int_view[0] if int_view.shape[0] else NULL

    def __dealloc__(self):
        free(self.parts)

    def count(self, int64_t first, int64_t stop, int32_t[::1] sizes):
        """The links of rows ``first .. stop``, into ``sizes`` (a row's size counts its
        links, a dense row's holes left out: no link is read)."""
        cdef int64_t i, r, p, n
        with nogil:
            for i in range(first, stop):
                r = self.order[i] if self.order != NULL else i
                n = 0
                for p in range(self.k):
                    n += self.parts[p].rows[r].size
                sizes[i] = <int32_t>n

    def fill(self, int64_t first, int64_t stop, int64_t out, int32_t[::1] target,
             uint8_t[:, ::1] W, uint8_t[:, ::1] U, int32_t[::1] lcount, int64_t[::1] slots):
        """Rows ``first .. stop``'s links, from position ``out`` on (the links of the rows
        before ``first``); each link's slot in its pool into ``slots`` unless it is
        empty."""
        cdef int64_t at, r, i, n
        cdef const source_t *source
        cdef bint counted = lcount.shape[0] > 0
        cdef bint slotted = slots.shape[0] > 0
        cdef pick_t *picks = <pick_t *>malloc(max(self.n_targets, 1) * sizeof(pick_t))
        if picks == NULL:
            raise MemoryError("no memory to gather the links")
        with nogil:
            for at in range(first, stop):
                r = self.order[at] if self.order != NULL else at
                if at + AHEAD < stop:
                    _ask(self.parts, self.k, self.order[at + AHEAD] if self.order != NULL
                         else at + AHEAD, self.w_bytes, self.u_bytes)
                n = _picks(self.parts, self.k, r, picks)
                for i in range(n):
                    source = &self.parts[picks[i].part]
                    target[out] = <int32_t>picks[i].target
                    if slotted:
                        slots[out] = picks[i].slot
                    if self.w_bytes:
                        _copy(&W[out, 0], source.W + picks[i].slot * self.w_bytes,
                              self.w_bytes)
                    if self.u_bytes and source.U != NULL:
                        _copy(&U[out, 0], source.U + picks[i].slot * self.u_bytes,
                              self.u_bytes)
                    if counted and source.lcount != NULL:
                        lcount[out] = source.lcount[picks[i].slot]
                    out += 1
        free(picks)


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


def lay_out(row_t[::1] rows, const int32_t[::1] sizes, const int32_t[::1] target,
            int64_t n_targets):
    """Rows ``0 .. len(sizes)`` as tight blocks of ``sizes`` links one after the other
    (an exact layout's: start, size, capacity), each marked dense when its block holds
    targets 0, 1, 2... in that order (:func:`dense_flags`); returns the links laid."""
    cdef int64_t r, at = 0
    cdef int64_t n_rows = sizes.shape[0]
    if rows.shape[0] < n_rows:
        raise ValueError("fewer rows than sizes")
    with nogil:
        for r in range(n_rows):
            rows[r].start = at
            rows[r].size = sizes[r]
            rows[r].cap = sizes[r]
            at += sizes[r]
    if target.shape[0] < at:
        raise ValueError("fewer targets than links")
    dense_flags(rows, target, n_rows, n_targets)
    return at


cdef _blocks_in_order(row_t[::1] rows, int64_t n_rows):
    """The rows that hold a block, in the order their blocks lie in the pool: a key each
    (start << 32 | row; -1, first, for a row with no block), sorted in place. Not a mark
    per slot of the pool: the whole-pool passes run when the pool is at its largest."""
    keys_array = np.empty(n_rows, np.int64)
    cdef int64_t[::1] keys = keys_array
    cdef int64_t r
    with nogil:
        for r in range(n_rows):
            keys[r] = ((<int64_t>rows[r].start) << 32) | r if rows[r].cap > 0 else -1
    keys_array.sort()
    return keys_array


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
    cdef int64_t i, r, j, s, stop, first, out = 0
    cdef bint kept
    cdef const plane_t *u = &U[0, 0] if averaging else NULL
    keys_array = _blocks_in_order(rows, n_rows)
    cdef int64_t[::1] keys = keys_array
    cdef int64_t low = 0xFFFFFFFF
    with nogil:
        for r in range(n_rows):
            if rows[r].cap <= 0:
                rows[r].start = rows[r].size = rows[r].dense = 0
    with nogil:
        for i in range(n_rows):
            if keys[i] < 0:
                continue
            r = keys[i] & low
            if i + AHEAD < n_rows and keys[i + AHEAD] >= 0:
                SNOWPY_PREFETCH(&rows[keys[i + AHEAD] & low])
            j = keys[i] >> 32
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
                    kept = fabs(delta(&W[0, 0], u, s, n_planes, &planes[0], seen, averaged,
                                      round32, absent)) >= threshold
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


def defragment(row_t[::1] rows, int64_t n_rows, int32_t[::1] target, plane_t[:, ::1] W,
               plane_t[:, ::1] U, int32_t[::1] lcount, int64_t[::1] meta):
    """Close the pool's free runs: every row's block moves down, whole (its room, and a
    dense row's holes, kept), in the order the blocks lie, so that no slot is written over
    before it is read; the free lists are emptied. Returns the slots used. Only where the
    links lie changes: every row holds the same links in the same order."""
    cdef bint averaging = U.shape[0] > 0
    cdef bint counted = lcount.shape[0] > 0
    cdef Py_ssize_t n_planes = W.shape[1]
    cdef int64_t i, r, j, cap, c, out = 0
    keys_array = _blocks_in_order(rows, n_rows)
    cdef int64_t[::1] keys = keys_array
    cdef int64_t low = 0xFFFFFFFF
    with nogil:
        for i in range(n_rows):
            if keys[i] < 0:
                continue
            r = keys[i] & low
            j = keys[i] >> 32
            cap = rows[r].cap
            if j != out:
                memmove(&target[out], &target[j], cap * sizeof(int32_t))
                memmove(&W[out, 0], &W[j, 0], cap * n_planes * sizeof(plane_t))
                if averaging:
                    memmove(&U[out, 0], &U[j, 0], cap * n_planes * sizeof(plane_t))
                if counted:
                    memmove(&lcount[out], &lcount[j], cap * sizeof(int32_t))
                rows[r].start = <int32_t>out
            out += cap
        meta[USED] = out
        meta[IDLE] = 0
        for c in range(meta.shape[0] - FREE):
            meta[FREE + c] = -1
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
