"""The training engine: one compiled epoch over examples and the link pool.

Every rule, built-in or a plugin's, is a C function of one signature (``abi.pxd``)
that the epoch calls through a pointer: one loop serves them all, with no Python call
per example. The epoch takes four small objects, as scikit-learn's ``_plain_sgd``
takes its weight vector, data set and loss: the link :class:`Links` (the pool's
arrays), the :class:`RuleBinding` (the kernel, its numbers and planes), the
:class:`Options` (policy, threshold, thickness...) and the examples; it returns an
:class:`Outcome`. :mod:`snowpy.network.engine` documents what it does per example
(gather, eligibility, activations, the prediction before learning, links created,
SNoW's test and the updates, weights checked and written back, dense rows); the stages
below follow that order.

The pool must have room for the links an example may create; when it has not, the
epoch stops before that example and reports the room it needs: the caller grows the
pool and continues from there (``Outcome.need_room``), and likewise for the
workspace's link lists (``Outcome.need_queue``).
"""

from libc.math cimport fabs
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy, memset

from snowpy._core.pool cimport (
    MAX_PLANES,
    USED,
    SNOWPY_PREFETCH,
    Pool,
    append_link,
    row_stop,
    densify,
    weight_t,
)

#: Link policies, as the engine numbers them.
POLICIES = {"positive": POSITIVE, "touched": TOUCHED, "all": ALL, "signed": SIGNED}


# ------------------------------------------------------------------ workspace
cdef class Workspace:
    """Scratch memory of the epoch for examples of up to ``width - 1`` features and
    ``n_targets`` targets, with ``queue`` entries of link lists. Its clock numbers
    examples and target visits across calls, so that its stamps are never cleared: the
    one-example path keeps one from example to example."""

    def __cinit__(self, int64_t max_active, int64_t n_targets, int64_t n_planes,
                  int64_t queue):
        memset(&self.w, 0, sizeof(work_t))
        self._allocate(max_active + 1, n_targets, n_planes, queue)

    cdef int _allocate(self, int64_t width, int64_t n_targets, int64_t n_planes,
                       int64_t queue) except -1:
        cdef work_t *w = &self.w
        cdef int64_t t = n_targets if n_targets > 0 else 1
        w.width = width
        w.n_targets = n_targets
        w.n_planes = n_planes
        w.queue = queue
        w.row_buf = <int64_t *>malloc(width * sizeof(int64_t))
        w.val_buf = <double *>malloc(width * sizeof(double))
        w.eligible = <uint8_t *>malloc(width)
        w.dense = <uint8_t *>malloc(width)
        w.grown = <uint8_t *>calloc(width, 1)
        w.kmark = <int64_t *>calloc(width, sizeof(int64_t))
        w.open_k = <int64_t *>malloc(width * sizeof(int64_t))
        w.kslot = <int64_t *>malloc(width * sizeof(int64_t))
        w.wbuf = <double *>malloc(width * n_planes * sizeof(double) + sizeof(double))
        w.vbuf = <double *>malloc(width * sizeof(double))
        w.kbuf = <int64_t *>malloc(width * sizeof(int64_t))
        w.jbuf = <int64_t *>malloc(width * sizeof(int64_t))
        w.new_w = <double *>malloc(MAX_PLANES * sizeof(double))
        w.new_u = <double *>malloc(MAX_PLANES * sizeof(double))
        w.acc = <double *>malloc(t * sizeof(double))
        w.stamp = <int64_t *>calloc(t, sizeof(int64_t))
        w.allowed_stamp = <int64_t *>calloc(t, sizeof(int64_t))
        w.head = <int64_t *>malloc(t * sizeof(int64_t))
        w.listed = <int64_t *>calloc(t, sizeof(int64_t))
        w.needed = <int64_t *>calloc(t, sizeof(int64_t))
        w.qk = <int64_t *>malloc(queue * sizeof(int64_t))
        w.qo = <int64_t *>malloc(queue * sizeof(int64_t))
        w.nxt = <int64_t *>malloc(queue * sizeof(int64_t))
        if (w.row_buf == NULL or w.val_buf == NULL or w.eligible == NULL or w.dense == NULL
                or w.grown == NULL or w.kmark == NULL or w.open_k == NULL or w.kslot == NULL or w.wbuf == NULL
                or w.vbuf == NULL or w.kbuf == NULL or w.jbuf == NULL or w.new_w == NULL
                or w.new_u == NULL or w.acc == NULL or w.stamp == NULL
                or w.allowed_stamp == NULL or w.head == NULL or w.listed == NULL
                or w.needed == NULL or w.qk == NULL or w.qo == NULL or w.nxt == NULL):
            raise MemoryError("no memory for the training engine's workspace")
        return 0

    def __dealloc__(self):
        cdef work_t *w = &self.w
        free(w.row_buf)
        free(w.val_buf)
        free(w.eligible)
        free(w.dense)
        free(w.grown)
        free(w.kmark)
        free(w.open_k)
        free(w.kslot)
        free(w.wbuf)
        free(w.vbuf)
        free(w.kbuf)
        free(w.jbuf)
        free(w.new_w)
        free(w.new_u)
        free(w.acc)
        free(w.stamp)
        free(w.allowed_stamp)
        free(w.head)
        free(w.listed)
        free(w.needed)
        free(w.qk)
        free(w.qo)
        free(w.nxt)

    @property
    def width(self):
        """The most features (the bias included) an example may have."""
        return self.w.width

    @property
    def n_targets(self):
        return self.w.n_targets

    @property
    def queue(self):
        return self.w.queue


# ---------------------------------------------------------------- the epoch
cdef inline void _prefetch_rows(const Pool *p, const batch_t *b, int64_t i) noexcept nogil:
    """Ask the memory for example ``i``'s rows' bookkeeping (the rows are known ahead:
    their lines arrive while the example before is learned)."""
    cdef int64_t j, r
    for j in range(b.indptr[i], b.indptr[i + 1]):
        r = b.rows[j]
        SNOWPY_PREFETCH(&p.rows[r])


cdef inline void _prefetch_example(const batch_t *b, int64_t i) noexcept nogil:
    """Ask the memory for example ``i``'s row list and labels (its offsets asked for
    earlier): in a shuffled order every example's lists lie somewhere new."""
    cdef int64_t j
    cdef int64_t first = b.indptr[i]
    cdef int64_t stop = b.indptr[i + 1]
    j = first
    while j < stop:
        SNOWPY_PREFETCH(&b.rows[j])
        if b.vals != NULL:
            SNOWPY_PREFETCH(&b.vals[j])
        j += 16
    SNOWPY_PREFETCH(&b.y_targets[b.y_indptr[i]])
    if b.a_indptr != NULL:
        SNOWPY_PREFETCH(&b.a_targets[b.a_indptr[i]])


cdef inline void _prefetch_offsets(const batch_t *b, int64_t i) noexcept nogil:
    """Ask the memory for example ``i``'s offsets into the row and label lists."""
    SNOWPY_PREFETCH(&b.indptr[i])
    SNOWPY_PREFETCH(&b.y_indptr[i])
    if b.a_indptr != NULL:
        SNOWPY_PREFETCH(&b.a_indptr[i])


cdef inline double _plane_sum(const weight_t *W, int64_t j, const rule_t *rule,
                              int kind) noexcept nogil:
    """The effective weight of slot ``j``: w+ - w- is taken in the storage precision
    (float32 minus float32 is float32, as numpy computes it), a sum of planes in float64."""
    cdef int64_t n = rule.n_planes
    cdef double total = 0.0
    cdef int64_t q
    if kind == 1:
        return W[j]
    if kind == 2:
        return <double>(<weight_t>(W[2 * j] - W[2 * j + 1]))
    for q in range(n):
        total += rule.planes[q] * W[j * n + q]
    return total


cdef inline void _add_dense(double *acc, const weight_t *w, int64_t n, double v,
                           double absent) noexcept nogil:
    """``acc[t] += v * (w[t] - absent)`` for the ``n`` targets of a dense row of one plane:
    each target's sum as :func:`_activations` makes it, to the bit."""
    cdef int64_t t
    for t in range(n):
        acc[t] += v * (<double>w[t] - absent)


cdef inline void _activations(const Pool *p, const weight_t *W, const weight_t *U,
                              const rule_t *rule, work_t *ws, int64_t m, int64_t n_targets,
                              double vsum, const batch_t *b, int64_t next_i) noexcept nogil:
    """``acc[t]``: absent * sum_k v_k + sum_k v_k * sum_{links of r_k} (w - absent).

    As each row is read, the memory of a row of the next example (``next_i``, -1 for
    none) is asked for: its links' targets, weights and averaging sums, spread over the
    example so that the requests never queue up at once."""
    cdef double absent = rule.absent
    cdef int64_t t, k, r, first, j, last, stop
    cdef int64_t ahead = b.indptr[next_i] if next_i >= 0 else 0
    cdef int64_t ahead_stop = b.indptr[next_i + 1] if next_i >= 0 else 0
    cdef double v
    for t in range(n_targets):
        ws.acc[t] = absent * vsum
    for k in range(m):
        if ahead < ahead_stop:
            r = b.rows[ahead]
            j = p.rows[r].start
            last = row_stop(p.rows[r]) - 1  # (a block of many targets spans lines)
            SNOWPY_PREFETCH(&p.target[j])
            SNOWPY_PREFETCH(&W[j * p.n_planes])
            if p.averaging:
                SNOWPY_PREFETCH(&U[j * p.n_planes])
            if last > j:
                SNOWPY_PREFETCH(&p.target[last])
                SNOWPY_PREFETCH(&W[last * p.n_planes])
                if p.averaging:
                    SNOWPY_PREFETCH(&U[last * p.n_planes])
            ahead += 1
        r = ws.row_buf[k]
        v = ws.val_buf[k]
        first = p.rows[r].start
        if ws.dense[k]:  # a dense row is a vector: target t at offset t
            stop = p.rows[r].cap if p.rows[r].cap < n_targets else n_targets
            if rule.kind == 1:  # (one plane: a loop the compiler makes vector code of)
                _add_dense(ws.acc, &W[first], stop, v, absent)
            else:
                for t in range(stop):
                    ws.acc[t] += v * (_plane_sum(W, first + t, rule, rule.kind) - absent)
        else:
            for j in range(first, first + p.rows[r].size):
                ws.acc[p.target[j]] += v * (_plane_sum(W, j, rule, rule.kind) - absent)


cdef inline void _record_scores(const Pool *p, const weight_t *W, const weight_t *U,
                                const rule_t *rule, work_t *ws, int64_t m, int64_t n_targets,
                                int64_t seen, double theta, double *scores) noexcept nogil:
    """The example's scores before learning (progressive validation), from the averaged
    weights when averaging, as predict sees them."""
    cdef int64_t t, k, r, j, first, stop
    cdef double v
    for t in range(n_targets):
        scores[t] = ws.acc[t] - theta
    if not p.averaging or seen <= 0:
        return
    for k in range(m):
        r = ws.row_buf[k]
        v = ws.val_buf[k] / seen
        first = p.rows[r].start
        if ws.dense[k]:  # holes hold no averaging sum
            stop = p.rows[r].cap if p.rows[r].cap < n_targets else n_targets
            for t in range(stop):
                scores[t] -= v * _plane_sum(U, first + t, rule, 0)
        else:
            for j in range(first, first + p.rows[r].size):
                scores[p.target[j]] -= v * _plane_sum(U, j, rule, 0)


cdef inline void _list_link(work_t *ws, int64_t *q, int64_t t, int64_t k, int64_t offset,
                            int64_t mark) noexcept nogil:
    """Thread (row k, offset) onto target t's list of the example's links."""
    ws.qk[q[0]] = k
    ws.qo[q[0]] = offset
    if ws.listed[t] == mark:
        ws.nxt[q[0]] = ws.head[t]
    else:
        ws.nxt[q[0]] = -1
        ws.listed[t] = mark
    ws.head[t] = q[0]
    q[0] += 1


cdef inline bint _keep_weight(double *w, const options_t *opt, int64_t *overflows,
                              int64_t *underflows) noexcept nogil:
    """Clamp an updated weight into the magnitudes kept (counted); False for NaN."""
    cdef double value = w[0]
    cdef double magnitude
    if value != value:
        return False
    magnitude = fabs(value)
    if opt.multiplicative and value <= 0.0:
        w[0] = opt.min_magnitude
        underflows[0] += 1
    elif magnitude > opt.max_magnitude:
        w[0] = opt.max_magnitude if value > 0 else -opt.max_magnitude
        overflows[0] += 1
    elif magnitude < opt.min_magnitude and value != 0.0:
        w[0] = opt.min_magnitude if value > 0 else -opt.min_magnitude
        underflows[0] += 1
    return True


cdef inline double _step_sign(const work_t *ws, const options_t *opt, int64_t t,
                             int64_t mark, double theta, double true_score,
                             bint violated) noexcept nogil:
    """The way target ``t`` is updated on the example: 1 promoted, -1 demoted, 0 not (a
    positive target below its thick separator, a negative one above; under constraint
    classification, the true target when a negative one came within the separator of it,
    and those negative ones)."""
    if opt.constraint:
        if ws.stamp[t] == mark:
            return 1.0 if violated else 0.0
        return 0.0 if ws.acc[t] < true_score - opt.pos_thickness else -1.0
    if ws.stamp[t] == mark:
        return 0.0 if ws.acc[t] >= theta + opt.pos_thickness else 1.0
    return 0.0 if ws.acc[t] < theta - opt.neg_thickness else -1.0


cdef inline int64_t _next_update(const work_t *ws, const options_t *opt, const batch_t *b,
                                 int64_t lo, bint restricted, int64_t c, int64_t n_allowed,
                                 int64_t mark, double theta, double true_score,
                                 bint violated) noexcept nogil:
    """The first of the example's targets from the ``c``-th on that is updated
    (:func:`_step_sign`); ``n_allowed`` when none is."""
    cdef int64_t t
    while c < n_allowed:
        t = b.a_targets[lo + c] if restricted else c
        if _step_sign(ws, opt, t, mark, theta, true_score, violated) != 0.0:
            return c
        c += 1
    return n_allowed


cdef outcome_t epoch(Pool *p, weight_t *W, weight_t *U, const rule_t *rule, const options_t *opt,
                   const batch_t *b, work_t *ws, int64_t seen, int64_t *counts,
                   int64_t n_targets) noexcept nogil:
    """Learn the examples of ``b.order`` in order (see the module)."""
    cdef outcome_t out
    cdef int64_t n_planes = rule.n_planes
    cdef int policy = opt.policy
    cdef bint restricted = b.a_indptr != NULL
    cdef bint averaging = p.averaging
    cdef bint counting_rows = p.count != NULL and b.counting
    cdef bint counting_links = p.lcount != NULL and b.counting
    cdef bint creating = b.creating
    cdef bint creating_now = creating and policy != TOUCHED
    cdef double initial = rule.initial
    cdef double absent = rule.absent
    cdef double theta = opt.theta
    cdef int64_t capacity = p.capacity
    cdef int64_t dense_at = <int64_t>(0.5 * n_targets + 0.5)
    cdef int64_t dense_room = n_targets
    cdef int64_t qcap = ws.queue
    cdef int64_t first_mark = ws.mark
    cdef int64_t tag = ws.tag
    cdef int64_t pos, i, mark, m, lo, n_allowed, n_positive, linked, fan, need, k, r, c, t
    cdef int64_t j, first, off, q, wanted, n_open, o, e, g, h, best, c_next, t_next
    cdef double vsum, y, true_score, sqnorm, moved, v
    cdef bint wrong, calls, violated, changed, missing
    cdef int status
    cdef weight_t old
    memset(&out, 0, sizeof(outcome_t))
    if dense_at < 1:
        dense_at = 1
    if b.n_order > 0:
        _prefetch_rows(p, b, b.order[0])
    if b.n_order > 1:
        _prefetch_rows(p, b, b.order[1])
    for pos in range(b.n_order):
        i = b.order[pos]
        # the memory of the examples ahead, asked for in stages while this one is learned:
        # offsets eight ahead, lists four ahead, rows' bookkeeping two ahead (and links
        # one ahead, as the activations are summed)
        if pos + 8 < b.n_order:
            _prefetch_offsets(b, b.order[pos + 8])
        if pos + 4 < b.n_order:
            _prefetch_example(b, b.order[pos + 4])
        if pos + 2 < b.n_order:
            _prefetch_rows(p, b, b.order[pos + 2])
        mark = first_mark + pos + 1
        ws.mark = mark  # (kept current: every return leaves the clock past what it used)
        ws.tag = tag
        # --- gather the example's rows and strengths, the bias first
        m = 0
        if opt.bias != 0.0:
            ws.row_buf[0] = 0
            ws.val_buf[0] = opt.bias
            m = 1
        if b.vals != NULL:
            for j in range(b.indptr[i], b.indptr[i + 1]):
                ws.row_buf[m] = b.rows[j]
                ws.val_buf[m] = b.vals[j]
                m += 1
        else:  # binary rows: every strength is 1
            for j in range(b.indptr[i], b.indptr[i + 1]):
                ws.row_buf[m] = b.rows[j]
                ws.val_buf[m] = 1.0
                m += 1
        if restricted:
            lo = b.a_indptr[i]
            n_allowed = b.a_indptr[i + 1] - lo
        else:
            lo = 0
            n_allowed = n_targets
        n_positive = b.y_indptr[i + 1] - b.y_indptr[i]
        for j in range(b.y_indptr[i], b.y_indptr[i + 1]):
            ws.stamp[b.y_targets[j]] = mark
        linked = 0
        vsum = 0.0
        for k in range(m):
            r = ws.row_buf[k]
            ws.dense[k] = p.rows[r].dense == 1
            linked += 2 * dense_room if ws.dense[k] else p.rows[r].size
            vsum += ws.val_buf[k]
            ws.grown[k] = False
            ws.eligible[k] = True
        fan = n_allowed if policy == ALL else n_positive
        # --- room for the links this example may create, and for its link lists
        if policy == TOUCHED or policy == SIGNED or creating:
            need = 4 * (linked + m * (n_allowed if policy != POSITIVE else n_positive))
            if p.meta[USED] + need > capacity:
                out.need_room = need
                break
        if linked + m * fan + 1 > qcap:
            out.need_queue = linked + m * fan + 1
            break
        # --- a new row about to link half the targets or more starts dense
        if creating and policy == ALL and fan >= dense_at:
            for k in range(m):
                r = ws.row_buf[k]
                if p.rows[r].size == 0 and not ws.dense[k] and p.meta[USED] + dense_room <= capacity:
                    densify(p, W, U, r, n_targets, rule.absent_w)
                    ws.dense[k] = True
        # --- eligibility (SNoW -e): rows count their activity
        if opt.min_count > 1:
            for k in range(m):
                r = ws.row_buf[k]
                if counting_rows and r > 0 and p.count[r] < 2147483647:
                    p.count[r] += 1
                ws.eligible[k] = r == 0 or p.count[r] >= opt.min_count
        # --- activations, and the scores before learning
        _activations(p, W, U, rule, ws, m, n_targets, vsum, b,
                     b.order[pos + 1] if pos + 1 < b.n_order else -1)
        if b.acc != NULL:
            for t in range(n_targets):
                b.acc[pos * n_targets + t] = ws.acc[t]
        if b.scores != NULL:
            _record_scores(p, W, U, rule, ws, m, n_targets, seen, theta,
                           b.scores + pos * n_targets)
        # --- the prediction before learning
        if n_allowed > 0:
            wrong = False
            if opt.multilabel:
                for c in range(n_allowed):
                    t = b.a_targets[lo + c] if restricted else c
                    if (ws.acc[t] >= theta) != (ws.stamp[t] == mark):
                        wrong = True
                        break
            else:
                best = -1
                for c in range(n_allowed):
                    t = b.a_targets[lo + c] if restricted else c
                    if best < 0 or ws.acc[t] > ws.acc[best]:
                        best = t
                wrong = ws.stamp[best] != mark
            if wrong:
                out.mistakes += 1
        # --- the targets that need their links of this example: those that may get
        #     links, and those whose activation calls for an update
        tag += 1
        wanted = 0
        if creating_now:
            if restricted:
                for c in range(n_allowed):
                    ws.allowed_stamp[b.a_targets[lo + c]] = mark
            for c in range(fan):
                if policy == ALL:
                    t = b.a_targets[lo + c] if restricted else c
                else:
                    t = b.y_targets[b.y_indptr[i] + c]
                    if restricted and ws.allowed_stamp[t] != mark:
                        continue
                if ws.needed[t] != tag:
                    ws.needed[t] = tag
                    wanted += 1
        for c in range(n_allowed):
            t = b.a_targets[lo + c] if restricted else c
            if ws.needed[t] == tag:
                continue
            if opt.constraint:
                calls = True  # decided below, against the true target's activation
            elif ws.stamp[t] == mark:
                calls = ws.acc[t] < theta + opt.pos_thickness
            else:
                calls = ws.acc[t] >= theta - opt.neg_thickness
            if calls:
                ws.needed[t] = tag
                wanted += 1
        q = 0
        if wanted > 0:
            for k in range(m):
                if ws.dense[k]:
                    continue  # target t's link is at offset t
                r = ws.row_buf[k]
                first = p.rows[r].start
                for off in range(p.rows[r].size):
                    t = p.target[first + off]
                    if ws.needed[t] != tag:
                        continue
                    _list_link(ws, &q, t, k, off, mark)
        # --- link creation (SNoW's sparse network), after the prediction: the new
        #     links, at their initial weights, join the activation the updates see
        if creating_now:
            for c in range(n_planes):
                ws.new_w[c] = rule.init_w[c]
                ws.new_u[c] = seen * (rule.init_w[c] - rule.absent_w[c]) if averaging else 0.0
            n_open = 0  # the rows that may lack a link: not linked to every target
            for k in range(m):
                if not (ws.dense[k] and p.rows[ws.row_buf[k]].size >= n_targets) and ws.eligible[k]:
                    ws.open_k[n_open] = k
                    n_open += 1
            for c in range(fan):
                if policy == ALL:
                    t = b.a_targets[lo + c] if restricted else c
                else:
                    t = b.y_targets[b.y_indptr[i] + c]
                    if restricted and ws.allowed_stamp[t] != mark:
                        continue
                tag += 1
                if ws.listed[t] == mark:
                    e = ws.head[t]
                    while e >= 0:
                        ws.kmark[ws.qk[e]] = tag
                        if counting_links:
                            p.lcount[p.rows[ws.row_buf[ws.qk[e]]].start + ws.qo[e]] += 1
                        e = ws.nxt[e]
                if counting_links:  # links of complete rows are counted here
                    for k in range(m):
                        if ws.dense[k] and p.rows[ws.row_buf[k]].size >= n_targets:
                            p.lcount[p.rows[ws.row_buf[k]].start + t] += 1
                for o in range(n_open):
                    k = ws.open_k[o]
                    r = ws.row_buf[k]
                    if ws.dense[k]:
                        j = p.rows[r].start + t
                        if t < p.rows[r].cap and p.target[j] == t:
                            if counting_links:
                                p.lcount[j] += 1
                            continue
                        j = append_link(p, W, U, r, t, ws.new_w, ws.new_u, rule.absent_w)
                        if counting_links:
                            p.lcount[j] += 1
                        ws.acc[t] += ws.val_buf[k] * (initial - absent)
                        continue  # a dense row's link is found at offset t: not listed
                    if ws.kmark[k] == tag:
                        continue
                    j = append_link(p, W, U, r, t, ws.new_w, ws.new_u, rule.absent_w)
                    ws.grown[k] = True
                    if counting_links:
                        p.lcount[j] += 1
                    ws.acc[t] += ws.val_buf[k] * (initial - absent)
                    _list_link(ws, &q, t, k, j - p.rows[r].start, mark)
        true_score = 0.0
        violated = False
        if opt.constraint:
            for j in range(b.y_indptr[i], b.y_indptr[i + 1]):
                true_score = ws.acc[b.y_targets[j]]
            for c in range(n_allowed):
                t = b.a_targets[lo + c] if restricted else c
                if ws.stamp[t] != mark and ws.acc[t] >= true_score - opt.pos_thickness:
                    violated = True
                    break
        # --- updates, target by target; the links of the next target to update are
        #     asked for while this one's are (a dense row holds target t at offset t,
        #     in a block of its own that no prefetcher foresees)
        c_next = _next_update(ws, opt, b, lo, restricted, 0, n_allowed, mark, theta,
                              true_score, violated)
        while c_next < n_allowed:
            c = c_next
            t = b.a_targets[lo + c] if restricted else c
            y = _step_sign(ws, opt, t, mark, theta, true_score, violated)
            c_next = _next_update(ws, opt, b, lo, restricted, c + 1, n_allowed, mark, theta,
                                  true_score, violated)
            t_next = -1
            if c_next < n_allowed:
                t_next = b.a_targets[lo + c_next] if restricted else c_next
            # the target's weights on the example's rows, gathered in the rows' order
            # (whatever the pool's layout: a rule sees its entries, and sums them, in
            # one order however the links lie, and on however many threads)
            tag += 1
            for k in range(m):  # dense rows: the link is at offset t
                if ws.dense[k]:
                    r = ws.row_buf[k]
                    if 0 <= t_next < p.rows[r].cap:
                        SNOWPY_PREFETCH(&p.target[p.rows[r].start + t_next])
                    j = p.rows[r].start + t
                    if t < p.rows[r].cap and p.target[j] == t:
                        ws.kmark[k] = tag
                        ws.kslot[k] = j
            if ws.listed[t] == mark:
                e = ws.head[t]
                while e >= 0:
                    k = ws.qk[e]
                    ws.kmark[k] = tag
                    ws.kslot[k] = p.rows[ws.row_buf[k]].start + ws.qo[e]
                    e = ws.nxt[e]
            missing = policy == TOUCHED or (policy == SIGNED and y < 0)
            g = 0
            sqnorm = 0.0
            for k in range(m):
                if ws.kmark[k] == tag:
                    j = ws.kslot[k]
                    if averaging:  # (its sum is written after the rule's step)
                        SNOWPY_PREFETCH(&U[j * n_planes])
                    for o in range(n_planes):
                        ws.wbuf[g * n_planes + o] = W[j * n_planes + o]
                    ws.jbuf[g] = j
                elif missing and ws.eligible[k]:
                    for o in range(n_planes):
                        ws.wbuf[g * n_planes + o] = rule.init_w[o]
                    ws.jbuf[g] = -1
                else:
                    continue
                ws.kbuf[g] = k
                ws.vbuf[g] = ws.val_buf[k]
                sqnorm += ws.val_buf[k] * ws.val_buf[k]
                g += 1
            if g == 0:
                continue
            status = rule.update(ws.wbuf, g, n_planes, rule.S, n_targets, rule.state_size, t,
                                 y, ws.acc[t], ws.vbuf, sqnorm, rule.params, rule.n_params,
                                 rule.user_data)
            if status != 0:
                out.failed = True
                ws.tag = tag
                out.processed = pos
                out.seen = seen
                return out
            for h in range(g):
                for o in range(n_planes):
                    if not _keep_weight(&ws.wbuf[h * n_planes + o], opt, &out.overflows,
                                        &out.underflows):
                        out.nonfinite = True
                        ws.tag = tag
                        out.processed = pos
                        out.seen = seen
                        return out
                j = ws.jbuf[h]
                if j >= 0:
                    for o in range(n_planes):
                        old = W[j * n_planes + o]
                        W[j * n_planes + o] = <weight_t>ws.wbuf[h * n_planes + o]
                        if averaging:  # the change in the storage precision, as numpy
                            U[j * n_planes + o] = <weight_t>(
                                <double>U[j * n_planes + o] + <double>seen
                                * <double>(<weight_t>(W[j * n_planes + o] - old)))
                    continue
                # a missing link the update reached: TOUCHED links a weight the update
                # changed; SIGNED one a demotion took below a missing link's weight
                if policy == TOUCHED:
                    changed = False
                    for o in range(n_planes):
                        if ws.wbuf[h * n_planes + o] != rule.init_w[o]:
                            changed = True
                else:
                    moved = 0.0
                    for o in range(n_planes):
                        moved += rule.planes[o] * ws.wbuf[h * n_planes + o]
                    changed = moved < absent
                if changed:
                    k = ws.kbuf[h]
                    j = append_link(p, W, U, ws.row_buf[k], t, &ws.wbuf[h * n_planes],
                                    ws.new_u, rule.absent_w)
                    ws.grown[k] = True
                    if averaging:
                        for o in range(n_planes):
                            U[j * n_planes + o] = <weight_t>(seen * (
                                <double>W[j * n_planes + o]
                                - (rule.init_w[o] if policy == TOUCHED else rule.absent_w[o])))
            if y > 0:
                counts[2 * t] += 1
            else:
                counts[2 * t + 1] += 1
            out.updates += 1
        # --- rows that link half the targets are laid out densely (when the pool has
        #     the room now; else at a later example)
        for k in range(m):
            if ws.grown[k] and not ws.dense[k]:
                r = ws.row_buf[k]
                if p.rows[r].size >= dense_at and p.meta[USED] + dense_room <= capacity:
                    densify(p, W, U, r, n_targets, rule.absent_w)
        seen += 1
    else:
        pos = b.n_order
    ws.tag = tag
    out.processed = pos
    out.seen = seen
    return out


# ------------------------------------------------------------ checked mode
cdef enum:
    GUARD = 4096           # doubles of guard on each side of a buffer the rule sees
    OUTSIDE_W = 1
    CHANGED_VALS = 2
    CHANGED_PARAMS = 3
    CHANGED_STATE = 4
    OUTSIDE_STATE = 5
    NO_MEMORY = 6

cdef uint64_t CANARY = 0x7FF8DEADBEEFCAFEULL  # a NaN with a payload no rule writes


cdef inline void _fill_guard(double *zone) noexcept nogil:
    cdef int64_t q
    cdef uint64_t *bits = <uint64_t *>zone
    for q in range(GUARD):
        bits[q] = CANARY


cdef inline bint _guard_intact(const double *zone) noexcept nogil:
    cdef int64_t q
    cdef const uint64_t *bits = <const uint64_t *>zone
    for q in range(GUARD):
        if bits[q] != CANARY:
            return False
    return True


cdef double *_guarded(const double *data, int64_t n) noexcept nogil:
    """A copy of ``data[:n]`` between two guard zones (the copy starts at GUARD)."""
    cdef double *buffer = <double *>malloc((2 * GUARD + n + 1) * sizeof(double))
    if buffer == NULL:
        return NULL
    _fill_guard(buffer)
    if n > 0:
        memcpy(buffer + GUARD, data, n * sizeof(double))
    _fill_guard(buffer + GUARD + n)
    return buffer


cdef int guarded_update(double *w, int64_t m, int64_t n_planes, double *state,
                        int64_t n_targets, int64_t state_size, int64_t t, double y,
                        double activation, const double *vals, double sqnorm,
                        const double *params, int64_t n_params,
                        void *user_data) noexcept nogil:
    """The rule's step on copies of its buffers between guard zones; a write outside
    ``w``, or to the example's strengths, the parameters or another target's state, is
    a violation (the step returns -2 and says which)."""
    cdef guard_t *g = <guard_t *>user_data
    cdef int64_t n_w = m * n_planes
    cdef int64_t n_state = n_targets * state_size
    cdef double *gw = _guarded(w, n_w)
    cdef double *gv = _guarded(vals, m)
    cdef double *gp = _guarded(params, n_params)
    cdef double *gs = _guarded(state, n_state)
    cdef int status = -2
    cdef int64_t q
    if gw == NULL or gv == NULL or gp == NULL or gs == NULL:
        g.violation = NO_MEMORY
    else:
        status = g.fn(gw + GUARD, m, n_planes, gs + GUARD, n_targets, state_size, t, y,
                      activation, gv + GUARD, sqnorm, gp + GUARD, n_params, g.user_data)
        if not (_guard_intact(gw) and _guard_intact(gw + GUARD + n_w)):
            g.violation = OUTSIDE_W
        elif memcmp(gv + GUARD, vals, m * sizeof(double)) != 0 \
                or not (_guard_intact(gv) and _guard_intact(gv + GUARD + m)):
            g.violation = CHANGED_VALS
        elif memcmp(gp + GUARD, params, n_params * sizeof(double)) != 0 \
                or not (_guard_intact(gp) and _guard_intact(gp + GUARD + n_params)):
            g.violation = CHANGED_PARAMS
        elif not (_guard_intact(gs) and _guard_intact(gs + GUARD + n_state)):
            g.violation = OUTSIDE_STATE
        else:
            for q in range(n_state):
                if (q < t * state_size or q >= (t + 1) * state_size) \
                        and memcmp(&gs[GUARD + q], &state[q], sizeof(double)) != 0:
                    g.violation = CHANGED_STATE
                    break
        if g.violation:
            g.where = t
            status = -2
        else:
            memcpy(w, gw + GUARD, n_w * sizeof(double))
            if state_size > 0:
                memcpy(state + t * state_size, gs + GUARD + t * state_size,
                       state_size * sizeof(double))
    free(gw)
    free(gv)
    free(gp)
    free(gs)
    return status


_VIOLATIONS = {
    OUTSIDE_W: "wrote outside its weights (w has m rows of the rule's planes)",
    CHANGED_VALS: "changed the example's strengths",
    CHANGED_PARAMS: "changed the rule's parameters",
    CHANGED_STATE: "changed another target's state",
    OUTSIDE_STATE: "wrote outside the rule's state",
    NO_MEMORY: "could not be checked (no memory for the guarded copies)",
}


# ------------------------------------------------------------ the objects
cdef class Links:
    """A link store's arrays as the engine reads and writes them (the pool of
    :mod:`snowpy.network.links`): bound once, used until the store replaces an array.
    ``count``, ``U`` and ``lcount`` may be empty (rows not counted, no averaging, links
    not counted); ``W`` and ``U`` are float32 or float64."""

    def __cinit__(self, rows, count, target, W, U, lcount, meta):
        cdef float[:, ::1] wf, uf
        cdef double[:, ::1] wd, ud
        self._rows = rows
        self._count = count
        self._target = target
        self._lcount = lcount
        self._meta = meta
        self._arrays = (W, U)
        if (count.shape[0] and count.shape[0] != rows.shape[0]) \
                or W.shape[0] != target.shape[0] \
                or (U.shape[0] and U.shape[0] != target.shape[0]) \
                or (lcount.shape[0] and lcount.shape[0] != target.shape[0]):
            raise ValueError("a link store's arrays disagree in length")
        self.pool.rows = &self._rows[0]
        self.pool.count = &self._count[0] if self._count.shape[0] else NULL
        self.pool.target = &self._target[0] if self._target.shape[0] else NULL
        self.pool.lcount = &self._lcount[0] if self._lcount.shape[0] else NULL
        self.pool.meta = &self._meta[0]
        self.pool.capacity = self._target.shape[0]
        self.pool.n_rows_capacity = self._rows.shape[0]
        self.pool.n_planes = W.shape[1]
        self.pool.averaging = U.shape[0] > 0
        self.single = W.dtype.itemsize == 4
        self.Wf = self.Uf = NULL
        self.Wd = self.Ud = NULL
        if self.single:
            wf = W
            self.Wf = &wf[0, 0] if wf.shape[0] and wf.shape[1] else NULL
            if U.shape[0]:
                uf = U
                self.Uf = &uf[0, 0]
        else:
            wd = W
            self.Wd = &wd[0, 0] if wd.shape[0] and wd.shape[1] else NULL
            if U.shape[0]:
                ud = U
                self.Ud = &ud[0, 0]
        if self.pool.n_planes > MAX_PLANES or self.pool.n_planes < 1:
            raise ValueError(f"a rule keeps 1 to {MAX_PLANES} weight planes")

    @property
    def capacity(self):
        """Slots of the pool."""
        return self.pool.capacity


cdef class RuleBinding:
    """A rule as the engine applies it: its kernel (:class:`~snowpy._core.rules.
    UpdateKernel`), packed numbers, plane coefficients, initial and absent weights (as a
    pool of that precision stores them) and per-target state ``S``."""

    def __cinit__(self, UpdateKernel kernel, params, planes, initial_weights,
                  absent_weights, S, bint single, bint checked=False):
        cdef Py_ssize_t q
        cdef Py_ssize_t n = len(planes)
        cdef double value
        cdef double empty_state = 0.0
        if n < 1 or n > MAX_PLANES or len(initial_weights) != n or len(absent_weights) != n:
            raise ValueError(f"a rule keeps 1 to {MAX_PLANES} planes, each with an initial "
                             "and an absent weight")
        self.kernel = kernel
        self._params = params
        self._planes = planes
        self._S = S
        self.rule.update = <update_fn>kernel.fn
        self.rule.user_data = kernel.user_data
        self.rule.params = &self._params[0] if self._params.shape[0] else &empty_state
        self.rule.n_params = self._params.shape[0]
        self.rule.planes = &self._planes[0]
        self.rule.n_planes = n
        self.rule.kind = 0
        if n == 1 and self._planes[0] == 1.0:
            self.rule.kind = 1
        elif n == 2 and self._planes[0] == 1.0 and self._planes[1] == -1.0:
            self.rule.kind = 2
        self.rule.initial = 0.0
        self.rule.absent = 0.0
        for q in range(n):
            value = initial_weights[q]
            self.rule.init_w[q] = <float>value if single else value
            value = absent_weights[q]
            self.rule.absent_w[q] = <float>value if single else value
            self.rule.initial += self._planes[q] * self.rule.init_w[q]
            self.rule.absent += self._planes[q] * self.rule.absent_w[q]
        self.rule.S = &self._S[0, 0] if self._S.shape[0] and self._S.shape[1] else NULL
        self.rule.state_size = self._S.shape[1]
        self.checked = checked
        memset(&self.guard, 0, sizeof(guard_t))
        if checked:  # the step runs on guarded copies of its buffers
            self.guard.fn = <update_fn>kernel.fn
            self.guard.user_data = kernel.user_data
            self.rule.update = guarded_update
            self.rule.user_data = &self.guard

    def violation(self):
        """What a checked rule did outside its arrays (None if nothing), and forget it."""
        if not self.guard.violation:
            return None
        what = _VIOLATIONS.get(self.guard.violation, "did something it may not")
        self.guard.violation = 0
        return IndexError(f"the update kernel {what}, updating target {self.guard.where}: "
                          "it writes outside its arrays")

    @property
    def absent(self):
        """The effective weight of a missing link, as the pool stores it."""
        return self.rule.absent


cdef class Options:
    """How a network trains, resolved once: the link policy (``POLICIES``), eligibility's
    count, whether the rule is multiplicative, the magnitudes kept, the threshold, the
    thick separator, the bias strength, multi-label, constraint classification."""

    def __cinit__(self, int policy, int64_t min_count, bint multiplicative,
                  double min_magnitude, double max_magnitude, double theta,
                  double pos_thickness, double neg_thickness, double bias, bint multilabel,
                  bint constraint):
        self.opt.policy = policy
        self.opt.min_count = min_count
        self.opt.multiplicative = multiplicative
        self.opt.min_magnitude = min_magnitude
        self.opt.max_magnitude = max_magnitude
        self.opt.theta = theta
        self.opt.pos_thickness = pos_thickness
        self.opt.neg_thickness = neg_thickness
        self.opt.bias = bias
        self.opt.multilabel = multilabel
        self.opt.constraint = constraint

    @property
    def theta(self):
        return self.opt.theta

    @property
    def bias(self):
        return self.opt.bias


cdef class Outcome:
    """What a run of the engine did: examples processed, mistakes (before learning),
    target updates, weights clamped (overflows) or raised (underflows), whether a NaN
    stopped it or the rule failed, the examples seen since the network began (the
    averaging clock), and the pool room or link-list room it stopped for (0: none)."""

    def __repr__(self):
        return (f"Outcome(processed={self.processed}, mistakes={self.mistakes}, "
                f"updates={self.updates}, overflows={self.overflows}, "
                f"underflows={self.underflows}, nonfinite={self.nonfinite}, "
                f"failed={self.failed}, seen={self.seen}, need_room={self.need_room}, "
                f"need_queue={self.need_queue})")


cdef Outcome make_outcome(const outcome_t *o):
    cdef Outcome out = Outcome.__new__(Outcome)
    out.processed = o.processed
    out.mistakes = o.mistakes
    out.updates = o.updates
    out.overflows = o.overflows
    out.underflows = o.underflows
    out.nonfinite = o.nonfinite
    out.failed = o.failed
    out.seen = o.seen
    out.need_room = o.need_room
    out.need_queue = o.need_queue
    return out


cdef outcome_t run_epoch(Links links, const rule_t *rule, const options_t *opt,
                         const batch_t *b, work_t *ws, int64_t seen, int64_t *counts,
                         int64_t n_targets) noexcept nogil:
    """The epoch on a pool of either precision."""
    if links.single:
        return epoch(&links.pool, links.Wf, links.Uf, rule, opt, b, ws, seen, counts, n_targets)
    return epoch(&links.pool, links.Wd, links.Ud, rule, opt, b, ws, seen, counts, n_targets)


def run(Links links, RuleBinding rule, Options options, const int64_t[::1] indptr,
        const int32_t[::1] rows, const double[::1] vals, const int64_t[::1] order,
        const int64_t[::1] y_indptr, const int32_t[::1] y_targets,
        const int64_t[::1] a_indptr, const int32_t[::1] a_targets, int64_t seen,
        int64_t[:, ::1] counts, int64_t max_active, double[:, ::1] scores, bint counting,
        bint creating, Workspace workspace=None, double[:, ::1] activations=None):
    """Learn the examples of ``order`` (rows of a CSR matrix whose ``rows`` are pool rows);
    returns an :class:`Outcome`.

    ``counts`` (``int64[targets, 2]``) receives promotions and demotions; with rows in
    ``scores`` (``[len(order), targets]``), each example's scores before learning; with
    ``activations`` (as ``scores``), its raw activations (the targets of one network
    learned in parts, whose mistakes are counted over the parts' activations).
    ``a_indptr`` empty: every target sees every example. ``counting``: rows count their
    activity (data seen for the first time); ``creating``: links may be created. A
    ``workspace`` (for examples of up to ``max_active`` features and every target) is made
    when none is given, and remade larger when an example's link lists need more room.
    """
    cdef batch_t b
    cdef outcome_t o
    cdef outcome_t total
    cdef int64_t n_targets = counts.shape[0]
    cdef int64_t done = 0
    cdef int32_t no_target = 0
    cdef int64_t no_index = 0
    cdef double no_value = 0.0
    if rule.rule.S != NULL and rule._S.shape[0] != n_targets:
        raise ValueError("the rule's state and the counts disagree on the targets")
    if indptr.shape[0] < 1 or y_indptr.shape[0] < indptr.shape[0]:
        raise ValueError("the examples' and the labels' pointers disagree")
    if scores.shape[0] and (scores.shape[0] < order.shape[0] or scores.shape[1] != n_targets):
        raise ValueError("scores must have a row per example and a column per target")
    if activations is not None and (activations.shape[0] < order.shape[0]
                                    or activations.shape[1] != n_targets):
        raise ValueError("activations must have a row per example and a column per target")
    if workspace is None or workspace.w.width < max_active + 2 \
            or workspace.w.n_targets < n_targets or workspace.w.n_planes != rule.rule.n_planes:
        workspace = Workspace(max_active + 1, n_targets, rule.rule.n_planes,
                              16 * (max_active + 2))
    memset(&total, 0, sizeof(outcome_t))
    b.indptr = &indptr[0]
    b.rows = &rows[0] if rows.shape[0] else &no_target
    if vals is None:  # binary rows: every strength is 1
        b.vals = NULL
    elif vals.shape[0] < rows.shape[0]:
        raise ValueError("the rows have fewer strengths than features")
    else:
        b.vals = &vals[0] if vals.shape[0] else &no_value
    b.y_indptr = &y_indptr[0]
    b.y_targets = &y_targets[0] if y_targets.shape[0] else &no_target
    b.a_indptr = &a_indptr[0] if a_indptr.shape[0] else NULL
    b.a_targets = &a_targets[0] if a_targets.shape[0] else &no_target
    b.counting = counting
    b.creating = creating
    while True:
        b.order = &order[done] if done < order.shape[0] else &no_index
        b.n_order = order.shape[0] - done
        b.scores = &scores[done, 0] if scores.shape[0] and done < order.shape[0] else NULL
        b.acc = &activations[done, 0] if activations is not None \
            and activations.shape[0] and done < order.shape[0] else NULL
        with nogil:
            o = run_epoch(links, &rule.rule, &options.opt, &b, &workspace.w, seen,
                       &counts[0, 0] if n_targets else NULL, n_targets)
        done += o.processed
        total.mistakes += o.mistakes
        total.updates += o.updates
        total.overflows += o.overflows
        total.underflows += o.underflows
        seen = o.seen
        if o.failed and rule.checked:
            violation = rule.violation()
            if violation is not None:
                rule.kernel.error = violation
        if o.need_queue == 0 or o.nonfinite or o.failed:
            total.processed = done
            total.nonfinite = o.nonfinite
            total.failed = o.failed
            total.seen = seen
            total.need_room = o.need_room
            return make_outcome(&total)
        # an example with more links than the lists had room for
        workspace = Workspace(max_active + 1, n_targets, rule.rule.n_planes,
                              2 * o.need_queue)
