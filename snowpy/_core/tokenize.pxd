from libc.stdint cimport int32_t, int64_t, uint8_t

cdef struct Tables:
    # the tokeniser's character tables (snowpy.text.unicode), two-level: a class and a
    # lower-case mapping per code point; and the ASCII fast path's byte table
    const int32_t *class_index
    const uint8_t *class_pages
    const int32_t *lower_index
    const int32_t *lower_pages
    const uint8_t *ascii_word
    bint lowercase
    bint strip_marks

cdef int bind_tables(object unicode_tables, const uint8_t[::1] ascii_word, bint lowercase,
                     bint strip_marks, Tables *out) except -1

cdef int64_t tokenize_into(const uint8_t *data, const int64_t *offsets, Py_ssize_t n_docs,
                           const Tables *tables, uint8_t *out, int64_t *starts,
                           int64_t *ends, int64_t *doc_ptr, int64_t *invalid,
                           int64_t *n_tokens) noexcept nogil

cdef int64_t tokenize_spans(const uint8_t *data, const int64_t *begins, const int64_t *ends,
                            Py_ssize_t n_docs, const Tables *tables, uint8_t *out,
                            int64_t *starts, int64_t *token_ends, int64_t *doc_ptr,
                            int64_t *invalid, int64_t *n_tokens) noexcept nogil
