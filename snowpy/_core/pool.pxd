# The link pool (snowpy.network.links documents it): rows, blocks and links as C
# pointers into the LinkStore's arrays, and the block operations, inlined where used.
#
# Row r owns block rows[r].start .. rows[r].start + rows[r].cap of the pool, rows[r].size
# links in it; a dense row (rows[r].dense = 1) holds target t's link in slot t, or a hole
# (target -1). A row's bookkeeping is one 16-byte record, a quarter of a cache line: the
# engine reads it for every active feature, in an order no prefetcher foresees.
# meta[USED] is the end of the part of the pool ever handed out, meta[FREE + c] the
# first free block of room 2**c (-1: none; a free block's target slot links the next),
# meta[IDLE] the slots in free blocks. Nothing here allocates memory: the caller has
# grown the pool.

from libc.stdint cimport int32_t, int64_t, uint8_t

ctypedef fused weight_t:
    float
    double

cdef enum:
    HOLE = -1
    USED = 0
    IDLE = 1
    FREE = 2
    MAX_PLANES = 8

cdef struct row_t:
    # snowpy.network.links.ROW: a pool holds fewer than 2**31 slots
    int32_t start
    int32_t size
    int32_t cap
    int32_t dense

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define SNOWPY_PREFETCH(address) __builtin_prefetch((const void *)(address))
    #else
    #define SNOWPY_PREFETCH(address) ((void)0)
    #endif
    """
    # ask the memory for a line that will be read soon (a hint: nothing when unknown)
    void SNOWPY_PREFETCH(const void *address) noexcept nogil

cdef inline int64_t row_stop(const row_t row) noexcept nogil:
    """The end of a row's slots: its links (sparse), or its whole block (dense)."""
    return row.start + (row.cap if row.dense else row.size)


cdef struct Pool:
    row_t *rows
    int32_t *count      # NULL unless rows count their activity (eligibility)
    int32_t *target
    int32_t *lcount     # NULL unless links are counted (eligible percent)
    int64_t *meta
    Py_ssize_t capacity  # slots of the pool
    Py_ssize_t n_rows_capacity
    Py_ssize_t n_planes
    bint averaging      # U holds averaging sums


cdef inline int64_t allocate(Pool *p, int64_t room) noexcept nogil:
    """First slot of a block of ``room`` slots: a free one of that size class or larger
    (class c holds blocks of 2**c to 2**(c + 1) - 1 slots), or a new one."""
    cdef int c = 0
    cdef int64_t first
    while ((<int64_t>1) << c) < room:
        c += 1
    first = p.meta[FREE + c]
    if first >= 0:
        p.meta[FREE + c] = p.target[first]
        p.meta[IDLE] -= room
    else:
        first = p.meta[USED]
        p.meta[USED] = first + room
    return first


cdef inline void release(Pool *p, int64_t first, int64_t room) noexcept nogil:
    """Put a block on the free list of its size class (the largest 2**c <= room)."""
    cdef int c = 0
    if room <= 0:
        return
    while ((<int64_t>2) << c) <= room:
        c += 1
    p.target[first] = <int32_t>p.meta[FREE + c]
    p.meta[FREE + c] = first
    p.meta[IDLE] += room


cdef inline void move_link(Pool *p, weight_t *W, weight_t *U, int64_t src,
                           int64_t dest) noexcept nogil:
    cdef Py_ssize_t q
    cdef Py_ssize_t n = p.n_planes
    p.target[dest] = p.target[src]
    for q in range(n):
        W[dest * n + q] = W[src * n + q]
    if p.averaging:
        for q in range(n):
            U[dest * n + q] = U[src * n + q]
    if p.lcount != NULL:
        p.lcount[dest] = p.lcount[src]


cdef inline void make_hole(Pool *p, weight_t *W, weight_t *U, int64_t j,
                           const double *absent_w) noexcept nogil:
    cdef Py_ssize_t q
    cdef Py_ssize_t n = p.n_planes
    p.target[j] = HOLE
    for q in range(n):
        W[j * n + q] = <weight_t>absent_w[q]
    if p.averaging:
        for q in range(n):
            U[j * n + q] = 0
    if p.lcount != NULL:
        p.lcount[j] = 0


cdef inline void set_link(Pool *p, weight_t *W, weight_t *U, int64_t j, int64_t t,
                          const double *init_w, const double *init_u) noexcept nogil:
    cdef Py_ssize_t q
    cdef Py_ssize_t n = p.n_planes
    p.target[j] = <int32_t>t
    for q in range(n):
        W[j * n + q] = <weight_t>init_w[q]
    if p.averaging:
        for q in range(n):
            U[j * n + q] = <weight_t>init_u[q]
    if p.lcount != NULL:
        p.lcount[j] = 0


cdef inline void dense_block(Pool *p, weight_t *W, weight_t *U, int64_t r, int64_t room,
                             const double *absent_w) noexcept nogil:
    """Move dense row ``r`` to a block of ``room`` slots, the new slots holes."""
    cdef int64_t first = p.rows[r].start
    cdef int64_t old = p.rows[r].cap
    cdef int64_t moved = allocate(p, room)
    cdef int64_t q
    for q in range(room):
        if q < old:
            move_link(p, W, U, first + q, moved + q)
        else:
            make_hole(p, W, U, moved + q, absent_w)
    release(p, first, old)
    p.rows[r].start = <int32_t>moved
    p.rows[r].cap = <int32_t>room


cdef inline int64_t append_link(Pool *p, weight_t *W, weight_t *U, int64_t r, int64_t t,
                                const double *init_w, const double *init_u,
                                const double *absent_w) noexcept nogil:
    """Link row ``r`` to target ``t`` (weights ``init_w``, averaging sums ``init_u``, a
    count of 0); returns the link's slot. A sparse row appends it, moving its block to
    one of twice the room when full; a dense row fills slot ``t``, growing first when
    ``t`` is beyond its room."""
    cdef int64_t first, n, room, moved, q, j, grown
    if p.rows[r].dense:
        if t >= p.rows[r].cap:  # half as much room again, at least t + 1
            grown = p.rows[r].cap + p.rows[r].cap // 2
            dense_block(p, W, U, r, t + 1 if t + 1 > grown else grown, absent_w)
        j = p.rows[r].start + t
        set_link(p, W, U, j, t, init_w, init_u)
        p.rows[r].size += 1
        return j
    first = p.rows[r].start
    n = p.rows[r].size
    if n == p.rows[r].cap:
        room = 1
        while room < n + 1:
            room <<= 1
        moved = allocate(p, room)
        for q in range(n):
            move_link(p, W, U, first + q, moved + q)
        release(p, first, p.rows[r].cap)
        p.rows[r].start = <int32_t>moved
        p.rows[r].cap = <int32_t>room
        first = moved
    j = first + n
    set_link(p, W, U, j, t, init_w, init_u)
    p.rows[r].size = <int32_t>(n + 1)
    return j


cdef inline void densify(Pool *p, weight_t *W, weight_t *U, int64_t r, int64_t n_targets,
                         const double *absent_w) noexcept nogil:
    """Lay row ``r`` out by target (slot t for target t, holes elsewhere) in a block of
    ``n_targets`` slots (the caller checked the pool's room)."""
    cdef int64_t first = p.rows[r].start
    cdef int64_t moved = allocate(p, n_targets)
    cdef int64_t q
    for q in range(n_targets):
        make_hole(p, W, U, moved + q, absent_w)
    for q in range(p.rows[r].size):
        move_link(p, W, U, first + q, moved + p.target[first + q])
    release(p, first, p.rows[r].cap)
    p.rows[r].start = <int32_t>moved
    p.rows[r].cap = <int32_t>n_targets
    p.rows[r].dense = 1


cdef inline int64_t find_link(const Pool *p, int64_t r, int64_t t) noexcept nogil:
    """Slot of target ``t``'s link in row ``r``, or -1."""
    cdef int64_t first = p.rows[r].start
    cdef int64_t j
    if p.rows[r].dense:
        if t < p.rows[r].cap and p.target[first + t] == t:
            return first + t
        return -1
    for j in range(first, first + p.rows[r].size):
        if p.target[j] == t:
            return j
    return -1
