"""The built-in feature extractors and the merge of their output into CSR rows, compiled.

Each extractor reads a chunk's token stream (:mod:`snowpy._core.tokenize`) and writes
hashed feature ids document by document (the contract in
:mod:`snowpy.text.extractors.spec`): word n-grams, character n-grams, skip-grams,
affixes and conjunctions. :func:`assemble_rows` then gathers, sorts and counts each
document's ids into one canonical CSR row.
"""

from libc.math cimport fabs, log, sqrt
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libc.stdlib cimport free, malloc

from snowpy._core._hash cimport murmur3
from snowpy._core.pool cimport SNOWPY_PREFETCH

#: Entries ahead whose document counts (or idf) :func:`weigh_rows` asks the memory for.
cdef enum:
    AHEAD = 16

cdef enum:
    TOO_FEW_IDS = -1
    TOO_SMALL_ARENA = -2
    NO_MEMORY = -3


cdef inline int32_t _hashed(const uint8_t *buffer, int64_t start, int64_t end, uint32_t seed,
                            int64_t mask) noexcept nogil:
    return <int32_t>(murmur3(buffer + start, end - start, seed) & mask)


cdef inline bint _room(const Found *out, int64_t count, int64_t needed) noexcept nogil:
    if count + needed > out.capacity:
        return False
    return not out.names or count + needed <= out.spans_capacity


cdef inline int64_t _record(const uint8_t *buffer, int64_t start, int64_t end, Found *out,
                            int64_t count, int64_t used) noexcept nogil:
    """Copy feature ``count``'s bytes to the arena; the new fill, or -2 when full."""
    cdef int64_t length = end - start
    cdef int64_t q
    if used + length > out.arena_size:
        return TOO_SMALL_ARENA
    for q in range(length):
        out.arena[used + q] = buffer[start + q]
    out.spans[2 * count] = used
    out.spans[2 * count + 1] = used + length
    return used + length


cdef inline int64_t _char_starts(const uint8_t *buffer, int64_t start, int64_t end,
                                 int64_t *out) noexcept nogil:
    """Offsets of the code points of ``buffer[start:end]``, plus ``end``; their number."""
    cdef int64_t n = 0
    cdef int64_t i
    for i in range(start, end):
        if (buffer[i] & 0xC0) != 0x80:
            out[n] = i
            n += 1
    out[n] = end
    return n


cdef inline int64_t _longest(const Stream *s) noexcept nogil:
    cdef int64_t longest = 0
    cdef Py_ssize_t k
    for k in range(s.n_tokens):
        if s.ends[k] - s.starts[k] > longest:
            longest = s.ends[k] - s.starts[k]
    return longest


# ------------------------------------------------------------------ word n-grams
cdef int64_t words_into(const Stream *s, int64_t min_n, int64_t max_n, uint32_t seed,
                        int64_t mask, Found *out) noexcept nogil:
    cdef int64_t count = 0
    cdef int64_t used = 0
    cdef Py_ssize_t d, k
    cdef int64_t first, last, i, n, j
    if min_n == 1 and max_n == 1 and not out.names:  # unigrams: feature k is token k
        if s.n_tokens > out.capacity:
            return TOO_FEW_IDS
        for k in range(s.n_tokens):
            out.ids[k] = _hashed(s.text, s.starts[k], s.ends[k], seed, mask)
        for d in range(s.n_docs + 1):
            out.ptr[d] = s.doc_ptr[d]
        return s.n_tokens
    for d in range(s.n_docs):
        out.ptr[d] = count
        first = s.doc_ptr[d]
        last = s.doc_ptr[d + 1]
        if not _room(out, count, (last - first) * (max_n - min_n + 1)):
            return TOO_FEW_IDS
        for i in range(first, last):
            for n in range(min_n, max_n + 1):
                j = i + n - 1
                if j >= last:
                    break
                out.ids[count] = _hashed(s.text, s.starts[i], s.ends[j], seed, mask)
                if out.names:
                    used = _record(s.text, s.starts[i], s.ends[j], out, count, used)
                    if used < 0:
                        return used
                count += 1
    out.ptr[s.n_docs] = count
    return count


# ------------------------------------------------------------- character n-grams
cdef int64_t _chars_into(const Stream *s, int64_t min_n, int64_t max_n, bint across,
                         uint32_t seed, int64_t mask, Found *out) noexcept nogil:
    cdef int64_t longest = _longest(s) + 2
    cdef Py_ssize_t d
    cdef int64_t first, last, span, doc_bytes, n_chars, n, i, k, length, q, offset, stop
    cdef int64_t count = 0
    cdef int64_t used = 0
    cdef int64_t result
    cdef uint8_t *scratch
    cdef int64_t *cps
    if across:
        for d in range(s.n_docs):
            if s.doc_ptr[d + 1] > s.doc_ptr[d]:
                span = s.ends[s.doc_ptr[d + 1] - 1] - s.starts[s.doc_ptr[d]]
                if span > longest:
                    longest = span
    scratch = <uint8_t *>malloc(longest + 2)
    cps = <int64_t *>malloc((longest + 3) * sizeof(int64_t))
    if scratch == NULL or cps == NULL:
        free(scratch)
        free(cps)
        return NO_MEMORY
    result = 0
    for d in range(s.n_docs):
        out.ptr[d] = count
        first = s.doc_ptr[d]
        last = s.doc_ptr[d + 1]
        if last == first:
            continue
        # at most one n-gram per n per byte, plus the two pads of every token
        doc_bytes = s.ends[last - 1] - s.starts[first] + 2 * (last - first)
        if not _room(out, count, doc_bytes * (max_n - min_n + 1)):
            result = TOO_FEW_IDS
            break
        if across:
            n_chars = _char_starts(s.text, s.starts[first], s.ends[last - 1], cps)
            for n in range(min_n, min(max_n, n_chars) + 1):
                for i in range(n_chars - n + 1):
                    out.ids[count] = _hashed(s.text, cps[i], cps[i + n], seed, mask)
                    if out.names:
                        used = _record(s.text, cps[i], cps[i + n], out, count, used)
                        if used < 0:
                            break
                    count += 1
                if used < 0:
                    break
            if used < 0:
                result = used
                break
            continue
        for k in range(first, last):
            length = s.ends[k] - s.starts[k]
            scratch[0] = 32
            for q in range(length):
                scratch[q + 1] = s.text[s.starts[k] + q]
            scratch[length + 1] = 32
            n_chars = _char_starts(scratch, 0, length + 2, cps)
            for n in range(min_n, max_n + 1):
                offset = 0
                stop = min(n_chars, n)
                out.ids[count] = _hashed(scratch, cps[0], cps[stop], seed, mask)
                if out.names:
                    used = _record(scratch, cps[0], cps[stop], out, count, used)
                    if used < 0:
                        break
                count += 1
                while offset + n < n_chars:
                    offset += 1
                    out.ids[count] = _hashed(scratch, cps[offset], cps[offset + n], seed, mask)
                    if out.names:
                        used = _record(scratch, cps[offset], cps[offset + n], out, count, used)
                        if used < 0:
                            break
                    count += 1
                if used < 0 or offset == 0:
                    break
            if used < 0:
                break
        if used < 0:
            result = used
            break
    free(scratch)
    free(cps)
    if result < 0:
        return result
    out.ptr[s.n_docs] = count
    return count


# -------------------------------------------------------------------- skip-grams
cdef int64_t _skipgrams_into(const Stream *s, int64_t max_skip, uint32_t seed, int64_t mask,
                             Found *out) noexcept nogil:
    cdef uint8_t *scratch = <uint8_t *>malloc(2 * _longest(s) + 1)
    cdef int64_t count = 0
    cdef int64_t used = 0
    cdef Py_ssize_t d
    cdef int64_t first, last, i, j, q, gap, first_length, length
    if scratch == NULL:
        return NO_MEMORY
    for d in range(s.n_docs):
        out.ptr[d] = count
        first = s.doc_ptr[d]
        last = s.doc_ptr[d + 1]
        if not _room(out, count, (last - first) * max_skip):
            free(scratch)
            return TOO_FEW_IDS
        for i in range(first, last):
            first_length = s.ends[i] - s.starts[i]
            for q in range(first_length):
                scratch[q] = s.text[s.starts[i] + q]
            scratch[first_length] = 32
            for gap in range(2, max_skip + 2):
                j = i + gap
                if j >= last:
                    break
                length = first_length + 1
                for q in range(s.ends[j] - s.starts[j]):
                    scratch[length] = s.text[s.starts[j] + q]
                    length += 1
                out.ids[count] = _hashed(scratch, 0, length, seed, mask)
                if out.names:
                    used = _record(scratch, 0, length, out, count, used)
                    if used < 0:
                        free(scratch)
                        return used
                count += 1
    free(scratch)
    out.ptr[s.n_docs] = count
    return count


# ---------------------------------------------------------------------- affixes
cdef int64_t _affixes_into(const Stream *s, int64_t min_len, int64_t max_len, uint32_t seed,
                           int64_t mask, Found *out) noexcept nogil:
    cdef int64_t longest = _longest(s)
    cdef uint8_t *scratch = <uint8_t *>malloc(longest + 2)
    cdef int64_t *cps = <int64_t *>malloc((longest + 2) * sizeof(int64_t))
    cdef int64_t count = 0
    cdef int64_t used = 0
    cdef Py_ssize_t d
    cdef int64_t k, n_chars, length, size, q, begin, needed
    if scratch == NULL or cps == NULL:
        free(scratch)
        free(cps)
        return NO_MEMORY
    for d in range(s.n_docs):
        out.ptr[d] = count
        needed = 2 * (max_len - min_len + 1) * (s.doc_ptr[d + 1] - s.doc_ptr[d])
        if not _room(out, count, needed):
            free(scratch)
            free(cps)
            return TOO_FEW_IDS
        for k in range(s.doc_ptr[d], s.doc_ptr[d + 1]):
            n_chars = _char_starts(s.text, s.starts[k], s.ends[k], cps)
            for length in range(min_len, max_len + 1):
                if n_chars <= length:
                    break
                size = cps[length] - s.starts[k]
                for q in range(size):
                    scratch[q] = s.text[s.starts[k] + q]
                scratch[size] = 32
                out.ids[count] = _hashed(scratch, 0, size + 1, seed, mask)
                if out.names:
                    used = _record(scratch, 0, size + 1, out, count, used)
                    if used < 0:
                        free(scratch)
                        free(cps)
                        return used
                count += 1
                begin = cps[n_chars - length]
                size = s.ends[k] - begin
                scratch[0] = 32
                for q in range(size):
                    scratch[q + 1] = s.text[begin + q]
                out.ids[count] = _hashed(scratch, 0, size + 1, seed, mask)
                if out.names:
                    used = _record(scratch, 0, size + 1, out, count, used)
                    if used < 0:
                        free(scratch)
                        free(cps)
                        return used
                count += 1
    free(scratch)
    free(cps)
    out.ptr[s.n_docs] = count
    return count


# ----------------------------------------------------------------- conjunctions
cdef inline int _before(const uint8_t *text, int64_t a_start, int64_t a_end, int64_t b_start,
                        int64_t b_end) noexcept nogil:
    """-1, 0 or 1 as token a sorts before, equal to, or after token b (bytewise)."""
    cdef int64_t la = a_end - a_start
    cdef int64_t lb = b_end - b_start
    cdef int64_t n = la if la < lb else lb
    cdef int64_t q
    cdef uint8_t x, y
    for q in range(n):
        x = text[a_start + q]
        y = text[b_start + q]
        if x != y:
            return -1 if x < y else 1
    return 0 if la == lb else (-1 if la < lb else 1)


cdef int64_t _conjunctions_into(const Stream *s, int64_t window, uint32_t seed, int64_t mask,
                                Found *out) noexcept nogil:
    cdef uint8_t *scratch = <uint8_t *>malloc(2 * _longest(s) + 1)
    cdef int64_t count = 0
    cdef int64_t used = 0
    cdef Py_ssize_t d
    cdef int64_t first, last, n, pairs, i, j, stop, a, b, length, q
    cdef int order
    if scratch == NULL:
        return NO_MEMORY
    for d in range(s.n_docs):
        out.ptr[d] = count
        first = s.doc_ptr[d]
        last = s.doc_ptr[d + 1]
        n = last - first
        pairs = n * (n - 1) // 2 if window == 0 else n * window
        if not _room(out, count, pairs):
            free(scratch)
            return TOO_FEW_IDS
        for i in range(first, last):
            stop = last if window == 0 else min(last, i + window + 1)
            for j in range(i + 1, stop):
                order = _before(s.text, s.starts[i], s.ends[i], s.starts[j], s.ends[j])
                if order == 0:
                    continue  # a token with itself is the token
                if order < 0:
                    a, b = i, j
                else:
                    a, b = j, i
                length = 0
                for q in range(s.starts[a], s.ends[a]):
                    scratch[length] = s.text[q]
                    length += 1
                scratch[length] = 31  # the unit separator: never inside a token
                length += 1
                for q in range(s.starts[b], s.ends[b]):
                    scratch[length] = s.text[q]
                    length += 1
                out.ids[count] = _hashed(scratch, 0, length, seed, mask)
                if out.names:
                    used = _record(scratch, 0, length, out, count, used)
                    if used < 0:
                        free(scratch)
                        return used
                count += 1
    free(scratch)
    out.ptr[s.n_docs] = count
    return count


# ------------------------------------------------------- the extractors' contract
cdef int _bind(const uint8_t[::1] text, const int64_t[::1] starts, const int64_t[::1] ends,
               const int64_t[::1] doc_ptr, int32_t[::1] out_ids, int64_t[::1] out_ptr,
               bint names, uint8_t[::1] arena, int64_t[:, ::1] spans, Stream *s,
               Found *out) except -1:
    s.text = &text[0] if text.shape[0] else NULL
    s.starts = &starts[0] if starts.shape[0] else NULL
    s.ends = &ends[0] if ends.shape[0] else NULL
    s.doc_ptr = &doc_ptr[0]
    s.n_docs = doc_ptr.shape[0] - 1
    s.n_tokens = starts.shape[0]
    if ends.shape[0] != starts.shape[0] or out_ptr.shape[0] < doc_ptr.shape[0]:
        raise ValueError("a token stream's starts and ends, and the output's pointers, "
                         "must match")
    out.ids = &out_ids[0] if out_ids.shape[0] else NULL
    out.capacity = out_ids.shape[0]
    out.ptr = &out_ptr[0]
    out.names = names
    out.arena = &arena[0] if arena.shape[0] else NULL
    out.arena_size = arena.shape[0] if names else 0
    out.spans = &spans[0, 0] if spans.shape[0] else NULL
    out.spans_capacity = spans.shape[0] if names else 0
    return 0


#: The built-in extractors, in the order :class:`Extractor` numbers them.
EXTRACTORS = ("words", "chars", "skipgrams", "affixes", "conjunctions")


cdef class Extractor:
    """A built-in extractor as the kernel contract calls it (``extract(text, starts,
    ends, doc_ptr, params, seed, mask, out_ids, out_ptr, names, arena, spans)``: the
    features written, or -1 for more room), its numbers ``params``: word n-grams
    ``[min_n, max_n]``; character n-grams ``[min_n, max_n, across]``; k-skip-bigrams
    ``[max_skip]``; prefixes and suffixes ``[min_len, max_len]``; token pairs
    ``[window]`` (0: the whole document)."""

    cdef readonly str name
    cdef int which

    def __cinit__(self, str name):
        self.name = name
        self.which = EXTRACTORS.index(name)

    def __call__(self, const uint8_t[::1] text, const int64_t[::1] starts,
                 const int64_t[::1] ends, const int64_t[::1] doc_ptr,
                 const double[::1] params, uint32_t seed, int64_t mask,
                 int32_t[::1] out_ids, int64_t[::1] out_ptr, bint names,
                 uint8_t[::1] arena, int64_t[:, ::1] spans):
        cdef Stream s
        cdef Found out
        cdef int64_t written
        cdef int64_t first = <int64_t>params[0]
        _bind(text, starts, ends, doc_ptr, out_ids, out_ptr, names, arena, spans, &s, &out)
        with nogil:
            if self.which == 0:
                written = words_into(&s, first, <int64_t>params[1], seed, mask, &out)
            elif self.which == 1:
                written = _chars_into(&s, first, <int64_t>params[1], params[2] > 0.0, seed,
                                      mask, &out)
            elif self.which == 2:
                written = _skipgrams_into(&s, first, seed, mask, &out)
            elif self.which == 3:
                written = _affixes_into(&s, first, <int64_t>params[1], seed, mask, &out)
            else:
                written = _conjunctions_into(&s, first, seed, mask, &out)
        return _checked(written)

    def __repr__(self):
        return f"<built-in extractor {self.name!r}>"

    def __reduce__(self):
        return (Extractor, (self.name,))


cdef int64_t _checked(int64_t written) except? -9:
    if written == NO_MEMORY:
        raise MemoryError("no memory for an extractor's scratch buffer")
    return written


# --------------------------------------------------------------- CSR assembly
cdef inline void _insertion_sort(int32_t *a, int64_t m) noexcept nogil:
    cdef int64_t i, j
    cdef int32_t x
    for i in range(1, m):
        x = a[i]
        j = i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


cdef void _sort_hashed(int32_t *a, int64_t m, int bits, int32_t *tmp,
                       int64_t *counts) noexcept nogil:
    """Sort ``a[:m]``, values in ``[0, 2**bits)`` spread uniformly (hashes): one bucket
    pass on the top bits, then an insertion sort of the nearly sorted result."""
    cdef int level, shift
    cdef int64_t buckets, b, i
    if m < 24:
        _insertion_sort(a, m)
        return
    level = 1
    while ((<int64_t>1) << level) < m and level < bits:
        level += 1
    buckets = (<int64_t>1) << level
    shift = bits - level
    for b in range(buckets + 1):
        counts[b] = 0
    for i in range(m):
        counts[(a[i] >> shift) + 1] += 1
    for b in range(buckets):
        counts[b + 1] += counts[b]
    for i in range(m):
        b = a[i] >> shift
        tmp[counts[b]] = a[i]
        counts[b] += 1
    _insertion_sort(tmp, m)
    for i in range(m):
        a[i] = tmp[i]


cdef int64_t assemble_into(const int32_t *ids, const int64_t *ptrs, Py_ssize_t n_segments,
                           Py_ssize_t n_docs, int mode, bint l2, int bits, int64_t *indptr,
                           int32_t *indices, double *data, int32_t *scratch,
                           int32_t *tmp, int64_t *counts) noexcept nogil:
    """Each document's ids from every segment, sorted and run-length counted into
    ``indices`` (and values into ``data`` unless NULL); returns nnz."""
    cdef int64_t nnz = 0
    cdef int64_t m, begin, repeats, q, j
    cdef Py_ssize_t d, seg
    cdef int32_t previous
    cdef double total, scale
    indptr[0] = 0
    for d in range(n_docs):
        m = 0
        for seg in range(n_segments):
            for j in range(ptrs[seg * (n_docs + 1) + d], ptrs[seg * (n_docs + 1) + d + 1]):
                scratch[m] = ids[j]
                m += 1
        if m > 0:
            _sort_hashed(scratch, m, bits, tmp, counts)
            begin = nnz
            previous = scratch[0]
            repeats = 1
            for q in range(1, m + 1):
                if q < m and scratch[q] == previous:
                    repeats += 1
                    continue
                indices[nnz] = previous
                if data != NULL:
                    if mode == 0:
                        data[nnz] = 1.0
                    elif mode == 1:
                        data[nnz] = <double>repeats
                    else:
                        # (ln 1 is 0 exactly: most n-grams come once, and need no log)
                        data[nnz] = 1.0 if repeats == 1 else 1.0 + log(<double>repeats)
                nnz += 1
                if q < m:
                    previous = scratch[q]
                    repeats = 1
            if l2 and data != NULL:
                total = 0.0
                for q in range(begin, nnz):
                    total += data[q] * data[q]
                scale = 1.0 / sqrt(total)
                for q in range(begin, nnz):
                    data[q] *= scale
        indptr[d + 1] = nnz
    return nnz


def assemble_rows(const int32_t[::1] ids, const int64_t[:, ::1] ptrs, int mode, bint l2,
                  int bits, int64_t[::1] indptr, int32_t[::1] indices, double[::1] data,
                  int32_t[::1] scratch):
    """Fill ``indptr`` (n_docs + 1), ``indices`` and ``data`` (may be empty: binary rows
    without a norm); return nnz. ``ptrs[s, d]:ptrs[s, d + 1]`` are document ``d``'s ids
    from segment ``s``; ``mode`` 0 binary, 1 count, 2 log."""
    cdef Py_ssize_t n_docs = ptrs.shape[1] - 1
    cdef Py_ssize_t width = scratch.shape[0]
    cdef int32_t *tmp = <int32_t *>malloc(max(width, 1) * sizeof(int32_t))
    cdef int64_t *counts = <int64_t *>malloc((2 * width + 2) * sizeof(int64_t))
    cdef int64_t nnz
    cdef int32_t empty_id = 0
    if tmp == NULL or counts == NULL:
        free(tmp)
        free(counts)
        raise MemoryError("no memory to assemble rows")
    with nogil:
        nnz = assemble_into(&ids[0] if ids.shape[0] else &empty_id, &ptrs[0, 0],
                            ptrs.shape[0], n_docs, mode, l2, bits, &indptr[0],
                            &indices[0] if indices.shape[0] else NULL,
                            &data[0] if data.shape[0] else NULL, &scratch[0], tmp, counts)
    free(tmp)
    free(counts)
    return nnz


def count_numbers(const int32_t[::1] numbers, int64_t[::1] counts):
    """``counts[n] += 1`` for each ``n`` of ``numbers`` (a document frequency per number)."""
    cdef Py_ssize_t j
    with nogil:
        for j in range(numbers.shape[0]):
            if j + AHEAD < numbers.shape[0]:
                SNOWPY_PREFETCH(&counts[numbers[j + AHEAD]])
            counts[numbers[j]] += 1


cdef inline double _idf(int64_t documents, int64_t count) noexcept nogil:
    return log((1.0 + <double>documents) / (1.0 + <double>count)) + 1.0


cdef inline double _factor(int64_t documents, int64_t count, const double *factors,
                           int64_t n_factors, int32_t number) noexcept nogil:
    """A feature's factor: its idf, times its relevance factor when it has one (a number
    past ``n_factors``, counted after the relevance was: none)."""
    if number < n_factors:
        return _idf(documents, count) * factors[number]
    return _idf(documents, count)


def idf_table(const int64_t[::1] counts, int64_t documents, const double[::1] factors,
              double[::1] out):
    """``out[n]``: the factor of number ``n`` (0 for number 0), its idf times its
    relevance factor (``factors``, by number; empty: none), as :func:`weigh_rows`
    computes it for each entry (a large block looks it up instead, to the bit the
    same)."""
    cdef Py_ssize_t n
    cdef const double *f = &factors[0] if factors.shape[0] else NULL
    with nogil:
        out[0] = 0.0
        for n in range(1, counts.shape[0]):
            out[n] = _factor(documents, counts[n], f, factors.shape[0], <int32_t>n)


def weigh_rows(const int64_t[::1] indptr, const int32_t[::1] numbers, const double[::1] data,
               int64_t[::1] counts, int64_t documents, const int64_t[::1] weights,
               bint each, bint norm, double[::1] out, const double[::1] table,
               const double[::1] factors):
    """``out[j] = data[j] * (ln((1 + n) / (1 + counts[numbers[j]])) + 1) *
    factors[numbers[j]]`` (``data`` empty: strengths of 1; number 0, a feature never
    counted: 0; ``factors`` empty or shorter: 1 past their end), each row then divided
    by its Euclidean norm when ``norm`` (its squares summed in order; a row of norm 0
    left as it is). With ``each``, each row's document is counted first, in order
    (``weights[d]`` times, or once when ``weights`` is empty): ``counts`` and ``n`` grow
    as the rows go; else ``table`` (from :func:`idf_table`), when not empty, gives each
    number's idf. Returns the documents counted after the last row. Every path that
    weighs by document frequency comes here: one logarithm, one order of sums."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1
    cdef Py_ssize_t d, j
    cdef bint binary = data.shape[0] == 0
    cdef bint weighted = weights.shape[0] > 0
    cdef bint looked_up = table.shape[0] > 0 and not each
    cdef int64_t w
    cdef int32_t number
    cdef double total, value, length
    cdef const double *f = &factors[0] if factors.shape[0] else NULL
    cdef int64_t n_factors = factors.shape[0]
    with nogil:
        for d in range(n_rows):
            if each:
                w = weights[d] if weighted else 1
                documents += w
                for j in range(indptr[d], indptr[d + 1]):
                    counts[numbers[j]] += w
            total = 0.0
            for j in range(indptr[d], indptr[d + 1]):
                if j + AHEAD < numbers.shape[0]:
                    if looked_up:
                        SNOWPY_PREFETCH(&table[numbers[j + AHEAD]])
                    else:
                        SNOWPY_PREFETCH(&counts[numbers[j + AHEAD]])
                number = numbers[j]
                if number == 0:
                    value = 0.0
                elif looked_up:
                    value = (1.0 if binary else data[j]) * table[number]
                else:
                    value = (1.0 if binary else data[j]) * _factor(
                        documents, counts[number], f, n_factors, number)
                out[j] = value
                total = total + value * value
            if norm and total != 0.0:
                length = sqrt(total)
                for j in range(indptr[d], indptr[d + 1]):
                    out[j] = out[j] / length
    return documents


def count_by_label(const int64_t[::1] indptr, const int32_t[::1] numbers,
                   const double[::1] data, const int64_t[::1] starts,
                   const int64_t[::1] documents, const double[::1] weights,
                   int64_t size, int32_t[::1] numbers_out, double[::1] counts_out,
                   int64_t[::1] starts_out):
    """How many documents of each label hold each feature: label ``c``'s documents are
    the rows ``documents[starts[c]:starts[c + 1]]`` of ``indptr`` and ``numbers``, each
    counted ``weights[i]`` times, and each entry ``data[j]`` times (empty: once; the
    counts of counts gathered before are added up this way). Label ``c``'s distinct
    numbers and their counts go to ``numbers_out`` and ``counts_out`` from
    ``starts_out[c]``, in the order met; returns how many in all. One pass over each
    label's rows, no sort: the counts gather in a table of ``size`` numbers (every
    number below it), zeroed behind the label. Without the GIL: labels apart, on
    threads apart."""
    cdef Py_ssize_t c, i, j
    cdef Py_ssize_t n_labels = starts.shape[0] - 1
    cdef Py_ssize_t top = 0
    cdef int64_t d
    cdef int32_t number
    cdef bint counted = data.shape[0] > 0
    # (whole numbers, fewer than 2**31 a label: half the memory of doubles, in cache)
    cdef int32_t[::1] gathered = np.zeros(size, np.int32)
    with nogil:
        for c in range(n_labels):
            starts_out[c] = top
            for i in range(starts[c], starts[c + 1]):
                d = documents[i]
                for j in range(indptr[d], indptr[d + 1]):
                    if j + AHEAD < indptr[d + 1]:
                        SNOWPY_PREFETCH(&gathered[numbers[j + AHEAD]])
                    gathered[numbers[j]] += <int32_t>(weights[i] * (data[j] if counted
                                                                    else 1.0))
            for i in range(starts[c], starts[c + 1]):
                d = documents[i]
                for j in range(indptr[d], indptr[d + 1]):
                    if j + AHEAD < indptr[d + 1]:
                        SNOWPY_PREFETCH(&gathered[numbers[j + AHEAD]])
                    number = numbers[j]
                    if gathered[number] == 0:  # (met before in this label)
                        continue
                    numbers_out[top] = number
                    counts_out[top] = gathered[number]
                    top += 1
                    gathered[number] = 0
        starts_out[n_labels] = top
    return top


def relevance(const int32_t[::1] numbers, const double[::1] counts,
              const int64_t[::1] starts, const int64_t[::1] ranked,
              const double[::1] totals, const double[::1] sizes, double every,
              double features, double[::1] out):
    """The relevance of each feature to the labels: ``out[n]``, the largest ``|r|`` over
    the labels of number ``n``'s Naive Bayes log-count ratio (Wang and Manning 2012,
    add-one smoothed)

        ``r = ln((1 + k) / (F + n_c)) - ln((1 + t - k) / (F + N - n_c))``,

    ``k`` the documents of label ``c`` that hold it (:func:`count_by_label`'s: label
    ``c``'s numbers and counts from ``starts[c]`` to ``starts[c + 1]``), ``t`` all that
    hold it (``totals[n]``), ``n_c`` and ``N`` the features label ``c``'s documents
    and all documents hold (``sizes[c]``, ``every``), ``F`` the ``features`` counted.

    A label without the feature (``k = 0``) has ``|r| = |a_c - ln(1 + t)|``, ``a_c =
    ln((F + N - n_c) / (F + n_c))``, largest at the least or the greatest ``a_c`` of
    those labels. The labels are taken in ascending ``a_c`` (``ranked``: of ``n_c``
    descending), and the first and last labels that lack a feature are found from how
    many labels from the first, and up to the last, hold it."""
    cdef Py_ssize_t c, i, j
    cdef Py_ssize_t n_labels = ranked.shape[0]
    cdef int32_t number
    cdef double r, low, odds
    cdef int64_t k, t, most = 0
    # (by number: how many labels from the first hold it, how many up to the last, and
    # the last that did; side by side, one line of the cache)
    cdef int32_t[:, ::1] held = np.zeros((out.shape[0], 3), np.int32)
    cdef double[::1] a = np.empty(max(n_labels, 1), np.float64)
    for number in range(totals.shape[0]):
        if totals[number] > most:
            most = <int64_t>totals[number]
    # ln(1 + x) for every count (whole numbers: documents, each counted whole times)
    cdef double[::1] ln1p = np.log1p(np.arange(most + 1, dtype=np.float64))
    with nogil:
        for i in range(n_labels):
            c = ranked[i]
            odds = log(features + every - sizes[c]) - log(features + sizes[c])
            a[i] = odds
            for j in range(starts[c], starts[c + 1]):
                if j + AHEAD < starts[c + 1]:
                    SNOWPY_PREFETCH(&held[numbers[j + AHEAD], 0])
                    SNOWPY_PREFETCH(&out[numbers[j + AHEAD]])
                    SNOWPY_PREFETCH(&totals[numbers[j + AHEAD]])
                number = numbers[j]
                k = <int64_t>counts[j]
                t = <int64_t>totals[number]
                if held[number, 0] == i:
                    held[number, 0] = <int32_t>(i + 1)
                held[number, 1] = held[number, 1] + 1 if held[number, 2] == i else 1
                held[number, 2] = <int32_t>(i + 1)  # (the last label holding it, + 1)
                r = fabs(ln1p[k] - ln1p[t - k] + odds)
                if r > out[number]:
                    out[number] = r
        for number in range(out.shape[0]):
            if totals[number] == 0.0 or held[number, 0] >= n_labels:
                continue  # (never counted, or held by every label)
            low = ln1p[<int64_t>totals[number]]
            r = fabs(a[held[number, 0]] - low)
            if r > out[number]:
                out[number] = r
            i = n_labels - 1 - (held[number, 1] if held[number, 2] == n_labels else 0)
            r = fabs(a[i] - low)
            if r > out[number]:
                out[number] = r


cdef Py_ssize_t weigh_document(const int64_t *ids, const double *vals, Py_ssize_t n,
                           int32_t *table, int32_t *row_ids, int64_t n_row_ids,
                           int64_t *counts, int64_t n_counts, const double *factors,
                           int64_t n_factors, int64_t *next_row, int64_t *documents,
                           bint learn, bint norm, int64_t *ids_out,
                           double *out) noexcept nogil:
    """One document weighed as :func:`weigh_rows` weighs a row of one document (see
    :class:`OneDocument`); the features kept, or -1 when the map or the counts must grow
    first (nothing changed)."""
    cdef Py_ssize_t j, k = 0
    cdef int64_t key, needed = 0
    cdef int32_t number
    cdef double total = 0.0
    cdef double value, length
    if learn:
        for j in range(n):
            needed += table[ids[j]] == 0
        if next_row[0] + needed - 1 > n_row_ids or next_row[0] + needed > n_counts:
            return -1
        documents[0] += 1
        for j in range(n):
            key = ids[j]
            number = table[key]
            if number == 0:
                number = <int32_t>next_row[0]
                table[key] = number
                row_ids[next_row[0] - 1] = <int32_t>key
                next_row[0] += 1
            counts[number] += 1
    for j in range(n):
        number = table[ids[j]]
        if number == 0:
            continue
        value = vals[j] * _factor(documents[0], counts[number], factors, n_factors, number)
        ids_out[k] = ids[j]
        out[k] = value
        total = total + value * value
        k += 1
    if norm and total != 0.0:
        length = sqrt(total)
        for j in range(k):
            out[j] = out[j] / length
    return k


cdef class OneDocument:
    """The arrays of a document-frequency count in a direct map, bound once, to weigh
    one document at a time in one call (:meth:`weigh`, or inside the one-example
    learner's): the one-example path, where binding the arrays on every call cost more
    than the weighing. ``table``: key -> number (0: none); ``row_ids``: number - 1 ->
    key; ``counts``: documents per number. Bound again when any of them is replaced.
    ``factors``: relevance factors per number (empty: none). ``documents`` (counted),
    ``next_row`` (the map's next number) and ``norm`` (l2 after weighing) are the count's
    figures as its owner set them and the last call that counted left them."""

    def __cinit__(self, int32_t[::1] table, int32_t[::1] row_ids, int64_t[::1] counts,
                  const double[::1] factors):
        self.table = table
        self.row_ids = row_ids
        self.counts = counts
        self.factors = factors
        self.factors_at = &factors[0] if factors.shape[0] else NULL

    def weigh(self, const int64_t[::1] ids, const double[::1] vals, bint learn):
        """``ids`` (sorted, unique, below the table's width) and their strengths weighed
        as :func:`weigh_rows` weighs a row of one document, to the bit; with ``learn``
        the document is counted first, a feature without a number numbered ``next_row``
        on (as the map inserts); without, the features never counted are left out.
        Returns ``(ids kept, weights)``, or None when the map or the counts must grow
        first (nothing changed)."""
        cdef Py_ssize_t n = ids.shape[0]
        cdef Py_ssize_t k
        kept_ids = np.empty(n, np.int64)
        weights = np.empty(n, np.float64)
        cdef int64_t[::1] ids_out = kept_ids
        cdef double[::1] out = weights
        if n == 0:
            if learn:
                self.documents += 1
            return kept_ids, weights
        with nogil:
            k = weigh_document(&ids[0], &vals[0], n, &self.table[0], &self.row_ids[0],
                               self.row_ids.shape[0], &self.counts[0], self.counts.shape[0],
                               self.factors_at, self.factors.shape[0], &self.next_row,
                               &self.documents, learn, self.norm, &ids_out[0], &out[0])
        if k < 0:
            return None
        if k < n:
            return kept_ids[:k], weights[:k]
        return kept_ids, weights


# ------------------------------------------------------- one document at a time
from snowpy._core.tokenize cimport bind_tables, tokenize_into

import numpy as np


cdef class WordsRow:
    """One document's row in one call, for front ends made of word n-grams only (the
    default): tokenise, each extractor's n-grams, one sorted row, the same row the
    chunk pipeline gives. Buffers grow to the longest document seen.

    ``segments`` are ``(min_n, max_n, seed)`` per word extractor (and field);
    ``mode`` 0 binary, 1 count, 2 log.
    """

    def __cinit__(self, unicode_tables, ascii_word, bint lowercase, bint strip_marks,
                  segments, int mode, bint l2, int bits):
        cdef Py_ssize_t s
        self._keep = (unicode_tables, ascii_word)
        bind_tables(unicode_tables, ascii_word, lowercase, strip_marks, &self.tables)
        self.n_segments = len(segments)
        self.min_n = <int64_t *>malloc(max(self.n_segments, 1) * sizeof(int64_t))
        self.max_n = <int64_t *>malloc(max(self.n_segments, 1) * sizeof(int64_t))
        self.seeds = <uint32_t *>malloc(max(self.n_segments, 1) * sizeof(uint32_t))
        self.ptrs = <int64_t *>malloc(2 * max(self.n_segments, 1) * sizeof(int64_t))
        if self.min_n == NULL or self.max_n == NULL or self.seeds == NULL or self.ptrs == NULL:
            raise MemoryError()
        self.per_token = 0
        for s in range(self.n_segments):
            self.min_n[s], self.max_n[s], self.seeds[s] = segments[s]
            self.per_token += self.max_n[s] - self.min_n[s] + 1
        self.mask = ((<int64_t>1) << bits) - 1
        self.mode = mode
        self.l2 = l2
        self.bits = bits
        self.size = -1
        self.last_nnz = -1
        self._grow(256)

    def __dealloc__(self):
        free(self.min_n)
        free(self.max_n)
        free(self.seeds)
        free(self.ptrs)
        free(self.out)
        free(self.starts)
        free(self.ends)
        free(self.ids)
        free(self.sort_tmp)
        free(self.sort_counts)

    cdef int _grow(self, int64_t size) except -1:
        free(self.out)
        free(self.starts)
        free(self.ends)
        free(self.ids)
        free(self.sort_tmp)
        free(self.sort_counts)
        self.size = size
        self.room = (size + 1) * self.per_token + 1
        self.out = <uint8_t *>malloc(2 * size + 1)
        self.starts = <int64_t *>malloc((size + 1) * sizeof(int64_t))
        self.ends = <int64_t *>malloc((size + 1) * sizeof(int64_t))
        self.ids = <int32_t *>malloc(2 * self.room * sizeof(int32_t))  # ids, then scratch
        self.sort_tmp = <int32_t *>malloc(self.room * sizeof(int32_t))
        self.sort_counts = <int64_t *>malloc((2 * self.room + 2) * sizeof(int64_t))
        if self.out == NULL or self.starts == NULL or self.ends == NULL or self.ids == NULL \
                or self.sort_tmp == NULL or self.sort_counts == NULL:
            raise MemoryError("no memory for a document's row")
        self.indices = np.empty(self.room, np.int32)
        self.values = np.empty(self.room, np.float64)
        self._indices = self.indices
        self._values = self.values
        return 0

    @property
    def width(self):
        """The longest document (in bytes) the buffers hold without growing."""
        return self.size

    cdef int64_t row_of(self, const uint8_t *raw, int64_t n, int64_t *invalid) noexcept nogil:
        """The row of ``raw[:n]`` (at most ``self.size`` bytes) into ``indices`` and
        ``values``; its length, or -1 when a buffer is too small."""
        cdef int64_t offsets[2]
        cdef int64_t doc_ptr[2]
        cdef int64_t out_ptr[2]
        cdef int64_t indptr[2]
        cdef int64_t n_tokens = 0
        cdef int64_t used, count, written
        cdef Py_ssize_t s
        cdef Stream stream
        cdef Found found
        offsets[0] = 0
        offsets[1] = n
        used = tokenize_into(raw, offsets, 1, &self.tables, self.out, self.starts, self.ends,
                             doc_ptr, invalid, &n_tokens)
        stream.text = self.out
        stream.starts = self.starts
        stream.ends = self.ends
        stream.doc_ptr = doc_ptr
        stream.n_docs = 1
        stream.n_tokens = n_tokens
        found.ptr = out_ptr
        found.names = False
        found.arena = NULL
        found.arena_size = 0
        found.spans = NULL
        found.spans_capacity = 0
        count = 0
        for s in range(self.n_segments):
            found.ids = self.ids + count
            found.capacity = self.room - count
            written = words_into(&stream, self.min_n[s], self.max_n[s], self.seeds[s],
                                 self.mask, &found)
            if written < 0:
                return -1
            self.ptrs[2 * s] = count
            self.ptrs[2 * s + 1] = count + written
            count += written
        if count > self.room:
            return -1
        self.serial += 1
        self.last_nnz = assemble_into(self.ids, self.ptrs, self.n_segments, 1, self.mode,
                                      self.l2, self.bits, indptr, &self._indices[0],
                                      &self._values[0], self.ids + self.room, self.sort_tmp,
                                      self.sort_counts)
        return self.last_nnz

    def last(self, int64_t serial):
        """``(ids int64, strengths)`` of the row made ``serial``-th (:attr:`serial` then),
        as :meth:`row` gave them, when no row was made since; else None."""
        if serial != self.serial or self.last_nnz < 0:
            return None
        return (self.indices[:self.last_nnz].astype(np.int64),
                self.values[:self.last_nnz].copy())

    def row(self, const uint8_t[::1] raw):
        """``(ids int64, strengths, invalid bytes)`` of one document's UTF-8 bytes."""
        cdef int64_t invalid = 0
        cdef int64_t nnz
        cdef uint8_t empty = 0
        if raw.shape[0] > self.size:
            self._grow(max(raw.shape[0], 2 * self.size))
        with nogil:
            nnz = self.row_of(&raw[0] if raw.shape[0] else &empty, raw.shape[0], &invalid)
        if nnz < 0:  # (the buffers are sized for the longest possible row)
            raise RuntimeError("a feature buffer was too small")
        return self.indices[:nnz].astype(np.int64), self.values[:nnz].copy(), invalid
