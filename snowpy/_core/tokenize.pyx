"""Tokenisation of UTF-8 bytes into a normalised token stream, compiled.

The rule (:mod:`snowpy.text.tokenize` documents it): a token starts at a word
character and continues over word characters and combining marks; a symbol or a CJK
ideograph is a token by itself; anything else separates tokens; invalid UTF-8 is a
separator, counted per document. Each document's tokens are written back to back,
``tok1 tok2 tok3`` with single spaces, with the byte span of every token, so any
word n-gram is a contiguous slice of the output.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

cdef enum:
    SEPARATOR = 0
    WORD = 1
    MARK = 2
    SINGLE = 3


cdef inline Py_ssize_t _put(uint8_t *out, Py_ssize_t pos, int64_t cp) noexcept nogil:
    """Write code point ``cp`` as UTF-8 at ``out + pos``; return the new position."""
    if cp < 0x80:
        out[pos] = <uint8_t>cp
        return pos + 1
    if cp < 0x800:
        out[pos] = <uint8_t>(0xC0 | (cp >> 6))
        out[pos + 1] = <uint8_t>(0x80 | (cp & 0x3F))
        return pos + 2
    if cp < 0x10000:
        out[pos] = <uint8_t>(0xE0 | (cp >> 12))
        out[pos + 1] = <uint8_t>(0x80 | ((cp >> 6) & 0x3F))
        out[pos + 2] = <uint8_t>(0x80 | (cp & 0x3F))
        return pos + 3
    out[pos] = <uint8_t>(0xF0 | (cp >> 18))
    out[pos + 1] = <uint8_t>(0x80 | ((cp >> 12) & 0x3F))
    out[pos + 2] = <uint8_t>(0x80 | ((cp >> 6) & 0x3F))
    out[pos + 3] = <uint8_t>(0x80 | (cp & 0x3F))
    return pos + 4


cdef int64_t tokenize_into(const uint8_t *data, const int64_t *offsets, Py_ssize_t n_docs,
                           const Tables *tables, uint8_t *out, int64_t *starts,
                           int64_t *ends, int64_t *doc_ptr, int64_t *invalid,
                           int64_t *n_tokens) noexcept nogil:
    """Tokenise documents ``data[offsets[d]:offsets[d + 1]]``; returns the bytes written
    to ``out`` (at most twice the input plus one) and sets ``n_tokens``."""
    return tokenize_spans(data, offsets, offsets + 1, n_docs, tables, out, starts, ends,
                          doc_ptr, invalid, n_tokens)


cdef int64_t tokenize_spans(const uint8_t *data, const int64_t *begins, const int64_t *doc_ends,
                            Py_ssize_t n_docs, const Tables *tables, uint8_t *out,
                            int64_t *starts, int64_t *ends, int64_t *doc_ptr,
                            int64_t *invalid, int64_t *n_tokens) noexcept nogil:
    """Tokenise documents ``data[begins[d]:doc_ends[d]]`` (anywhere in ``data``); as
    :func:`tokenize_into`, ``invalid`` may be NULL."""
    cdef const int32_t *class_index = tables.class_index
    cdef const uint8_t *class_pages = tables.class_pages
    cdef const int32_t *lower_index = tables.lower_index
    cdef const int32_t *lower_pages = tables.lower_pages
    cdef const uint8_t *ascii_word = tables.ascii_word
    cdef bint lowercase = tables.lowercase
    cdef bint strip_marks = tables.strip_marks
    cdef Py_ssize_t pos = 0
    cdef int64_t count = 0
    cdef int64_t first, i, stop, bad, cp, c1
    cdef Py_ssize_t d
    cdef int64_t b
    cdef uint8_t c
    cdef int kind
    cdef bint in_token
    for d in range(n_docs):
        doc_ptr[d] = count
        first = count
        i = begins[d]
        stop = doc_ends[d]
        in_token = False
        bad = 0
        while i < stop:
            b = data[i]
            c = ascii_word[b]
            if c == 0 and b < 0x80:  # an ASCII separator (no ASCII character is SINGLE)
                if in_token:
                    ends[count] = pos
                    count += 1
                    in_token = False
                i += 1
                continue
            if c != 0:
                # a run of ASCII word characters: one table lookup per byte
                if not in_token:
                    if count > first:
                        out[pos] = 32
                        pos += 1
                    starts[count] = pos
                    in_token = True
                out[pos] = c
                pos += 1
                i += 1
                while i < stop:
                    c = ascii_word[data[i]]
                    if c == 0:
                        break
                    out[pos] = c
                    pos += 1
                    i += 1
                continue
            # decode one code point (cp < 0: an invalid byte)
            if b < 0x80:
                cp = b
                i += 1
            else:
                cp = -1
                if 0xC2 <= b <= 0xDF:
                    if i + 1 < stop and (data[i + 1] & 0xC0) == 0x80:
                        cp = ((b & 0x1F) << 6) | (data[i + 1] & 0x3F)
                        i += 2
                elif 0xE0 <= b <= 0xEF:
                    if i + 2 < stop and (data[i + 1] & 0xC0) == 0x80 \
                            and (data[i + 2] & 0xC0) == 0x80:
                        c1 = data[i + 1]
                        if not ((b == 0xE0 and c1 < 0xA0) or (b == 0xED and c1 >= 0xA0)):
                            cp = ((b & 0x0F) << 12) | ((c1 & 0x3F) << 6) \
                                | (data[i + 2] & 0x3F)
                            i += 3
                elif 0xF0 <= b <= 0xF4:
                    if i + 3 < stop and (data[i + 1] & 0xC0) == 0x80 \
                            and (data[i + 2] & 0xC0) == 0x80 and (data[i + 3] & 0xC0) == 0x80:
                        c1 = data[i + 1]
                        if not ((b == 0xF0 and c1 < 0x90) or (b == 0xF4 and c1 >= 0x90)):
                            cp = ((b & 0x07) << 18) | ((c1 & 0x3F) << 12) \
                                | ((<int64_t>data[i + 2] & 0x3F) << 6) \
                                | (data[i + 3] & 0x3F)
                            i += 4
                if cp < 0:
                    bad += 1
                    i += 1
                    if in_token:
                        ends[count] = pos
                        count += 1
                        in_token = False
                    continue
            kind = class_pages[(<int64_t>class_index[cp >> 8] << 8) | (cp & 255)]
            if lowercase:
                cp = cp + lower_pages[(<int64_t>lower_index[cp >> 8] << 8) | (cp & 255)]
            if kind == WORD or (kind == MARK and in_token):
                if kind == MARK and strip_marks:
                    continue
                if not in_token:
                    if count > first:
                        out[pos] = 32
                        pos += 1
                    starts[count] = pos
                    in_token = True
                pos = _put(out, pos, cp)
            else:
                if in_token:
                    ends[count] = pos
                    count += 1
                    in_token = False
                if kind == SINGLE:
                    if count > first:
                        out[pos] = 32
                        pos += 1
                    starts[count] = pos
                    pos = _put(out, pos, cp)
                    ends[count] = pos
                    count += 1
        if in_token:
            ends[count] = pos
            count += 1
        if invalid != NULL:
            invalid[d] = bad
    doc_ptr[n_docs] = count
    n_tokens[0] = count
    return pos


cdef int bind_tables(object unicode_tables, const uint8_t[::1] ascii_word, bint lowercase,
                     bint strip_marks, Tables *out) except -1:
    """Point ``out`` at the arrays of a :class:`snowpy.text.unicode.UnicodeTables` (the
    caller keeps them alive)."""
    cdef const int32_t[::1] class_index = unicode_tables.class_index
    cdef const uint8_t[::1] class_pages = unicode_tables.class_pages
    cdef const int32_t[::1] lower_index = unicode_tables.lower_index
    cdef const int32_t[::1] lower_pages = unicode_tables.lower_pages
    if class_index.shape[0] != 0x110000 // 256 or lower_index.shape[0] != 0x110000 // 256 \
            or ascii_word.shape[0] != 256:
        raise ValueError("the tokeniser's tables have the wrong shape")
    out.class_index = &class_index[0]
    out.class_pages = &class_pages[0]
    out.lower_index = &lower_index[0]
    out.lower_pages = &lower_pages[0]
    out.ascii_word = &ascii_word[0]
    out.lowercase = lowercase
    out.strip_marks = strip_marks
    return 0


def tokenize(const uint8_t[::1] data, const int64_t[::1] offsets, unicode_tables,
             const uint8_t[::1] ascii_word, bint lowercase, bint strip_marks,
             uint8_t[::1] out, int64_t[::1] starts, int64_t[::1] ends, int64_t[::1] doc_ptr,
             int64_t[::1] invalid):
    """Tokenise the documents of ``data`` (see the module) with ``unicode_tables`` (a
    :class:`snowpy.text.unicode.UnicodeTables`); returns ``(used, n_tokens)``.

    ``out`` holds at least ``2 * size + 1`` bytes and ``starts``/``ends``
    ``size + 1`` entries, ``size`` the documents' bytes.
    """
    cdef Tables tables
    cdef int64_t n_tokens = 0
    cdef int64_t used
    cdef Py_ssize_t n_docs = offsets.shape[0] - 1
    cdef uint8_t empty = 0
    bind_tables(unicode_tables, ascii_word, lowercase, strip_marks, &tables)
    if n_docs < 0:
        return 0, 0
    with nogil:
        used = tokenize_into(&data[0] if data.shape[0] else &empty, &offsets[0], n_docs,
                             &tables, &out[0], &starts[0], &ends[0], &doc_ptr[0],
                             &invalid[0] if invalid.shape[0] else NULL, &n_tokens)
    return used, n_tokens


def split_spaces(const uint8_t[::1] data, const int64_t[::1] offsets, uint8_t[::1] out,
                 int64_t[::1] starts, int64_t[::1] ends, int64_t[::1] doc_ptr):
    """Tokens already separated by spaces (or NUL, a NUL-joined document's end);
    returns ``(used, n_tokens)``."""
    cdef Py_ssize_t pos = 0
    cdef int64_t count = 0
    cdef Py_ssize_t d, i
    cdef uint8_t b
    cdef bint in_token
    cdef Py_ssize_t n_docs = offsets.shape[0] - 1
    with nogil:
        for d in range(n_docs):
            doc_ptr[d] = count
            in_token = False
            for i in range(offsets[d], offsets[d + 1]):
                b = data[i]
                if b == 32 or b == 0:
                    if in_token:
                        ends[count] = pos
                        count += 1
                        in_token = False
                    continue
                if not in_token:
                    if count > doc_ptr[d]:
                        out[pos] = 32
                        pos += 1
                    starts[count] = pos
                    in_token = True
                out[pos] = b
                pos += 1
            if in_token:
                ends[count] = pos
                count += 1
        if n_docs >= 0:
            doc_ptr[n_docs] = count
    return pos, count


def nul_offsets(const uint8_t[::1] raw, int64_t[::1] offsets):
    """Document offsets in NUL-joined ``raw`` (each document keeps its trailing NUL);
    the number of documents, or -1 when ``raw`` holds more NULs than separators."""
    cdef Py_ssize_t n = 1
    cdef Py_ssize_t last = offsets.shape[0] - 1
    cdef Py_ssize_t i
    cdef Py_ssize_t size = raw.shape[0]
    cdef const uint8_t *base
    cdef const void *found
    if size == 0:
        offsets[n] = 0
        return n
    base = &raw[0]
    i = 0
    with nogil:
        while i < size:
            found = memchr(base + i, 0, size - i)
            if found == NULL:
                break
            i = <const uint8_t *>found - base
            if n == last:
                n = -1
                break
            offsets[n] = i + 1
            n += 1
            i += 1
    if n < 0:
        return -1
    offsets[n] = size
    return n


cdef extern from "string.h" nogil:
    const void *memchr(const void *s, int c, size_t n)
