from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t

cdef struct Stream:
    # a chunk's token stream: token k is text[starts[k]:ends[k]], document d has the
    # tokens doc_ptr[d]:doc_ptr[d + 1]
    const uint8_t *text
    const int64_t *starts
    const int64_t *ends
    const int64_t *doc_ptr
    Py_ssize_t n_docs
    Py_ssize_t n_tokens

cdef struct Found:
    # where an extractor writes: ids (and with names, the hashed bytes and their spans)
    int32_t *ids
    Py_ssize_t capacity
    int64_t *ptr
    bint names
    uint8_t *arena
    Py_ssize_t arena_size
    int64_t *spans
    Py_ssize_t spans_capacity

cdef int64_t words_into(const Stream *s, int64_t min_n, int64_t max_n, uint32_t seed,
                        int64_t mask, Found *out) noexcept nogil
cdef int64_t assemble_into(const int32_t *ids, const int64_t *ptrs, Py_ssize_t n_segments,
                           Py_ssize_t n_docs, int mode, bint l2, int bits, int64_t *indptr,
                           int32_t *indices, double *data, int32_t *scratch,
                           int32_t *tmp, int64_t *counts) noexcept nogil

from snowpy._core.tokenize cimport Tables

cdef class WordsRow:
    # one document's row in one call: tokenise, word n-grams, one sorted row
    cdef Tables tables
    cdef object _keep
    cdef int64_t n_segments
    cdef int64_t *min_n
    cdef int64_t *max_n
    cdef uint32_t *seeds
    cdef int64_t per_token
    cdef int64_t mask
    cdef int mode
    cdef bint l2
    cdef int bits
    cdef int64_t size
    cdef uint8_t *out
    cdef int64_t *starts
    cdef int64_t *ends
    cdef int32_t *ids
    cdef int32_t *sort_tmp
    cdef int64_t *sort_counts
    cdef int64_t *ptrs
    cdef int64_t room
    cdef readonly int64_t serial     # rows made so far (the last row: ``last_nnz`` long)
    cdef readonly int64_t last_nnz
    cdef readonly object indices
    cdef readonly object values
    cdef int32_t[::1] _indices
    cdef double[::1] _values
    cdef int _grow(self, int64_t size) except -1
    cdef int64_t row_of(self, const uint8_t *raw, int64_t n, int64_t *invalid) noexcept nogil


cdef class OneDocument:
    # a document-frequency count's direct map bound for one document at a time, and the
    # count's figures as the last compiled call that counted left them
    cdef int32_t[::1] table
    cdef int32_t[::1] row_ids
    cdef int64_t[::1] counts
    cdef const double[::1] factors
    cdef const double *factors_at
    cdef public int64_t documents
    cdef public int64_t next_row
    cdef public bint norm

cdef Py_ssize_t weigh_document(const int64_t *ids, const double *vals, Py_ssize_t n,
                               int32_t *table, int32_t *row_ids, int64_t n_row_ids,
                               int64_t *counts, int64_t n_counts, const double *factors,
                               int64_t n_factors, int64_t *next_row, int64_t *documents,
                               bint learn, bint norm, int64_t *ids_out,
                               double *out) noexcept nogil
