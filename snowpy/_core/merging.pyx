"""The compiled loops of :mod:`snowpy.distributed.mixing`: a network's links as sorted
keys, what one round changed, and the linear merges of sorted tables."""

from libc.math cimport log
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc

import numpy as np

from snowpy._core.pool cimport SNOWPY_PREFETCH

#: Rows ahead (in the features' order) whose links :func:`table` asks the memory for:
#: sorted by feature, a network's rows lie anywhere in its layout.
cdef enum:
    AHEAD = 16

ctypedef fused plane_t:
    float
    double


cdef inline Py_ssize_t _row_in_target_order(int64_t *local, const int64_t *starts,
                                             Py_ssize_t r, const int32_t[::1] targets
                                             ) noexcept nogil:
    """Row ``r``'s links (positions) in ``local``, in target order; returns how many."""
    cdef Py_ssize_t count = 0
    cdef Py_ssize_t at
    cdef int64_t j
    for j in range(starts[r], starts[r + 1]):
        at = count
        while at > 0 and targets[local[at - 1]] > targets[j]:
            local[at] = local[at - 1]
            at -= 1
        local[at] = j
        count += 1
    return count


cdef inline void _ask_ahead(const int64_t *starts, const int64_t[::1] order, Py_ssize_t q,
                            Py_ssize_t n_rows, int64_t total, const int32_t[::1] targets,
                            const plane_t[:, ::1] W, const plane_t[:, ::1] U,
                            bint averaging) noexcept nogil:
    """Ask the memory for the links of the row :data:`AHEAD` rows on in key order."""
    cdef int64_t j
    if q + AHEAD < n_rows:
        j = starts[order[q + AHEAD]]
        if j < total:
            SNOWPY_PREFETCH(&targets[j])
            SNOWPY_PREFETCH(&W[j, 0])
            if averaging:
                SNOWPY_PREFETCH(&U[j, 0])


cdef int64_t *_row_starts(const int32_t[::1] sizes) except NULL:
    cdef Py_ssize_t r
    cdef int64_t *starts = <int64_t *>malloc((sizes.shape[0] + 1) * sizeof(int64_t))
    if starts == NULL:
        raise MemoryError()
    starts[0] = 0
    for r in range(sizes.shape[0]):
        starts[r + 1] = starts[r] + sizes[r]
    return starts


cdef inline double _relative(double w, double reference, bint geometric) noexcept nogil:
    """A weight in the mixing's terms: its difference from the reference, or of logs."""
    return (log(w) - log(reference)) if geometric else w - reference


def changes(const int64_t[::1] features, const int64_t[::1] order, const int32_t[::1] sizes,
            const int32_t[::1] targets, const plane_t[:, ::1] W, const plane_t[:, ::1] U,
            bint averaging, const int32_t[::1] start_sizes, const int32_t[::1] start_targets,
            const plane_t[:, ::1] start_W, const plane_t[:, ::1] start_U,
            const double[::1] reference, bint geometric, int64_t n_targets, double weight):
    """What a round changed: the links of a trained network that are new to the network
    it started from or whose weights or sums moved, with ``weight`` times the change,
    the weight of the shard as a changer of each (0 for a link made and left at its
    initial weight) and the links they came from; weights taken as ``f(w) -
    f(reference)`` (``f`` the logarithm when ``geometric``).

    Both networks are laid out by rows (``sizes``, then each link's target, weights and
    averaging sums); the trained network's first rows are the start's, in its order, as
    a network restored from the start and trained keeps them (its new rows come after).
    Keys ``(feature + 1) * n_targets + target`` come out in increasing order: the rows
    are visited in ``order`` (sorted by feature; ``features[0]`` is the bias, -1) and
    each row's links beside the start's row's, by target. Against a start of no rows,
    with a weight of 1, this is the network's table: every link, as it is."""
    cdef Py_ssize_t n_rows = sizes.shape[0]
    cdef Py_ssize_t n_start = start_sizes.shape[0]
    cdef int64_t *starts = _row_starts(sizes)
    cdef int64_t *start_starts = _row_starts(start_sizes)
    cdef int64_t *local = <int64_t *>malloc((n_targets + 1) * sizeof(int64_t))
    cdef int64_t *start_local = <int64_t *>malloc((n_targets + 1) * sizeof(int64_t))
    cdef Py_ssize_t r, q, p, mm, count, start_count, s
    cdef int64_t j, js, key, base, total
    cdef int64_t last = -1  # (below every key: the bias's are 0 to n_targets - 1)
    cdef bint twice = False
    cdef Py_ssize_t planes = W.shape[1]
    cdef Py_ssize_t k = 0
    cdef bint known, moved
    cdef double before, value
    if local == NULL or start_local == NULL:
        free(starts)
        free(start_starts)
        free(local)
        free(start_local)
        raise MemoryError()
    total = starts[n_rows]
    # (as large as every link: the pages past the changes are never written, nor faulted in)
    out_keys_a = np.empty(total, np.int64)
    out_W_a = np.empty((total, planes), np.float64)
    out_U_a = np.empty((total, planes if averaging else 0), np.float64)
    out_C_a = np.empty(total, np.float64)
    taken_a = np.empty(total, np.int64)
    cdef int64_t[::1] out_keys = out_keys_a
    cdef double[:, ::1] out_W = out_W_a
    cdef double[:, ::1] out_U = out_U_a
    cdef double[::1] out_C = out_C_a
    cdef int64_t[::1] taken = taken_a
    with nogil:
        for q in range(n_rows):
            _ask_ahead(starts, order, q, n_rows, total, targets, W, U, averaging)
            r = order[q]
            base = (features[r] + 1) * n_targets
            count = _row_in_target_order(local, starts, r, targets)
            start_count = _row_in_target_order(start_local, start_starts, r, start_targets) \
                if r < n_start else 0
            s = 0
            for mm in range(count):
                j = local[mm]
                key = base + targets[j]
                if key <= last:
                    twice = True
                last = key
                while s < start_count and start_targets[start_local[s]] < targets[j]:
                    s += 1
                known = s < start_count and start_targets[start_local[s]] == targets[j]
                js = start_local[s] if known else 0
                moved = False
                for p in range(planes):
                    value = _relative(W[j, p], reference[p], geometric)
                    before = _relative(start_W[js, p], reference[p], geometric) if known \
                        else 0.0
                    out_W[k, p] = weight * (value - before)
                    if value != before:
                        moved = True
                if averaging:
                    for p in range(planes):
                        value = U[j, p]
                        before = start_U[js, p] if known else 0.0
                        out_U[k, p] = weight * (value - before)
                        if value != before:
                            moved = True
                if moved or not known:
                    out_keys[k] = key
                    out_C[k] = weight if moved else 0.0
                    taken[k] = j
                    k += 1
    free(starts)
    free(start_starts)
    free(local)
    free(start_local)
    if twice:
        raise ValueError("a feature is linked twice to the same target")
    return out_keys_a[:k], out_W_a[:k], out_U_a[:k], out_C_a[:k], taken_a[:k]


def merge(const int64_t[::1] ka, const double[:, ::1] Wa, const double[:, ::1] Ua,
          const double[::1] Ca, const int64_t[::1] ca, const int64_t[::1] kb,
          const double[:, ::1] Wb, const double[:, ::1] Ub, const double[::1] Cb,
          const int64_t[::1] cb, bint adding):
    """Two sorted tables as one: the values (``W``, ``U``, and the weights ``C`` of the
    shards that changed each link) of a key in both added; counts added (``adding``) or
    the larger kept; empty count arrays stay empty."""
    cdef Py_ssize_t n = ka.shape[0] + kb.shape[0]
    cdef bint counting = ca.shape[0] > 0 or cb.shape[0] > 0
    keys_a = np.empty(n, np.int64)
    W_a = np.zeros((n, Wa.shape[1]), np.float64)
    U_a = np.zeros((n, Ua.shape[1]), np.float64)
    C_a = np.zeros(n, np.float64)
    counts_a = np.zeros(n if counting else 0, np.int64)
    cdef int64_t[::1] keys = keys_a
    cdef double[:, ::1] W = W_a
    cdef double[:, ::1] U = U_a
    cdef double[::1] C = C_a
    cdef int64_t[::1] counts = counts_a
    cdef Py_ssize_t i = 0, j = 0, k = 0, p
    cdef bint take_a, take_b
    with nogil:
        while i < ka.shape[0] or j < kb.shape[0]:
            take_a = j >= kb.shape[0] or (i < ka.shape[0] and ka[i] <= kb[j])
            take_b = i >= ka.shape[0] or (j < kb.shape[0] and kb[j] <= ka[i])
            if take_a:
                keys[k] = ka[i]
                for p in range(Wa.shape[1]):
                    W[k, p] += Wa[i, p]
                for p in range(Ua.shape[1]):
                    U[k, p] += Ua[i, p]
                C[k] += Ca[i]
                if counting and ca.shape[0] > 0:
                    counts[k] = ca[i]
                i += 1
            if take_b:
                keys[k] = kb[j]
                for p in range(Wb.shape[1]):
                    W[k, p] += Wb[j, p]
                for p in range(Ub.shape[1]):
                    U[k, p] += Ub[j, p]
                C[k] += Cb[j]
                if counting and cb.shape[0] > 0:
                    if take_a:
                        counts[k] = counts[k] + cb[j] if adding else max(counts[k], cb[j])
                    else:
                        counts[k] = cb[j]
                j += 1
            k += 1
    return keys_a[:k], W_a[:k], U_a[:k], C_a[:k], counts_a[:k]


cdef inline double _clipped(double value, double limit) noexcept nogil:
    """``value`` within ``[-limit, limit]`` (as numpy's clip: NaN stays NaN)."""
    if value < -limit:
        return -limit
    if value > limit:
        return limit
    return value


def mixed(const int64_t[::1] features, const int32_t[::1] sizes, const int32_t[::1] targets,
          const plane_t[:, ::1] W, const plane_t[:, ::1] U, bint averaging,
          const int64_t[::1] counts, const int64_t[::1] keys, const double[:, ::1] change_W,
          const double[:, ::1] change_U, const double[::1] scale,
          const int64_t[::1] change_counts, const double[::1] reference,
          const double[::1] offset, bint geometric, int64_t n_targets, double limit,
          bint single):
    """A network (laid out by rows sorted by feature, the bias's first, as
    :func:`changes` reads them) moved by a round's changes (sorted ``keys``, each change
    times its ``scale``): the mixed network laid out the same way, as its arrays hold it.

    Returns the rows' features (the bias's, -1, first, linked or not) and sizes, each
    link's target, its weights ``f(w) - f(reference) + change + offset`` (``f`` the
    logarithm when ``geometric``, else the identity; ``offset``: ``f(reference)``, as
    the caller computes it) and averaging sums, within ``[-limit, limit]`` and stored
    as float32 when ``single``, and its count: the start's or the change's, the larger of
    the two (empty when neither has counts). With ``geometric`` the weights come out as
    those float64 sums, for the caller to take their exponentials. A link only made,
    never moved, stays where it starts (its scale is 0); the start's rows of no links
    are left out."""
    cdef Py_ssize_t n_rows = sizes.shape[0]
    cdef Py_ssize_t n_keys = keys.shape[0]
    cdef int64_t *starts = _row_starts(sizes)
    cdef int64_t *local = <int64_t *>malloc((n_targets + 1) * sizeof(int64_t))
    cdef Py_ssize_t planes = W.shape[1]
    cdef Py_ssize_t columns = change_U.shape[1]
    cdef bint counting = counts.shape[0] > 0 or change_counts.shape[0] > 0
    cdef Py_ssize_t r = 0
    cdef Py_ssize_t i = 0
    cdef Py_ssize_t m = 0
    cdef Py_ssize_t count = 0
    cdef Py_ssize_t row = 0
    cdef Py_ssize_t out = 0
    cdef Py_ssize_t n_out_rows = 0
    cdef Py_ssize_t p
    cdef int64_t j = 0
    cdef int64_t key_a, key_b, key, feature, previous = -1
    cdef bint take_a, take_b, more_a
    cdef double w, u
    if local == NULL:
        free(starts)
        raise MemoryError()
    total = starts[n_rows] + n_keys
    rows_a = np.empty(total + 1, np.int64)
    sizes_a = np.zeros(total + 1, np.int32)
    targets_a = np.empty(total, np.int32)
    wide = geometric or not single
    W_a = np.empty((total, planes), np.float64 if wide else np.float32)
    U_a = np.empty((total, columns), np.float32 if single else np.float64)
    counts_a = np.zeros(total if counting else 0, np.int64)
    cdef int64_t[::1] out_rows = rows_a
    cdef int32_t[::1] out_sizes = sizes_a
    cdef int32_t[::1] out_targets = targets_a
    cdef int64_t[::1] out_counts = counts_a
    cdef float[:, ::1] Wf
    cdef double[:, ::1] Wd
    cdef float[:, ::1] Uf
    cdef double[:, ::1] Ud
    if wide:
        Wd = W_a
    else:
        Wf = W_a
    if single:
        Uf = U_a
    else:
        Ud = U_a
    out_rows[0] = -1  # (the bias row is always there)
    with nogil:
        while True:
            # the start's next link in key order: its rows in order, each by target
            while m >= count and r < n_rows:
                count = _row_in_target_order(local, starts, r, targets)
                m = 0
                row = r
                r += 1
            more_a = m < count
            if not more_a and i >= n_keys:
                break
            key_a = (features[row] + 1) * n_targets + targets[local[m]] if more_a else 0
            key_b = keys[i] if i < n_keys else 0
            take_a = more_a and (i >= n_keys or key_a <= key_b)
            take_b = i < n_keys and (not more_a or key_b <= key_a)
            key = key_a if take_a else key_b
            if take_a:
                j = local[m]
            feature = key // n_targets - 1
            if feature != previous:
                if feature != -1:
                    n_out_rows += 1
                    out_rows[n_out_rows] = feature
                previous = feature
            out_sizes[n_out_rows] += 1
            out_targets[out] = <int32_t>(key - (feature + 1) * n_targets)
            for p in range(planes):
                w = 0.0
                if take_a:
                    w += _relative(W[j, p], reference[p], geometric)
                if take_b:
                    w += change_W[i, p] * scale[i]
                w += offset[p]
                if geometric:
                    Wd[out, p] = w
                elif single:
                    Wf[out, p] = <float>_clipped(w, limit)
                else:
                    Wd[out, p] = _clipped(w, limit)
            for p in range(columns):
                u = 0.0
                if take_a and averaging:
                    u += U[j, p]
                if take_b:
                    u += change_U[i, p] * scale[i]
                if single:
                    Uf[out, p] = <float>_clipped(u, limit)
                else:
                    Ud[out, p] = _clipped(u, limit)
            if counting:
                if take_a and counts.shape[0] > 0:
                    out_counts[out] = counts[j]
                if take_b and change_counts.shape[0] > 0:
                    out_counts[out] = max(out_counts[out], change_counts[i]) if take_a \
                        else change_counts[i]
            out += 1
            if take_a:
                m += 1
            if take_b:
                i += 1
    free(starts)
    free(local)
    return (rows_a[:n_out_rows + 1], sizes_a[:n_out_rows + 1], targets_a[:out], W_a[:out],
            U_a[:out], counts_a[:out])


cdef struct Run:
    # one source's links of the row being mixed, in target order: targets and slots
    int32_t *target
    int64_t *slot
    Py_ssize_t n
    Py_ssize_t at


cdef inline void _row_runs(Run *runs, Py_ssize_t m, int64_t r, const int32_t *sizes0,
                           int64_t *first0, int32_t **T, int32_t **R,
                           int64_t n_targets) noexcept nogil:
    """Row ``r``'s links in each source, by target: the start's from its exact layout
    (from ``*first0``, moved past them), each copy's from its pool (a dense row by
    slot; a sparse row's, put in target order: those assigned lie by target, those
    made since follow)."""
    cdef Py_ssize_t i, q, n
    cdef int64_t j, stop
    cdef int32_t t
    cdef const int32_t *record
    n = sizes0[r]
    for q in range(n):
        runs[0].target[q] = T[0][first0[0] + q]
        runs[0].slot[q] = first0[0] + q
    runs[0].n = n
    runs[0].at = 0
    first0[0] += n
    for i in range(1, m):
        record = R[i] + 4 * r  # (start, size, cap, dense)
        n = 0
        if record[3]:
            stop = record[2] if record[2] < n_targets else n_targets
            for t in range(stop):
                j = record[0] + t
                if T[i][j] == t:
                    runs[i].target[n] = t
                    runs[i].slot[n] = j
                    n += 1
        else:
            for j in range(record[0], record[0] + record[1]):
                t = T[i][j]
                q = n
                while q > 0 and runs[i].target[q - 1] > t:
                    runs[i].target[q] = runs[i].target[q - 1]
                    runs[i].slot[q] = runs[i].slot[q - 1]
                    q -= 1
                runs[i].target[q] = t
                runs[i].slot[q] = j
                n += 1
        runs[i].n = n
        runs[i].at = 0


cdef inline void _prefetch_rows(int32_t **T, int32_t **R, void **W, void **U, Py_ssize_t m,
                                int64_t r, int64_t r1, Py_ssize_t row_bytes) noexcept nogil:
    """Ask the memory for the copies' row records of row ``r + AHEAD`` and for the links
    of row ``r + AHEAD / 2`` (its record asked for before): the rows lie anywhere in a
    pool."""
    cdef Py_ssize_t i
    cdef const int32_t *record
    for i in range(1, m):
        if r + AHEAD < r1:
            SNOWPY_PREFETCH(R[i] + 4 * (r + AHEAD))
        if r + AHEAD // 2 < r1:
            record = R[i] + 4 * (r + AHEAD // 2)
            SNOWPY_PREFETCH(T[i] + record[0])
            if W != NULL and W[i] != NULL:
                SNOWPY_PREFETCH(<char *>W[i] + record[0] * row_bytes)
            if U != NULL and U[i] != NULL:
                SNOWPY_PREFETCH(<char *>U[i] + record[0] * row_bytes)


cdef inline int32_t _least(const Run *runs, Py_ssize_t m) noexcept nogil:
    """The least target at the runs' cursors; -1: none left."""
    cdef int32_t t = -1
    cdef Py_ssize_t i
    for i in range(m):
        if runs[i].at < runs[i].n and (t < 0 or runs[i].target[runs[i].at] < t):
            t = runs[i].target[runs[i].at]
    return t


cdef inline void _past(Run *runs, Py_ssize_t m, int32_t t) noexcept nogil:
    """Each cursor at target ``t`` moved past it."""
    cdef Py_ssize_t i
    for i in range(m):
        if runs[i].at < runs[i].n and runs[i].target[runs[i].at] == t:
            runs[i].at += 1


cdef class Mixing:
    """A network's links (``start``: its exact layout, ``(sizes, target, W, U)``, each
    row's links by target) and the pools of copies of it that learned apart (``pools``:
    ``(rows, target, W, U)`` of each, ``rows`` its row records as ``int32[rows, 4]``:
    start, size, capacity, dense; weighing ``weights``), mixed into one exact layout row
    by row: each link at the start's weights (a link new to the network: at
    ``reference``, the rule's initial weights) moved by the weighted mean of its changes
    over the copies that changed it (its weights or averaging sums moved), the averaging
    sums likewise.

    :meth:`count` gives each row's links, :meth:`fill` writes them; both take a range of
    rows and the start's first link in it (:meth:`first`), and release the GIL: ranges
    on threads of their own."""

    cdef tuple start
    cdef list pools
    cdef Py_ssize_t m, planes
    cdef int64_t n_targets
    cdef bint averaging
    cdef object weights, reference

    def __init__(self, tuple start, list pools, weights, reference, bint averaging,
                 int64_t n_targets):
        self.start = start
        self.pools = pools
        self.m = 1 + len(pools)
        self.weights = np.ascontiguousarray(weights, np.float64)
        self.reference = np.ascontiguousarray(reference, np.float64)
        self.planes = self.reference.shape[0]
        self.averaging = averaging
        self.n_targets = n_targets

    def first(self, Py_ssize_t r0):
        """The start's first link of row ``r0``."""
        return int(self.start[0][:r0].sum(dtype=np.int64))

    cdef Run *_runs(self, int32_t **T, int32_t **R) except NULL:
        """Room for every source's links of one row, and the sources' targets and row
        records (the start has none: its exact layout is read by sizes)."""
        cdef Py_ssize_t i, width = max(self.n_targets, 1)
        cdef Run *runs = <Run *>malloc(self.m * sizeof(Run))
        cdef int32_t[::1] targets
        cdef int32_t[:, ::1] records
        if runs == NULL:
            raise MemoryError()
        for i in range(self.m):
            runs[i].target = <int32_t *>malloc(width * sizeof(int32_t))
            runs[i].slot = <int64_t *>malloc(width * sizeof(int64_t))
            if runs[i].target == NULL or runs[i].slot == NULL:
                _free_runs(runs, i + 1)
                raise MemoryError()
            source = self.start if i == 0 else self.pools[i - 1]
            targets = source[1]
            T[i] = &targets[0] if targets.shape[0] else NULL
            R[i] = NULL
            if i > 0:
                records = source[0]
                R[i] = &records[0, 0] if records.shape[0] else NULL
        return runs

    def count(self, Py_ssize_t r0, Py_ssize_t r1, int64_t first0, int32_t[::1] out_sizes):
        """The links of rows ``r0`` to ``r1`` (all sources' targets merged)."""
        cdef Py_ssize_t m = self.m, r
        cdef int64_t n_targets = self.n_targets
        cdef const int32_t[::1] sizes0 = self.start[0]
        cdef int32_t **T = <int32_t **>malloc(m * sizeof(int32_t *))
        cdef int32_t **R = <int32_t **>malloc(m * sizeof(int32_t *))
        cdef Run *runs
        cdef int32_t t
        if T == NULL or R == NULL:
            free(T); free(R)
            raise MemoryError()
        try:
            runs = self._runs(T, R)
        except MemoryError:
            free(T); free(R)
            raise
        with nogil:
            for r in range(r0, r1):
                _prefetch_rows(T, R, NULL, NULL, m, r, r1, 0)
                _row_runs(runs, m, r, &sizes0[0], &first0, T, R, n_targets)
                out_sizes[r] = 0
                while True:
                    t = _least(runs, m)
                    if t < 0:
                        break
                    out_sizes[r] += 1
                    _past(runs, m, t)
        _free_runs(runs, m)
        free(T); free(R)

    def fill(self, Py_ssize_t r0, Py_ssize_t r1, int64_t first0, int64_t k,
             int32_t[::1] out_target, plane_t[:, ::1] out_W, plane_t[:, ::1] out_U):
        """Rows ``r0`` to ``r1``'s mixed links, written from link ``k`` on."""
        cdef Py_ssize_t m = self.m, planes = self.planes, i, r, p
        cdef int64_t n_targets = self.n_targets
        cdef bint averaging = self.averaging
        cdef const double[::1] weights = self.weights
        cdef const double[::1] reference = self.reference
        cdef const int32_t[::1] sizes0 = self.start[0]
        cdef double[:, ::1] scratch = np.zeros((4, max(planes, 1)), np.float64)
        cdef int32_t **T = <int32_t **>malloc(m * sizeof(int32_t *))
        cdef int32_t **R = <int32_t **>malloc(m * sizeof(int32_t *))
        cdef plane_t **Wp = <plane_t **>malloc(m * sizeof(plane_t *))
        cdef plane_t **Up = <plane_t **>malloc(m * sizeof(plane_t *))
        cdef plane_t[:, ::1] view
        cdef Run *runs
        cdef int32_t t
        cdef int64_t j
        cdef bint here, moved
        cdef double C, w
        if T == NULL or R == NULL or Wp == NULL or Up == NULL:
            free(T); free(R); free(Wp); free(Up)
            raise MemoryError()
        try:
            runs = self._runs(T, R)
        except MemoryError:
            free(T); free(R); free(Wp); free(Up)
            raise
        for i in range(m):
            source = self.start if i == 0 else self.pools[i - 1]
            view = source[2]
            Wp[i] = &view[0, 0] if view.shape[0] else NULL
            Up[i] = NULL
            if averaging:
                view = source[3]
                Up[i] = &view[0, 0] if view.shape[0] else NULL
        with nogil:
            for r in range(r0, r1):
                _prefetch_rows(T, R, <void **>Wp, <void **>Up, m, r, r1,
                               planes * sizeof(plane_t))
                _row_runs(runs, m, r, &sizes0[0], &first0, T, R, n_targets)
                while True:
                    t = _least(runs, m)
                    if t < 0:
                        break
                    here = runs[0].at < runs[0].n and runs[0].target[runs[0].at] == t
                    j = runs[0].slot[runs[0].at] * planes if here else 0
                    for p in range(planes):
                        scratch[0, p] = Wp[0][j + p] if here else reference[p]
                        scratch[1, p] = Up[0][j + p] if here and averaging else 0.0
                        scratch[2, p] = 0.0
                        scratch[3, p] = 0.0
                    C = 0.0
                    for i in range(1, m):
                        if runs[i].at >= runs[i].n or runs[i].target[runs[i].at] != t:
                            continue
                        j = runs[i].slot[runs[i].at] * planes
                        moved = False
                        for p in range(planes):
                            if Wp[i][j + p] != scratch[0, p] or \
                                    (averaging and Up[i][j + p] != scratch[1, p]):
                                moved = True
                        if moved:
                            w = weights[i - 1]
                            C += w
                            for p in range(planes):
                                scratch[2, p] += w * (Wp[i][j + p] - scratch[0, p])
                                if averaging:
                                    scratch[3, p] += w * (Up[i][j + p] - scratch[1, p])
                    out_target[k] = t
                    for p in range(planes):
                        out_W[k, p] = <plane_t>(scratch[0, p] + scratch[2, p] / C if C > 0
                                                else scratch[0, p])
                        if averaging:
                            out_U[k, p] = <plane_t>(scratch[1, p] + scratch[3, p] / C if C > 0
                                                    else scratch[1, p])
                    k += 1
                    _past(runs, m, t)
        _free_runs(runs, m)
        free(T); free(R); free(Wp); free(Up)


cdef void _free_runs(Run *runs, Py_ssize_t m):
    cdef Py_ssize_t i
    for i in range(m):
        free(runs[i].target)
        free(runs[i].slot)
    free(runs)
