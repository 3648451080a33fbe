"""From a corpus file's bytes to rows of features, compiled: no Python object per line.

:func:`parse_lines` reads a piece of a ``label<TAB>text`` or fastText file (complete
lines), finds each line's label(s) and text, hashes the text for the shuffling key
(:mod:`snowpy.text.keys`), and tokenises, extracts word n-grams and assembles the rows
as the front end does for the same texts (the same tokeniser, extractors and rows:
``tests/test_files.py`` holds the two to the same features). Labels come back as the
piece's own table of raw bytes; the caller decodes and merges them.

The reader takes clean files only. A line the Python reader would treat in a way of
its own (bytes that are not UTF-8, a malformed line, an empty label, whitespace
outside ASCII where it splits, a NUL in a label) stops the piece with an *anomaly*
naming the line, and the caller reads the whole file with the Python reader, which
reports, skips or replaces exactly as it always does.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

import numpy as np

from snowpy._core._hash cimport murmur3_64
from snowpy._core.extract cimport Found, Stream, assemble_into, words_into
from snowpy._core.tokenize cimport Tables, bind_tables, tokenize_spans


cdef extern from "string.h" nogil:
    const void *memchr(const void *s, int c, size_t n)

cdef enum:
    TSV = 0
    FASTTEXT = 1
    # anomalies
    OK = 0
    NOT_UTF8 = 1
    MALFORMED = 2
    EMPTY_LABEL = 3
    NO_LABEL = 4
    SEVERAL_LABELS = 5
    ODD_SPACE = 6
    LABEL_CONTROL = 7
    NO_MEMORY = 8
    EMPTY_TEXT = 9
    LONG_DOCUMENT = 10

#: Why a piece stopped (the caller reads the file in Python instead).
ANOMALIES = {NOT_UTF8: "bytes that are not UTF-8", MALFORMED: "a line without a tab",
             EMPTY_LABEL: "an empty label", NO_LABEL: "a line without a label",
             SEVERAL_LABELS: "several labels on a single-label line",
             ODD_SPACE: "whitespace outside ASCII", LABEL_CONTROL: "a control byte in a label",
             NO_MEMORY: "no memory", EMPTY_TEXT: "an empty text",
             LONG_DOCUMENT: "a document over the size bound"}

#: Text read per pass of the front end, as the chunk pipeline's default.
cdef int64_t CHUNK = 1 << 20

cdef uint64_t TEXT_SEED = 0x5EED


# ------------------------------------------------------------------ growable arrays
cdef struct Vec:
    char *p
    int64_t n
    int64_t cap
    int64_t item


cdef inline int vec_init(Vec *v, int64_t item, int64_t cap) noexcept nogil:
    v.item = item
    v.n = 0
    v.cap = cap if cap > 16 else 16
    v.p = <char *>malloc(v.cap * item)
    return 0 if v.p != NULL else -1


cdef inline int vec_reserve(Vec *v, int64_t more) noexcept nogil:
    cdef int64_t cap = v.cap
    cdef char *grown
    if v.n + more <= cap:
        return 0
    while cap < v.n + more:
        cap *= 2
    grown = <char *>realloc(v.p, cap * v.item)
    if grown == NULL:
        return -1
    v.p = grown
    v.cap = cap
    return 0


cdef inline int push64(Vec *v, int64_t value) noexcept nogil:
    if vec_reserve(v, 1) != 0:
        return -1
    (<int64_t *>v.p)[v.n] = value
    v.n += 1
    return 0


cdef inline int pushu64(Vec *v, uint64_t value) noexcept nogil:
    if vec_reserve(v, 1) != 0:
        return -1
    (<uint64_t *>v.p)[v.n] = value
    v.n += 1
    return 0


cdef inline int push32(Vec *v, int32_t value) noexcept nogil:
    if vec_reserve(v, 1) != 0:
        return -1
    (<int32_t *>v.p)[v.n] = value
    v.n += 1
    return 0


# ----------------------------------------------------------------------- labels
cdef struct LabelTable:
    # the piece's labels: raw byte spans of the piece, found by their hash
    int64_t *slots          # label number + 1, 0 empty
    uint64_t *hashes
    int64_t mask
    Vec begins              # int64: each label's first occurrence
    Vec ends


cdef int labels_init(LabelTable *t) noexcept nogil:
    t.mask = 63
    t.slots = <int64_t *>malloc(64 * sizeof(int64_t))
    t.hashes = <uint64_t *>malloc(64 * sizeof(uint64_t))
    if t.slots == NULL or t.hashes == NULL:
        return -1
    memset(t.slots, 0, 64 * sizeof(int64_t))
    if vec_init(&t.begins, 8, 16) != 0 or vec_init(&t.ends, 8, 16) != 0:
        return -1
    return 0


cdef void labels_free(LabelTable *t) noexcept nogil:
    free(t.slots)
    free(t.hashes)
    free(t.begins.p)
    free(t.ends.p)


cdef int labels_grow(LabelTable *t) noexcept nogil:
    cdef int64_t size = 2 * (t.mask + 1)
    cdef int64_t *slots = <int64_t *>malloc(size * sizeof(int64_t))
    cdef uint64_t *hashes = <uint64_t *>malloc(size * sizeof(uint64_t))
    cdef int64_t s, slot
    if slots == NULL or hashes == NULL:
        free(slots)
        free(hashes)
        return -1
    memset(slots, 0, size * sizeof(int64_t))
    for s in range(t.mask + 1):
        if t.slots[s]:
            slot = <int64_t>(t.hashes[s] & <uint64_t>(size - 1))
            while slots[slot]:
                slot = (slot + 1) & (size - 1)
            slots[slot] = t.slots[s]
            hashes[slot] = t.hashes[s]
    free(t.slots)
    free(t.hashes)
    t.slots = slots
    t.hashes = hashes
    t.mask = size - 1
    return 0


cdef int64_t label_id(LabelTable *t, const uint8_t *data, int64_t begin,
                      int64_t end) noexcept nogil:
    """The number of the label ``data[begin:end]`` (a new one for bytes not seen)."""
    cdef uint64_t h = murmur3_64(data + begin, end - begin, 0x1ABE1)
    cdef int64_t slot = <int64_t>(h & <uint64_t>t.mask)
    cdef int64_t number, b, e
    while t.slots[slot]:
        if t.hashes[slot] == h:
            number = t.slots[slot] - 1
            b = (<int64_t *>t.begins.p)[number]
            e = (<int64_t *>t.ends.p)[number]
            if e - b == end - begin and memcmp(data + b, data + begin, end - begin) == 0:
                return number
        slot = (slot + 1) & t.mask
    number = t.begins.n
    if push64(&t.begins, begin) != 0 or push64(&t.ends, end) != 0:
        return -1
    t.slots[slot] = number + 1
    t.hashes[slot] = h
    if 2 * t.begins.n > t.mask:
        if labels_grow(t) != 0:
            return -1
    return number


# ----------------------------------------------------------------- line parsing
cdef inline bint _ascii_space(uint8_t b) noexcept nogil:
    """str.isspace for ASCII: tab, line feed, vertical tab, form feed, carriage return,
    the file, group, record and unit separators, and space."""
    return b == 32 or (9 <= b <= 13) or (28 <= b <= 31)


cdef inline int _odd_space_at(const uint8_t *p, int64_t n) noexcept nogil:
    """The length of the whitespace outside ASCII that ``p[:n]`` starts with (U+0085,
    U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, which
    str.split splits at), 0 if none."""
    if n >= 2 and p[0] == 0xC2 and (p[1] == 0x85 or p[1] == 0xA0):
        return 2
    if n >= 3:
        if p[0] == 0xE1 and p[1] == 0x9A and p[2] == 0x80:
            return 3
        if p[0] == 0xE2 and p[1] == 0x80 and (
                p[2] <= 0x8A or p[2] == 0xA8 or p[2] == 0xA9 or p[2] == 0xAF):
            return 3
        if p[0] == 0xE2 and p[1] == 0x81 and p[2] == 0x9F:
            return 3
        if p[0] == 0xE3 and p[1] == 0x80 and p[2] == 0x80:
            return 3
    return 0


cdef inline bint _odd_space(const uint8_t *p, int64_t n) noexcept nogil:
    """Whether ``p[:n]`` holds whitespace outside ASCII anywhere."""
    cdef int64_t i
    for i in range(n):
        if p[i] >= 0xC2 and _odd_space_at(p + i, n - i):
            return True
    return False


cdef inline bint _blank(const uint8_t *p, int64_t n) noexcept nogil:
    """Whether ``p[:n]`` is whitespace only, as str.isspace sees it (a text the Python
    reader calls empty: a no-break space alone is one)."""
    cdef int64_t i = 0
    cdef int width
    while i < n:
        if _ascii_space(p[i]):
            i += 1
            continue
        width = _odd_space_at(p + i, n - i)
        if width == 0:
            return False
        i += width
    return True


cdef struct Parse:
    # what a piece's lines hold, before the front end reads the texts
    int fmt
    bint multilabel
    int64_t max_document     # the longest text read here (the Python reader reports more)
    int64_t blank            # blank lines skipped
    const uint8_t *prefix
    int64_t prefix_len
    Vec text_begins          # int64
    Vec text_ends            # int64
    Vec label_ptr            # int64, n_docs + 1
    Vec label_ids            # int32
    Vec text_hashes          # uint64
    LabelTable labels
    uint8_t *scratch         # fastText: the words joined by single spaces
    int64_t scratch_cap
    int anomaly
    int64_t anomaly_line
    int64_t lines


cdef int _tsv_line(Parse *s, const uint8_t *data, int64_t begin, int64_t end) noexcept nogil:
    """One ``label<TAB>text`` line (blank lines are skipped by the caller)."""
    cdef const void *tab = memchr(data + begin, 9, end - begin)
    cdef int64_t t, lb, le, q, number
    if tab == NULL:
        return MALFORMED
    t = <const uint8_t *>tab - data
    lb = begin
    le = t
    while lb < le and _ascii_space(data[lb]):
        lb += 1
    while le > lb and _ascii_space(data[le - 1]):
        le -= 1
    if le == lb:
        return EMPTY_LABEL
    for q in range(lb, le):
        if data[q] < 32:
            return LABEL_CONTROL
    number = label_id(&s.labels, data, lb, le)
    if number < 0:
        return NO_MEMORY
    if push32(&s.label_ids, <int32_t>number) != 0 or push64(&s.label_ptr, s.label_ids.n) != 0:
        return NO_MEMORY
    if push64(&s.text_begins, t + 1) != 0 or push64(&s.text_ends, end) != 0:
        return NO_MEMORY
    if pushu64(&s.text_hashes, murmur3_64(data + t + 1, end - t - 1, TEXT_SEED)) != 0:
        return NO_MEMORY
    return OK


cdef int _fasttext_line(Parse *s, const uint8_t *data, int64_t begin,
                        int64_t end) noexcept nogil:
    """One fastText line: ``__label__a [__label__b ...] text``."""
    cdef int64_t i = begin
    cdef int64_t w, n_labels = 0, length = 0, number
    cdef uint8_t *grown
    if _odd_space(data + begin, end - begin):
        return ODD_SPACE
    while True:  # the labels: the first words that start with the prefix
        while i < end and _ascii_space(data[i]):
            i += 1
        if end - i < s.prefix_len or memcmp(data + i, s.prefix, s.prefix_len) != 0:
            break
        w = i
        while w < end and not _ascii_space(data[w]):
            w += 1
        if w == i + s.prefix_len:
            return EMPTY_LABEL
        number = label_id(&s.labels, data, i + s.prefix_len, w)
        if number < 0 or push32(&s.label_ids, <int32_t>number) != 0:
            return NO_MEMORY
        n_labels += 1
        i = w
    if n_labels == 0:
        return NO_LABEL
    if n_labels > 1 and not s.multilabel:
        return SEVERAL_LABELS
    if push64(&s.label_ptr, s.label_ids.n) != 0:
        return NO_MEMORY
    if push64(&s.text_begins, i) != 0 or push64(&s.text_ends, end) != 0:
        return NO_MEMORY
    # the text as the Python reader makes it: the words joined by single spaces
    if end - i + 1 > s.scratch_cap:
        grown = <uint8_t *>realloc(s.scratch, 2 * (end - i) + 64)
        if grown == NULL:
            return NO_MEMORY
        s.scratch = grown
        s.scratch_cap = 2 * (end - i) + 64
    while i < end:
        while i < end and _ascii_space(data[i]):
            i += 1
        if i == end:
            break
        if length:
            s.scratch[length] = 32
            length += 1
        while i < end and not _ascii_space(data[i]):
            s.scratch[length] = data[i]
            length += 1
            i += 1
    if pushu64(&s.text_hashes, murmur3_64(s.scratch, length, TEXT_SEED)) != 0:
        return NO_MEMORY
    return OK


cdef int _lines(Parse *s, const uint8_t *data, int64_t size) noexcept nogil:
    """Every line of ``data`` (complete lines: the last may lack its line feed)."""
    cdef int64_t begin = 0
    cdef int64_t end, stop, q
    cdef const void *found
    cdef bint blank
    cdef int status
    cdef int64_t tb, te
    while begin < size:
        found = memchr(data + begin, 10, size - begin)
        stop = size if found == NULL else <const uint8_t *>found - data
        s.lines += 1
        end = stop
        while end > begin and (data[end - 1] == 13 or data[end - 1] == 10):
            end -= 1
        blank = True
        for q in range(begin, end):
            if not _ascii_space(data[q]):
                blank = False
                break
        status = OK
        if blank:
            s.blank += 1
        else:
            status = _tsv_line(s, data, begin, end) if s.fmt == TSV else \
                _fasttext_line(s, data, begin, end)
            if status == OK:  # empty and over-long texts: reported by the Python reader
                tb = (<int64_t *>s.text_begins.p)[s.text_begins.n - 1]
                te = (<int64_t *>s.text_ends.p)[s.text_ends.n - 1]
                if te - tb > s.max_document:
                    status = LONG_DOCUMENT
                elif _blank(data + tb, te - tb):
                    status = EMPTY_TEXT
        if status != OK:
            s.anomaly = status
            s.anomaly_line = s.lines
            return status
        begin = stop + 1
    return OK


# --------------------------------------------------------------- the front end
cdef struct Front:
    Tables tables
    int64_t n_segments
    int64_t *min_n
    int64_t *max_n
    uint32_t *seeds
    int64_t per_token
    int64_t mask
    int mode
    bint l2
    int bits


cdef struct Out:
    Vec indptr               # int64
    Vec indices              # int32
    Vec data                 # double (unless binary)
    bint binary


cdef struct Scratch:
    # the front end's buffers, kept from chunk to chunk (fresh pages cost more than the
    # work: a chunk's buffers are tens of megabytes)
    int64_t size_cap
    int64_t docs_cap
    int64_t room_cap
    uint8_t *text
    int64_t *starts
    int64_t *token_ends
    int64_t *doc_ptr
    int64_t *invalid
    int64_t *ptrs
    int64_t *indptr
    int32_t *ids
    int32_t *scratch
    int32_t *tmp
    int64_t *counts


cdef void scratch_free(Scratch *w) noexcept nogil:
    free(w.text)
    free(w.starts)
    free(w.token_ends)
    free(w.doc_ptr)
    free(w.invalid)
    free(w.ptrs)
    free(w.indptr)
    free(w.ids)
    free(w.scratch)
    free(w.tmp)
    free(w.counts)
    memset(w, 0, sizeof(Scratch))


cdef int scratch_fit(Scratch *w, int64_t size, int64_t n_docs, int64_t room,
                     int64_t n_segments) noexcept nogil:
    """Buffers for ``size`` bytes of text in ``n_docs`` documents, ``room`` ids."""
    if size > w.size_cap or w.text == NULL:
        free(w.text)
        free(w.starts)
        free(w.token_ends)
        w.size_cap = size + size // 4 + 64
        w.text = <uint8_t *>malloc(2 * w.size_cap + 1)
        w.starts = <int64_t *>malloc((w.size_cap + 1) * sizeof(int64_t))
        w.token_ends = <int64_t *>malloc((w.size_cap + 1) * sizeof(int64_t))
    if n_docs > w.docs_cap or w.doc_ptr == NULL:
        free(w.doc_ptr)
        free(w.invalid)
        free(w.ptrs)
        free(w.indptr)
        w.docs_cap = n_docs + n_docs // 4 + 16
        w.doc_ptr = <int64_t *>malloc((w.docs_cap + 1) * sizeof(int64_t))
        w.invalid = <int64_t *>malloc((w.docs_cap + 1) * sizeof(int64_t))
        w.ptrs = <int64_t *>malloc(n_segments * (w.docs_cap + 1) * sizeof(int64_t))
        w.indptr = <int64_t *>malloc((w.docs_cap + 1) * sizeof(int64_t))
    if room > w.room_cap or w.ids == NULL:
        free(w.ids)
        free(w.scratch)
        free(w.tmp)
        free(w.counts)
        w.room_cap = room + room // 4 + 64
        w.ids = <int32_t *>malloc(w.room_cap * sizeof(int32_t))
        w.scratch = <int32_t *>malloc(w.room_cap * sizeof(int32_t))
        w.tmp = <int32_t *>malloc(w.room_cap * sizeof(int32_t))
        w.counts = <int64_t *>malloc((2 * w.room_cap + 2) * sizeof(int64_t))
    if w.text == NULL or w.starts == NULL or w.token_ends == NULL or w.doc_ptr == NULL \
            or w.invalid == NULL or w.ptrs == NULL or w.indptr == NULL or w.ids == NULL \
            or w.scratch == NULL or w.tmp == NULL or w.counts == NULL:
        return -1
    return 0


cdef int _features(const Front *f, const uint8_t *data, const int64_t *begins,
                   const int64_t *ends, int64_t n_docs, Out *out, Scratch *w,
                   int64_t *invalid_doc) noexcept nogil:
    """Tokenise, extract and assemble ``n_docs`` texts; appends their rows to ``out``.
    ``invalid_doc``: the first document holding bytes that are not UTF-8 (-1: none)."""
    cdef int64_t size = 0
    cdef int64_t d, n_tokens = 0, used, count, written, nnz, base, q, room
    cdef Py_ssize_t seg
    cdef Stream stream
    cdef Found found
    for d in range(n_docs):
        size += ends[d] - begins[d]
    room = (size + n_docs + 1) * f.per_token + 16
    if scratch_fit(w, size, n_docs, room, f.n_segments) != 0:
        return NO_MEMORY
    used = tokenize_spans(data, begins, ends, n_docs, &f.tables, w.text, w.starts,
                          w.token_ends, w.doc_ptr, w.invalid, &n_tokens)
    invalid_doc[0] = -1
    for d in range(n_docs):
        if w.invalid[d]:
            invalid_doc[0] = d
            return NOT_UTF8
    stream.text = w.text
    stream.starts = w.starts
    stream.ends = w.token_ends
    stream.doc_ptr = w.doc_ptr
    stream.n_docs = n_docs
    stream.n_tokens = n_tokens
    found.names = False
    found.arena = NULL
    found.arena_size = 0
    found.spans = NULL
    found.spans_capacity = 0
    count = 0
    for seg in range(f.n_segments):
        found.ids = w.ids + count
        found.capacity = room - count
        found.ptr = w.ptrs + seg * (n_docs + 1)
        written = words_into(&stream, f.min_n[seg], f.max_n[seg], f.seeds[seg], f.mask,
                             &found)
        if written < 0:
            return NO_MEMORY
        for d in range(n_docs + 1):  # (the pointers into ids, this segment's at count)
            w.ptrs[seg * (n_docs + 1) + d] += count
        count += written
    if vec_reserve(&out.indices, count) != 0 or vec_reserve(&out.indptr, n_docs) != 0 \
            or (not out.binary and vec_reserve(&out.data, count) != 0):
        return NO_MEMORY
    nnz = assemble_into(w.ids, w.ptrs, f.n_segments, n_docs, f.mode, f.l2, f.bits, w.indptr,
                        (<int32_t *>out.indices.p) + out.indices.n,
                        NULL if out.binary else (<double *>out.data.p) + out.data.n,
                        w.scratch, w.tmp, w.counts)
    base = out.indices.n
    for q in range(1, n_docs + 1):
        (<int64_t *>out.indptr.p)[out.indptr.n] = base + w.indptr[q]
        out.indptr.n += 1
    out.indices.n += nnz
    if not out.binary:
        out.data.n += nnz
    return OK


def parse_lines(const uint8_t[::1] data, int fmt, bint multilabel, bytes prefix,
                unicode_tables, ascii_word, bint lowercase, bint strip_marks, segments,
                int mode, bint l2, int bits, int64_t max_document):
    """Read every line of ``data`` (a piece of a file, complete lines) as ``fmt`` (0:
    ``label<TAB>text``, 1: fastText with ``prefix``) and featurise its texts with the
    word n-gram front end (``segments``: ``(min_n, max_n, seed)`` per extractor). Blank
    lines are counted (``blank``); an empty text or one longer than ``max_document``
    bytes stops the piece (the Python reader reports them).

    Returns a dict: ``lines`` read, the rows (``indptr``, ``indices``, ``data``: None for
    binary values), ``label_ptr`` and ``label_ids`` (each document's labels, numbers of
    ``labels``, the piece's raw label bytes), ``text_hashes`` (the text part of each
    document's key) and ``anomaly`` (None, or ``(why, line)``: the piece stopped there).
    """
    cdef Parse s
    cdef Front f
    cdef Out out
    cdef Scratch w
    cdef const uint8_t *prefix_p = prefix
    cdef int64_t n_docs, d, first, stop, chunk_bytes
    cdef int64_t invalid_doc = -1
    cdef int status = OK
    cdef Py_ssize_t q
    cdef const uint8_t *base = &data[0] if data.shape[0] else NULL
    memset(&s, 0, sizeof(Parse))
    memset(&w, 0, sizeof(Scratch))
    memset(&f, 0, sizeof(Front))
    memset(&out, 0, sizeof(Out))
    s.fmt = fmt
    s.multilabel = multilabel
    s.max_document = max_document
    s.prefix = prefix_p
    s.prefix_len = len(prefix)
    bind_tables(unicode_tables, ascii_word, lowercase, strip_marks, &f.tables)
    f.n_segments = len(segments)
    f.min_n = <int64_t *>malloc(max(f.n_segments, 1) * sizeof(int64_t))
    f.max_n = <int64_t *>malloc(max(f.n_segments, 1) * sizeof(int64_t))
    f.seeds = <uint32_t *>malloc(max(f.n_segments, 1) * sizeof(uint32_t))
    for q in range(f.n_segments):
        f.min_n[q], f.max_n[q], f.seeds[q] = segments[q]
        f.per_token += f.max_n[q] - f.min_n[q] + 1
    f.mask = ((<int64_t>1) << bits) - 1
    f.mode = mode
    f.l2 = l2
    f.bits = bits
    out.binary = mode == 0 and not l2
    if vec_init(&s.text_begins, 8, 1024) or vec_init(&s.text_ends, 8, 1024) \
            or vec_init(&s.label_ptr, 8, 1024) or vec_init(&s.label_ids, 4, 1024) \
            or vec_init(&s.text_hashes, 8, 1024) or labels_init(&s.labels) \
            or vec_init(&out.indptr, 8, 1024) or vec_init(&out.indices, 4, 1 << 16) \
            or vec_init(&out.data, 8, 16) or f.min_n == NULL or f.max_n == NULL \
            or f.seeds == NULL:
        status = NO_MEMORY
    if status == OK:
        with nogil:
            (<int64_t *>s.label_ptr.p)[0] = 0
            s.label_ptr.n = 1
            (<int64_t *>out.indptr.p)[0] = 0
            out.indptr.n = 1
            status = _lines(&s, base, data.shape[0])
            if status == OK:  # the texts through the front end, about a chunk at a time
                n_docs = s.text_begins.n
                first = 0
                while first < n_docs and status == OK:
                    stop = first
                    chunk_bytes = 0
                    while stop < n_docs and (chunk_bytes < CHUNK or stop == first):
                        chunk_bytes += (<int64_t *>s.text_ends.p)[stop] \
                            - (<int64_t *>s.text_begins.p)[stop]
                        stop += 1
                    status = _features(&f, base, (<int64_t *>s.text_begins.p) + first,
                                       (<int64_t *>s.text_ends.p) + first, stop - first, &out,
                                       &w, &invalid_doc)
                    if status == NOT_UTF8:
                        s.anomaly = NOT_UTF8
                        s.anomaly_line = -(first + invalid_doc) - 1  # (a document, not a line)
                    first = stop
    try:
        if status == NO_MEMORY:
            raise MemoryError("no memory to read the corpus")
        n_docs = s.text_begins.n
        result = {
            "lines": s.lines,
            "blank": s.blank,
            "anomaly": None if status == OK else (ANOMALIES[status], s.anomaly_line),
            "labels": [PyBytes_FromStringAndSize(
                <const char *>base + (<int64_t *>s.labels.begins.p)[d],
                (<int64_t *>s.labels.ends.p)[d] - (<int64_t *>s.labels.begins.p)[d])
                for d in range(s.labels.begins.n)],
        }
        if status == OK:
            result["indptr"] = _copy(out.indptr.p, out.indptr.n, np.int64)
            result["indices"] = _copy(out.indices.p, out.indices.n, np.int32)
            result["data"] = None if out.binary else _copy(out.data.p, out.data.n, np.float64)
            result["label_ptr"] = _copy(s.label_ptr.p, s.label_ptr.n, np.int64)
            result["label_ids"] = _copy(s.label_ids.p, s.label_ids.n, np.int32)
            result["text_hashes"] = _copy(s.text_hashes.p, s.text_hashes.n, np.uint64)
        return result
    finally:
        free(s.text_begins.p)
        free(s.text_ends.p)
        free(s.label_ptr.p)
        free(s.label_ids.p)
        free(s.text_hashes.p)
        labels_free(&s.labels)
        free(s.scratch)
        free(out.indptr.p)
        free(out.indices.p)
        free(out.data.p)
        free(f.min_n)
        free(f.max_n)
        free(f.seeds)
        scratch_free(&w)


cdef object _copy(char *p, int64_t n, dtype):
    array = np.empty(n, dtype=dtype)
    cdef char[::1] view
    if n:
        view = array.view(np.uint8)
        memcpy(&view[0], p, n * array.itemsize)
    return array
