"""One example at a time, compiled: River's ``learn_one``/``predict_one`` cost what the
example costs.

:class:`OnlineLearner` binds, once, what learning one example needs (the link pool, the
rule, the options, the feature map's arrays and a workspace): a call maps the example's
feature ids to rows (new ids get new rows), runs the epoch on that one example, and
hands back an :class:`~snowpy._core.engine.Outcome`; with a progressive window bound, the
example's scores before learning, and its labels, are written in the window's row the
call names (no copy, no Python per example). :meth:`OnlineLearner.score` scores
an example straight from the weights and the averaging sums (lazy averaging: ``W - U /
seen``), with the arithmetic of the batch path, so the two score alike.
:meth:`OnlineLearner.learn_text` featurises a text (or takes the row its prediction
made), weighs it by document frequency and learns it in one call;
:meth:`OnlineLearner.score_text` featurises, weighs and scores one.

A call that needs room first returns a status instead: the feature map must grow
(:data:`GROW_MAP`), the rows (:data:`GROW_ROWS`), the pool (the outcome's
``need_room``) or the workspace (:data:`GROW_QUEUE`); nothing was learned, the
features already mapped keep their rows, and the caller grows and calls again.
"""

import numpy as np

from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memset

from snowpy._core._hash cimport fibonacci
from snowpy._core.engine cimport (
    Links,
    Options,
    Outcome,
    RuleBinding,
    Workspace,
    batch_t,
    make_outcome,
    outcome_t,
    run_epoch,
)
from snowpy._core.effective cimport delta, plane_t
from snowpy._core.extract cimport OneDocument, WordsRow, weigh_document
from snowpy._core.pool cimport Pool

cdef enum:
    _GROW_MAP = 1
    _GROW_ROWS = 2
    _GROW_QUEUE = 3
    _BEYOND = 4

#: Statuses of :meth:`OnlineLearner.learn`: grow the feature map, the rows, the workspace.
GROW_MAP = _GROW_MAP
GROW_ROWS = _GROW_ROWS
GROW_QUEUE = _GROW_QUEUE


def checked(int64_t[::1] ids, double[::1] vals):
    """Sort an example by id (insertion sort: examples are short); 0 when fine, else 1
    (a negative id or a non-finite strength) or 2 (an id twice)."""
    cdef Py_ssize_t a, b, k
    cdef int64_t i
    cdef double v
    for a in range(1, ids.shape[0]):
        b = a
        while b > 0 and ids[b - 1] > ids[b]:
            i = ids[b - 1]
            ids[b - 1] = ids[b]
            ids[b] = i
            v = vals[b - 1]
            vals[b - 1] = vals[b]
            vals[b] = v
            b -= 1
    for k in range(ids.shape[0]):
        if ids[k] < 0 or not isfinite(vals[k]):
            return 1
        if k and ids[k] == ids[k - 1]:
            return 2
    return 0


cdef inline int _shift_of(Py_ssize_t size) noexcept nogil:
    cdef int log = 0
    while (<Py_ssize_t>1 << log) < size:
        log += 1
    return 64 - log


cdef class OnlineLearner:
    """What learning and scoring one example needs, bound once (see the module).

    Rebuilt by its owner when the store or the feature map replaces an array, or an
    example is wider than the workspace (``width``).
    """

    cdef Links links
    cdef RuleBinding rule
    cdef Options options
    cdef Workspace ws
    cdef object _map
    cdef int32_t *slots32
    cdef int64_t *slots64
    cdef int32_t *rows32
    cdef int64_t *rows64
    cdef Py_ssize_t n_slots
    cdef bint direct
    cdef int64_t n_row_ids
    cdef int64_t[:, ::1] _counts
    cdef readonly int64_t width
    cdef int32_t[::1] _rows
    cdef int64_t[::1] _ids
    cdef double[::1] _vals
    cdef double[:, ::1] _window
    cdef uint8_t[:, ::1] _labelled
    cdef bint windowed
    #: the lowest score of the last example written in the window
    cdef readonly double low

    def __cinit__(self, Links links, RuleBinding rule, Options options, slots, row_ids,
                  int64_t[:, ::1] counts, int64_t width, int64_t queue, bint direct=False,
                  window=None, labelled=None):
        cdef int32_t[::1] s32, r32
        cdef int64_t[::1] s64, r64
        self.links = links
        self.rule = rule
        self.options = options
        self._counts = counts
        self.width = width
        self.ws = Workspace(width, counts.shape[0], rule.rule.n_planes, queue)
        self._map = (slots, row_ids)
        self.slots32 = self.rows32 = NULL
        self.slots64 = self.rows64 = NULL
        if slots.dtype.itemsize == 4:
            s32, r32 = slots, row_ids
            self.slots32, self.rows32 = &s32[0], &r32[0]
        else:
            s64, r64 = slots, row_ids
            self.slots64, self.rows64 = &s64[0], &r64[0]
        self.direct = direct
        self.n_row_ids = row_ids.shape[0]
        self.n_slots = slots.shape[0] if direct else slots.shape[0] // 2
        if direct and self.slots32 == NULL:
            raise ValueError("a direct feature map is a table of int32")
        self._rows = memoryview(bytearray(4 * (width + 1))).cast("i")
        self._ids = memoryview(bytearray(8 * (width + 1))).cast("q")
        self._vals = memoryview(bytearray(8 * (width + 1))).cast("d")
        self.windowed = window is not None
        if self.windowed:  # (a progressive window's scores, and its labels as bytes)
            self._window = window
            self._labelled = labelled
            if self._labelled.shape[0] != self._window.shape[0] or \
                    self._labelled.shape[1] != self._window.shape[1]:
                raise ValueError("a window's scores and labels differ in shape")
        self.low = 0.0

    cdef double *_row_of(self, Py_ssize_t row) except? NULL:
        """Where the scores of an example go: window row ``row`` (-1: nowhere)."""
        if row < 0:
            return NULL
        if not self.windowed or row >= self._window.shape[0] or \
                self._window.shape[1] != self._counts.shape[0]:
            raise ValueError("no window row of the network's targets to write")
        return &self._window[row, 0]

    cdef void _label_row(self, Py_ssize_t row, const int32_t *targets, Py_ssize_t n) noexcept:
        """Window row ``row`` learned: its labels, and its lowest score in ``low``."""
        cdef Py_ssize_t t
        cdef Py_ssize_t width = self._window.shape[1]
        cdef double low = self._window[row, 0] if width else 0.0
        memset(&self._labelled[row, 0], 0, width)
        for t in range(n):
            self._labelled[row, targets[t]] = 1
        for t in range(1, width):
            if self._window[row, t] < low:
                low = self._window[row, t]
        self.low = low

    @property
    def queue(self):
        return self.ws.w.queue

    cdef int64_t _probe(self, const int64_t *ids, Py_ssize_t n, int32_t *rows,
                        int64_t *next_row) noexcept nogil:
        """Rows of ``ids``, new keys getting new rows; how many were mapped (fewer than
        ``n`` when the map would fill beyond half)."""
        cdef Py_ssize_t mask = self.n_slots - 1
        cdef int shift = _shift_of(self.n_slots)
        cdef int64_t limit = self.n_slots // 2
        cdef Py_ssize_t j, slot
        cdef int64_t key, found
        if self.direct:
            for j in range(n):
                key = ids[j]
                if key < 0 or key >= self.n_slots:
                    return -1
                if self.slots32[key]:
                    rows[j] = self.slots32[key]
                    continue
                if next_row[0] > self.n_row_ids:
                    return j
                self.slots32[key] = <int32_t>next_row[0]
                self.rows32[next_row[0] - 1] = <int32_t>key
                rows[j] = <int32_t>next_row[0]
                next_row[0] += 1
            return n
        for j in range(n):
            key = ids[j]
            slot = fibonacci(key, mask, shift)
            if self.slots32 != NULL:
                while self.slots32[2 * slot] != key and self.slots32[2 * slot] != -1:
                    slot = (slot + 1) & mask
                found = self.slots32[2 * slot]
            else:
                while self.slots64[2 * slot] != key and self.slots64[2 * slot] != -1:
                    slot = (slot + 1) & mask
                found = self.slots64[2 * slot]
            if found == key:
                rows[j] = <int32_t>(self.slots32[2 * slot + 1] if self.slots32 != NULL
                                    else self.slots64[2 * slot + 1])
                continue
            if next_row[0] >= limit:
                return j
            if self.slots32 != NULL:
                self.slots32[2 * slot] = <int32_t>key
                self.slots32[2 * slot + 1] = <int32_t>next_row[0]
                self.rows32[next_row[0] - 1] = <int32_t>key
            else:
                self.slots64[2 * slot] = key
                self.slots64[2 * slot + 1] = next_row[0]
                self.rows64[next_row[0] - 1] = key
            rows[j] = <int32_t>next_row[0]
            next_row[0] += 1
        return n

    cdef int _learn(self, const int64_t *ids, const double *vals, Py_ssize_t n,
                    const int32_t *targets, Py_ssize_t n_targets_shown, int64_t *next_row,
                    int64_t seen, double *scores, outcome_t *out) noexcept nogil:
        cdef int32_t *rows = &self._rows[0]
        cdef int64_t indptr[2]
        cdef int64_t y_indptr[2]
        cdef int64_t order = 0
        cdef int64_t mapped
        cdef batch_t b
        memset(out, 0, sizeof(outcome_t))
        out.seen = seen
        mapped = self._probe(ids, n, rows, next_row)
        if mapped < 0:
            return _BEYOND
        if mapped < n:
            return _GROW_MAP
        if next_row[0] > self.links.pool.n_rows_capacity:
            return _GROW_ROWS
        indptr[0] = 0
        indptr[1] = n
        y_indptr[0] = 0
        y_indptr[1] = n_targets_shown
        b.indptr = indptr
        b.rows = rows
        b.vals = vals
        b.order = &order
        b.n_order = 1
        b.y_indptr = y_indptr
        b.y_targets = targets
        b.a_indptr = NULL
        b.a_targets = NULL
        b.scores = scores
        b.counting = True
        b.creating = True
        b.acc = NULL
        out[0] = run_epoch(self.links, &self.rule.rule, &self.options.opt, &b, &self.ws.w,
                           seen, &self._counts[0, 0] if self._counts.shape[0] else NULL,
                           self._counts.shape[0])
        if out.need_queue:
            return _GROW_QUEUE
        return 0

    def learn(self, const int64_t[::1] ids, const double[::1] vals,
              const int32_t[::1] targets, int64_t next_row, int64_t seen, Py_ssize_t row):
        """Learn one example (ids sorted and unique, at most ``width``):
        ``(status, next_row, outcome)``; window row ``row`` (-1: none) receives its
        scores before learning and its labels (:attr:`low`, its lowest score)."""
        cdef outcome_t out
        cdef int status
        cdef int32_t no_target = 0
        cdef double no_value = 0.0
        cdef int64_t no_id = 0
        cdef double *scores = self._row_of(row)
        if ids.shape[0] > self.width:
            raise ValueError("the example is wider than the workspace")
        with nogil:
            status = self._learn(&ids[0] if ids.shape[0] else &no_id,
                                 &vals[0] if vals.shape[0] else &no_value, ids.shape[0],
                                 &targets[0] if targets.shape[0] else &no_target,
                                 targets.shape[0], &next_row, seen, scores, &out)
        return self._done(status, next_row, &out, row, targets)

    cdef object _done(self, int status, int64_t next_row, outcome_t *out, Py_ssize_t row,
                      const int32_t[::1] targets):
        if status == _BEYOND:
            raise ValueError("a feature id is beyond the network's features")
        self._checked_failure(out)
        if row >= 0 and status == 0 and out.processed:
            self._label_row(row, &targets[0] if targets.shape[0] else NULL,
                            targets.shape[0])
        return status, next_row, make_outcome(out)

    cdef void _checked_failure(self, const outcome_t *out):
        cdef object violation
        if out.failed and self.rule.checked:
            violation = self.rule.violation()
            if violation is not None:
                self.rule.kernel.error = violation

    def learn_text(self, WordsRow words, const uint8_t[::1] raw, const int32_t[::1] targets,
                   int64_t next_row, int64_t seen, Py_ssize_t row, OneDocument weigher=None,
                   int64_t serial=-1):
        """Featurise one document's UTF-8 bytes with ``words`` (or take the row ``words``
        made ``serial``-th, when it has made none since), weigh it by document frequency
        with ``weigher`` (None: as assembled), counting the document first, and learn it,
        in one call: ``(status, next_row, outcome, weighed)``, or None when nothing was
        done here (a buffer too small, invalid bytes, a row wider than the workspace, a
        count without room): the caller takes the two-call path. ``weighed`` is None, or
        when the document was counted but must wait for room to be learned, its weighed
        row ``(ids, strengths)``: learn it with :meth:`learn` (counting it again would
        count it twice). ``row`` as :meth:`learn` takes it."""
        cdef outcome_t out
        cdef int status
        cdef int64_t invalid = 0
        cdef int64_t nnz
        cdef int64_t k
        cdef int32_t no_target = 0
        cdef uint8_t empty = 0
        cdef double *scores = self._row_of(row)
        cdef double *vals
        if serial >= 0 and serial == words.serial and words.last_nnz >= 0:
            nnz = words.last_nnz  # (the row is in the buffers: predict, then learn)
        else:
            if raw.shape[0] > words.size:
                return None
            with nogil:
                nnz = words.row_of(&raw[0] if raw.shape[0] else &empty, raw.shape[0],
                                   &invalid)
            if nnz < 0 or invalid:
                return None
        if nnz > self.width:
            return None
        with nogil:
            for k in range(nnz):
                self._ids[k] = words._indices[k]
        vals = &words._values[0]
        if weigher is not None:
            with nogil:
                nnz = weigh_document(&self._ids[0], vals, nnz, &weigher.table[0],
                                     &weigher.row_ids[0], weigher.row_ids.shape[0],
                                     &weigher.counts[0], weigher.counts.shape[0],
                                     weigher.factors_at, weigher.factors.shape[0],
                                     &weigher.next_row, &weigher.documents, True,
                                     weigher.norm, &self._ids[0], &self._vals[0])
            if nnz < 0:
                return None
            vals = &self._vals[0]
        with nogil:
            status = self._learn(&self._ids[0], vals, nnz,
                                 &targets[0] if targets.shape[0] else &no_target,
                                 targets.shape[0], &next_row, seen, scores, &out)
        weighed = None
        if weigher is not None and (status != 0 or not out.processed):
            weighed = (np.asarray(self._ids[:nnz]).copy(), np.asarray(self._vals[:nnz]).copy())
        return self._done(status, next_row, &out, row, targets) + (weighed,)

    def score(self, const int64_t[::1] ids, const double[::1] vals, double seen,
              double absent, bint round32, double bias, double theta, double[::1] out):
        """Scores of one example into ``out``; returns the best target (the first of
        ties). Features never seen weigh a missing link's weight."""
        cdef Py_ssize_t best
        if ids.shape[0] > self.width:
            raise ValueError("the example is wider than the workspace")
        with nogil:
            best = self._score(&ids[0] if ids.shape[0] else NULL,
                               &vals[0] if ids.shape[0] else NULL, ids.shape[0], seen,
                               absent, round32, bias, theta, &out[0], out.shape[0])
        return best

    def score_text(self, WordsRow words, const uint8_t[::1] raw, OneDocument weigher,
                   double seen, double absent, bint round32, double bias, double theta,
                   double[::1] out):
        """Featurise one document's UTF-8 bytes with ``words``, weigh its row by document
        frequency with ``weigher`` (None: as assembled; nothing counted) and score it into
        ``out``, in one call: the best target, or -1 when it was not scored here (a
        buffer too small, invalid bytes, a row wider than the workspace): the caller
        takes the two-call path. The scores are :meth:`score`'s of the row the two calls
        make, to the bit; the row stays in ``words``' buffers (:meth:`learn_text`)."""
        cdef int64_t invalid = 0
        cdef int64_t nnz, k
        cdef int64_t next_row = 0
        cdef int64_t documents
        cdef uint8_t empty = 0
        cdef Py_ssize_t best
        cdef double *vals
        if raw.shape[0] > words.size:
            return -1
        with nogil:
            nnz = words.row_of(&raw[0] if raw.shape[0] else &empty, raw.shape[0], &invalid)
        if nnz < 0 or invalid or nnz > self.width:
            return -1
        with nogil:
            for k in range(nnz):
                self._ids[k] = words._indices[k]
            vals = &words._values[0]
            if weigher is not None and nnz:
                documents = weigher.documents
                nnz = weigh_document(&self._ids[0], vals, nnz, &weigher.table[0],
                                     &weigher.row_ids[0], weigher.row_ids.shape[0],
                                     &weigher.counts[0], weigher.counts.shape[0],
                                     weigher.factors_at, weigher.factors.shape[0], &next_row,
                                     &documents, False, weigher.norm, &self._ids[0],
                                     &self._vals[0])
                vals = &self._vals[0]
            best = self._score(&self._ids[0], vals, nnz, seen, absent, round32, bias, theta,
                               &out[0], out.shape[0])
        return best

    cdef Py_ssize_t _score(self, const int64_t *ids, const double *vals, Py_ssize_t n,
                           double seen, double absent, bint round32, double bias,
                           double theta, double *out, Py_ssize_t n_out) noexcept nogil:
        """The scores of ``n`` features (ids sorted, unique) into ``out``; the best."""
        cdef int32_t *rows = &self._rows[0]
        cdef Py_ssize_t mask = self.n_slots - 1
        cdef int shift = _shift_of(self.n_slots)
        cdef Py_ssize_t j, slot, best, t
        cdef int64_t key
        for j in range(n):
            key = ids[j]
            rows[j] = -1
            if self.direct:
                if 0 <= key < self.n_slots and self.slots32[key]:
                    rows[j] = self.slots32[key]
                continue
            slot = fibonacci(key, mask, shift)
            if self.slots32 != NULL:
                while self.slots32[2 * slot] != key and self.slots32[2 * slot] != -1:
                    slot = (slot + 1) & mask
                if self.slots32[2 * slot] == key:
                    rows[j] = self.slots32[2 * slot + 1]
            else:
                while self.slots64[2 * slot] != key and self.slots64[2 * slot] != -1:
                    slot = (slot + 1) & mask
                if self.slots64[2 * slot] == key:
                    rows[j] = <int32_t>self.slots64[2 * slot + 1]
        if self.links.single:
            _score_one(&self.links.pool, self.links.Wf, self.links.Uf, &self.rule.rule.planes[0],
                       self.rule.rule.n_planes, rows, vals, n, seen, absent, round32, bias,
                       theta, out, n_out)
        else:
            _score_one(&self.links.pool, self.links.Wd, self.links.Ud, &self.rule.rule.planes[0],
                       self.rule.rule.n_planes, rows, vals, n, seen, absent, round32, bias,
                       theta, out, n_out)
        best = 0
        for t in range(1, n_out):
            if out[t] > out[best]:
                best = t
        return best


cdef void _score_one(const Pool *p, const plane_t *W, const plane_t *U, const double *planes,
                     int64_t n_planes, const int32_t *rows, const double *vals, Py_ssize_t n,
                     double seen, double absent, bint round32, double bias, double theta,
                     double *out, Py_ssize_t n_targets) noexcept nogil:
    """The arithmetic, in the order, of the batch path's effective weights and scoring:
    one example scores exactly as a batch scores it."""
    cdef bint averaging = p.averaging and seen > 0
    cdef Py_ssize_t t, k
    cdef int64_t r, first, j, stop
    cdef bint is_dense
    cdef double v, vsum, base
    for t in range(n_targets):
        out[t] = 0.0
    vsum = bias
    for k in range(-1, n):
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
        first = p.rows[r].start
        is_dense = p.rows[r].dense == 1
        stop = first + ((p.rows[r].cap if p.rows[r].cap < n_targets else n_targets) if is_dense
                        else p.rows[r].size)
        for j in range(first, stop):
            t = j - first if is_dense else p.target[j]
            out[t] += v * delta(W, U, j, n_planes, planes, seen, averaging, round32, absent)
    base = absent * vsum - theta
    for t in range(n_targets):
        out[t] += base
