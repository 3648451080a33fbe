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


def table(const int64_t[::1] features, const int64_t[::1] order, const int32_t[::1] sizes,
          const int32_t[::1] targets, const plane_t[:, ::1] W, const plane_t[:, ::1] U,
          bint averaging, const double[::1] reference, bint geometric, int64_t n_targets):
    """Keys ``(feature + 1) * n_targets + target`` in increasing order (rows visited in
    ``order``, the rows sorted by feature; ``features[0]`` is the bias, -1); per key
    ``f(w) - f(reference)`` of each weight plane (``f`` the logarithm when
    ``geometric``), the averaging sums (``U``, when ``averaging``) and the link each came
    from."""
    cdef Py_ssize_t n_rows = sizes.shape[0]
    cdef int64_t *starts = <int64_t *>malloc((n_rows + 1) * sizeof(int64_t))
    cdef int64_t *local = <int64_t *>malloc((n_targets + 1) * sizeof(int64_t))
    cdef Py_ssize_t r, q, p
    cdef int64_t j, at, count, mm, base, total, k = 0
    cdef Py_ssize_t planes = W.shape[1]
    cdef double w
    if starts == NULL or local == NULL:
        free(starts)
        free(local)
        raise MemoryError()
    starts[0] = 0
    for r in range(n_rows):
        starts[r + 1] = starts[r] + sizes[r]
    total = starts[n_rows]
    keys_array = np.empty(total, np.int64)
    W_array = np.empty((total, planes), np.float64)
    U_array = np.empty((total, planes if averaging else 0), np.float64)
    source_array = np.empty(total, np.int64)
    cdef int64_t[::1] keys = keys_array
    cdef double[:, ::1] out_W = W_array
    cdef double[:, ::1] out_U = U_array
    cdef int64_t[::1] source = source_array
    with nogil:
        for q in range(n_rows):
            if q + AHEAD < n_rows:
                j = starts[order[q + AHEAD]]
                if j < total:
                    SNOWPY_PREFETCH(&targets[j])
                    SNOWPY_PREFETCH(&W[j, 0])
                    if averaging:
                        SNOWPY_PREFETCH(&U[j, 0])
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
            for mm in range(count):
                j = local[mm]
                keys[k] = base + targets[j]
                source[k] = j
                for p in range(planes):
                    w = W[j, p]
                    out_W[k, p] = (log(w) - log(reference[p])) if geometric else w - reference[p]
                    if averaging:
                        out_U[k, p] = U[j, p]
                k += 1
    free(starts)
    free(local)
    return keys_array, W_array, U_array, source_array


def changes(const int64_t[::1] start_keys, const double[:, ::1] start_W,
            const double[:, ::1] start_U, const int64_t[::1] keys, const double[:, ::1] W,
            const double[:, ::1] U, double weight):
    """What a round changed: the links of the trained table that are new or whose weights
    or sums moved, with ``weight`` times the change, the weight of the shard as a changer
    of each (0 for a link made and left at its initial weight) and the positions they
    came from."""
    cdef Py_ssize_t n = keys.shape[0]
    out_keys_a = np.empty(n, np.int64)
    out_W_a = np.empty((n, W.shape[1]), np.float64)
    out_U_a = np.empty((n, U.shape[1]), np.float64)
    out_C_a = np.empty(n, np.float64)
    taken_a = np.empty(n, np.int64)
    cdef int64_t[::1] out_keys = out_keys_a
    cdef double[:, ::1] out_W = out_W_a
    cdef double[:, ::1] out_U = out_U_a
    cdef double[::1] out_C = out_C_a
    cdef int64_t[::1] taken = taken_a
    cdef Py_ssize_t s = 0
    cdef Py_ssize_t k = 0
    cdef Py_ssize_t i, p
    cdef bint known, moved
    cdef double before
    with nogil:
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


cdef inline int32_t _least(int32_t **T, int64_t[:, ::1] at, Py_ssize_t m) noexcept nogil:
    """The least target at the layouts' cursors (``at[0]``, before ``at[1]``); -1: none."""
    cdef int32_t t = -1
    cdef Py_ssize_t i
    for i in range(m):
        if at[0, i] < at[1, i] and (t < 0 or T[i][at[0, i]] < t):
            t = T[i][at[0, i]]
    return t


cdef inline void _past(int32_t **T, int64_t[:, ::1] at, Py_ssize_t m, int32_t t) noexcept nogil:
    """Each cursor at target ``t`` moved past it."""
    cdef Py_ssize_t i
    for i in range(m):
        if at[0, i] < at[1, i] and T[i][at[0, i]] == t:
            at[0, i] += 1


cdef class Mixing:
    """The exact layouts of a network (``layouts[0]``: ``(sizes, target, W, U)``, the
    links of each row by target) and of copies of it that learned apart
    (``layouts[1:]``, weighing ``weights``), mixed into one layout row by row: each link
    at the start's weights (a link new to the network: at ``reference``, the rule's
    initial weights) moved by the weighted mean of its changes over the copies that
    changed it (its weights or averaging sums moved), the averaging sums likewise.

    :meth:`count` gives each row's links, :meth:`fill` writes them; both take a range of
    rows and each layout's first link in it (:meth:`firsts`), and release the GIL:
    ranges on threads of their own."""

    cdef list layouts
    cdef Py_ssize_t m, planes
    cdef bint averaging
    cdef object weights, reference

    def __init__(self, list layouts, weights, reference, bint averaging):
        self.layouts = layouts
        self.m = len(layouts)
        self.weights = np.ascontiguousarray(weights, np.float64)
        self.reference = np.ascontiguousarray(reference, np.float64)
        self.planes = self.reference.shape[0]
        self.averaging = averaging

    def firsts(self, Py_ssize_t r0):
        """Each layout's first link of row ``r0``."""
        return np.array([int(layout[0][:r0].sum(dtype=np.int64)) for layout in self.layouts],
                        np.int64)

    cdef void _rows(self, int32_t **S, int32_t **T):
        cdef int32_t[::1] view
        for i in range(self.m):
            view = self.layouts[i][0]
            S[i] = &view[0] if view.shape[0] else NULL
            view = self.layouts[i][1]
            T[i] = &view[0] if view.shape[0] else NULL

    def count(self, Py_ssize_t r0, Py_ssize_t r1, const int64_t[::1] firsts,
              int32_t[::1] out_sizes):
        """The links of rows ``r0`` to ``r1`` (all layouts' targets merged)."""
        cdef Py_ssize_t m = self.m, i, r
        cdef int32_t t
        cdef int64_t[:, ::1] at = np.empty((2, m), np.int64)
        cdef int32_t **S = <int32_t **>malloc(m * sizeof(int32_t *))
        cdef int32_t **T = <int32_t **>malloc(m * sizeof(int32_t *))
        if S == NULL or T == NULL:
            free(S); free(T)
            raise MemoryError()
        self._rows(S, T)
        for i in range(m):
            at[0, i] = firsts[i]
        with nogil:
            for r in range(r0, r1):
                for i in range(m):
                    at[1, i] = at[0, i] + S[i][r]
                out_sizes[r] = 0
                while True:
                    t = _least(T, at, m)
                    if t < 0:
                        break
                    out_sizes[r] += 1
                    _past(T, at, m, t)
        free(S); free(T)

    def fill(self, Py_ssize_t r0, Py_ssize_t r1, const int64_t[::1] firsts, int64_t k,
             int32_t[::1] out_target, plane_t[:, ::1] out_W, plane_t[:, ::1] out_U):
        """Rows ``r0`` to ``r1``'s mixed links, written from link ``k`` on."""
        cdef Py_ssize_t m = self.m, planes = self.planes, i, r, p
        cdef bint averaging = self.averaging
        cdef const double[::1] weights = self.weights
        cdef const double[::1] reference = self.reference
        cdef int64_t[:, ::1] at = np.empty((2, m), np.int64)
        cdef double[:, ::1] scratch = np.zeros((4, max(planes, 1)), np.float64)
        cdef int32_t **S = <int32_t **>malloc(m * sizeof(int32_t *))
        cdef int32_t **T = <int32_t **>malloc(m * sizeof(int32_t *))
        cdef plane_t **Wp = <plane_t **>malloc(m * sizeof(plane_t *))
        cdef plane_t **Up = <plane_t **>malloc(m * sizeof(plane_t *))
        cdef plane_t[:, ::1] view
        cdef int32_t t
        cdef int64_t j
        cdef bint here, moved
        cdef double C, w
        if S == NULL or T == NULL or Wp == NULL or Up == NULL:
            free(S); free(T); free(Wp); free(Up)
            raise MemoryError()
        self._rows(S, T)
        for i in range(m):
            view = self.layouts[i][2]
            Wp[i] = &view[0, 0] if view.shape[0] else NULL
            Up[i] = NULL
            if averaging:
                view = self.layouts[i][3]
                Up[i] = &view[0, 0] if view.shape[0] else NULL
            at[0, i] = firsts[i]
        with nogil:
            for r in range(r0, r1):
                for i in range(m):
                    at[1, i] = at[0, i] + S[i][r]
                while True:
                    t = _least(T, at, m)
                    if t < 0:
                        break
                    here = at[0, 0] < at[1, 0] and T[0][at[0, 0]] == t
                    for p in range(planes):
                        scratch[0, p] = Wp[0][at[0, 0] * planes + p] if here else reference[p]
                        scratch[1, p] = Up[0][at[0, 0] * planes + p] if here and averaging \
                            else 0.0
                        scratch[2, p] = 0.0
                        scratch[3, p] = 0.0
                    C = 0.0
                    for i in range(1, m):
                        if at[0, i] >= at[1, i] or T[i][at[0, i]] != t:
                            continue
                        j = at[0, i] * planes
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
                    _past(T, at, m, t)
        free(S); free(T); free(Wp); free(Up)
