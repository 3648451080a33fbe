"""The compiled loops of a dual network: scoring and learning with support vectors.

Support vectors live in slots of fixed ``width``: slot ``s`` holds ``sv_len[s]`` feature
ids and strengths at ``sv_ids[s * width:]`` and ``sv_vals[s * width:]``, and
``alpha[s, t]`` its coefficient for target ``t``. ``state`` holds the slots in use and,
once a budget is full, the ring position of the oldest one (the next to be replaced).
The similarity is the rule's C function, a snowpy ``SimilarityKernel`` (its ``address``
and ``user_data_address``): one loop serves every dual rule, as snowpy's engine serves
every linear one. The function's signature is snowpy's similarity ABI, declared here with
plain C types, so that the plugin needs nothing of snowpy's to build.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uintptr_t
from libc.stdlib cimport calloc, free, malloc

ctypedef double (*similarity_fn)(const int64_t *a_ids, const double *a_vals, int64_t a_n,
                                 const int64_t *b_ids, const double *b_vals, int64_t b_n,
                                 const double *params, int64_t n_params,
                                 void *user_data) noexcept nogil

cdef enum:
    USED = 0
    OLDEST = 1


cdef inline void _score_one(similarity_fn sim, void *user, const int64_t *sv_ids,
                            const double *sv_vals, const int64_t *sv_len, int64_t width,
                            int64_t n_sv, const double *alpha, int64_t n_targets,
                            const int64_t *x_ids, const double *x_vals, int64_t m,
                            const double *params, int64_t n_params,
                            double *out) noexcept nogil:
    cdef int64_t s, t, begin
    cdef double k
    for t in range(n_targets):
        out[t] = 0.0
    for s in range(n_sv):
        begin = s * width
        k = sim(sv_ids + begin, sv_vals + begin, sv_len[s], x_ids, x_vals, m, params,
                n_params, user)
        if k != 0.0:
            for t in range(n_targets):
                out[t] += alpha[s * n_targets + t] * k


def dual_scores(object sim, const int64_t[::1] sv_ids, const double[::1] sv_vals,
                const int64_t[::1] sv_len, int64_t width, int64_t n_sv,
                const double[:, ::1] alpha, const int64_t[::1] indptr,
                const int64_t[::1] ids, const double[::1] vals, const double[::1] params,
                double theta, double[:, ::1] out):
    """``out[i, t] = sum_s alpha[s, t] K(sv_s, x_i) - theta`` for every row of a CSR."""
    cdef similarity_fn fn = <similarity_fn><uintptr_t>sim.address
    cdef void *user = <void *><uintptr_t>sim.user_data_address
    cdef int64_t n_targets = out.shape[1]
    cdef double *row = <double *>malloc((n_targets if n_targets else 1) * sizeof(double))
    cdef int64_t i, t, lo, hi
    cdef int64_t no_id = 0
    cdef double no_value = 0.0
    if row == NULL:
        raise MemoryError()
    sim.error = None
    with nogil:
        for i in range(out.shape[0]):
            lo = indptr[i]
            hi = indptr[i + 1]
            _score_one(fn, user, &sv_ids[0] if sv_ids.shape[0] else &no_id,
                       &sv_vals[0] if sv_vals.shape[0] else &no_value, &sv_len[0] if sv_len.shape[0] else &no_id,
                       width, n_sv, &alpha[0, 0] if alpha.shape[0] and alpha.shape[1] else &no_value,
                       n_targets, &ids[lo] if hi > lo else &no_id,
                       &vals[lo] if hi > lo else &no_value, hi - lo,
                       &params[0] if params.shape[0] else &no_value, params.shape[0], row)
            for t in range(n_targets):
                out[i, t] = row[t] - theta
    free(row)
    if sim.error is not None:
        error, sim.error = sim.error, None
        raise error


def dual_epoch(object sim, int64_t[::1] sv_ids, double[::1] sv_vals,
               int64_t[::1] sv_len, int64_t width, double[:, ::1] alpha, int64_t[::1] state,
               int64_t budget, const int64_t[::1] indptr, const int64_t[::1] ids,
               const double[::1] vals, const int64_t[::1] order, const int64_t[::1] y_indptr,
               const int32_t[::1] y_targets, const double[::1] params, double theta,
               double pos_thickness, double neg_thickness, double step, bint multilabel,
               double[:, ::1] record):
    """Learn the examples of ``order``; returns ``(processed, mistakes, updates, need)``.

    ``record[pos, t]`` (when it has rows) receives target ``t``'s score minus ``theta``
    of the ``pos``-th example before learning from it. ``need`` is 0 when every example
    was learned; otherwise the loop stopped before an example for want of room: ``need
    > 0`` is the width that example needs, ``-1`` more slots.
    """
    cdef similarity_fn fn = <similarity_fn><uintptr_t>sim.address
    cdef void *user = <void *><uintptr_t>sim.user_data_address
    cdef int64_t n_targets = alpha.shape[1]
    cdef int64_t capacity = alpha.shape[0]
    cdef double *scores = <double *>malloc((n_targets if n_targets else 1) * sizeof(double))
    cdef uint8_t *positive = <uint8_t *>calloc(n_targets if n_targets else 1, 1)
    cdef double *delta = <double *>malloc((n_targets if n_targets else 1) * sizeof(double))
    cdef int64_t mistakes = 0
    cdef int64_t updates = 0
    cdef int64_t need = 0
    cdef int64_t pos, i, lo, hi, m, t, c, best, changed, slot, begin, k
    cdef bint full, wrong
    cdef int64_t no_id = 0
    cdef double no_value = 0.0
    if scores == NULL or positive == NULL or delta == NULL:
        free(scores)
        free(positive)
        free(delta)
        raise MemoryError()
    sim.error = None
    with nogil:
        for pos in range(order.shape[0]):
            i = order[pos]
            lo = indptr[i]
            hi = indptr[i + 1]
            m = hi - lo
            if m > width:
                need = m
                break
            full = state[USED] == capacity
            if full and (budget == 0 or capacity < budget):
                need = -1
                break
            _score_one(fn, user, &sv_ids[0] if sv_ids.shape[0] else &no_id,
                       &sv_vals[0] if sv_vals.shape[0] else &no_value,
                       &sv_len[0] if sv_len.shape[0] else &no_id, width, state[USED],
                       &alpha[0, 0] if capacity and n_targets else &no_value, n_targets,
                       &ids[lo] if m else &no_id, &vals[lo] if m else &no_value, m,
                       &params[0] if params.shape[0] else &no_value, params.shape[0], scores)
            if record.shape[0] > 0:
                for t in range(n_targets):
                    record[pos, t] = scores[t] - theta
            for c in range(y_indptr[i], y_indptr[i + 1]):
                positive[y_targets[c]] = True
            # the prediction before learning: winner-take-all, or every target at theta
            if n_targets > 0:
                wrong = False
                if multilabel:
                    for t in range(n_targets):
                        if (scores[t] >= theta) != positive[t]:
                            wrong = True
                            break
                else:
                    best = 0
                    for t in range(1, n_targets):
                        if scores[t] > scores[best]:
                            best = t
                    wrong = not positive[best]
                if wrong:
                    mistakes += 1
            # SNoW's test on every target; the failed ones get the example's coefficient
            changed = 0
            for t in range(n_targets):
                delta[t] = 0.0
                if positive[t]:
                    if scores[t] < theta + pos_thickness:
                        delta[t] = step
                elif not scores[t] < theta - neg_thickness:
                    delta[t] = -step
                if delta[t] != 0.0:
                    changed += 1
            for c in range(y_indptr[i], y_indptr[i + 1]):
                positive[y_targets[c]] = False
            if changed:
                if full:  # the budget is full: the oldest support vector makes room
                    slot = state[OLDEST]
                    state[OLDEST] = (slot + 1) % capacity
                else:
                    slot = state[USED]
                    state[USED] += 1
                begin = slot * width
                for k in range(m):
                    sv_ids[begin + k] = ids[lo + k]
                    sv_vals[begin + k] = vals[lo + k]
                sv_len[slot] = m
                for t in range(n_targets):
                    alpha[slot, t] = delta[t]
                updates += changed
        else:
            pos = order.shape[0]
    free(scores)
    free(positive)
    free(delta)
    if sim.error is not None:
        error, sim.error = sim.error, None
        raise error
    return pos, mistakes, updates, need
