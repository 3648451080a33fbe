"""Stable hashes, compiled: MurmurHash3 of feature strings, and the 64-bit keys that
order a shuffled epoch and fingerprint feature names.

>>> murmurhash3_32(b"hello")
613153351
"""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t

from snowpy._core._hash cimport mix64, murmur3
from snowpy._core._types cimport index_t, other_index_t

#: Seed of the fingerprints of feature names (the inverse feature map).
cdef uint32_t _NAME_SEED = 0x2545F491U

cdef uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL
cdef uint64_t LABEL_OFFSET = 1ULL << 40


def murmurhash3_32(const uint8_t[::1] data, uint32_t seed=0):
    """MurmurHash3 x86_32 of a bytes-like object, unsigned."""
    if data.shape[0] == 0:
        return murmur3(NULL, 0, seed)
    return murmur3(&data[0], data.shape[0], seed)


def hash_spans(const uint8_t[::1] data, const int64_t[::1] offsets, uint32_t seed,
               int64_t mask, int64_t[::1] out):
    """``out[j] = murmur3(data[offsets[j]:offsets[j + 1]], seed) & mask``."""
    cdef Py_ssize_t j
    cdef const uint8_t *base = &data[0] if data.shape[0] else NULL
    with nogil:
        for j in range(out.shape[0]):
            out[j] = murmur3(base + offsets[j], offsets[j + 1] - offsets[j], seed) & mask


def example_keys(const index_t[::1] indptr, const other_index_t[::1] indices,
                 const uint64_t[::1] data_bits, const int64_t[::1] y_indptr,
                 const int32_t[::1] y_targets, uint64_t[::1] keys):
    """A 64-bit key per CSR row from its features, strengths (their bits) and labels:
    the sum of splitmix64 of each, so equal examples get equal keys anywhere."""
    cdef Py_ssize_t i, j
    cdef uint64_t total
    with nogil:
        for i in range(keys.shape[0]):
            total = 0
            for j in range(indptr[i], indptr[i + 1]):
                total += mix64((<uint64_t>indices[j] * GOLDEN) ^ data_bits[j])
            for j in range(y_indptr[i], y_indptr[i + 1]):
                total += mix64(<uint64_t>y_targets[j] + LABEL_OFFSET)
            keys[i] = total


def mix_keys(const uint64_t[::1] keys, uint64_t salt, uint64_t[::1] out):
    """``out = splitmix64(keys ^ salt)``: the sort keys of a seeded shuffle."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(keys.shape[0]):
            out[i] = mix64(keys[i] ^ salt)


def name_keys(const index_t[::1] ids, const int64_t[:, ::1] spans, const uint8_t[::1] arena,
              int64_t[::1] out):
    """``(id << 32) | fingerprint`` of each feature's bytes ``arena[spans[j, 0]:spans[j, 1]]``."""
    cdef Py_ssize_t j
    cdef const uint8_t *base = &arena[0] if arena.shape[0] else NULL
    with nogil:
        for j in range(ids.shape[0]):
            out[j] = (<int64_t>ids[j] << 32) | <int64_t>murmur3(
                base + spans[j, 0], spans[j, 1] - spans[j, 0], _NAME_SEED)


def stored_name_keys(const index_t[::1] ids, const int64_t[::1] offsets,
                     const uint8_t[::1] blob, int64_t[::1] out):
    """As :func:`name_keys` for names stored back to back (``offsets``)."""
    cdef Py_ssize_t j
    cdef const uint8_t *base = &blob[0] if blob.shape[0] else NULL
    with nogil:
        for j in range(ids.shape[0]):
            out[j] = (<int64_t>ids[j] << 32) | <int64_t>murmur3(
                base + offsets[j], offsets[j + 1] - offsets[j], _NAME_SEED)


def novel_names(const int32_t[::1] rows, const int64_t[::1] keys, int64_t[::1] first,
                int8_t[::1] fresh):
    """Mark the names not recorded yet, by wanted row: ``first[r]`` keeps the first
    fingerprint seen for row ``r`` (0: none); another fingerprint is a collision
    (``fresh`` 2)."""
    cdef Py_ssize_t j
    cdef int32_t r
    cdef int64_t key
    with nogil:
        for j in range(rows.shape[0]):
            r = rows[j]
            fresh[j] = 0
            if r < 0:
                continue
            key = keys[j] | 1  # never 0
            if first[r] == 0:
                first[r] = key
                fresh[j] = 1
            elif first[r] != key:
                fresh[j] = 2


def gather_names(const int64_t[::1] picks, const int64_t[:, ::1] spans,
                 const uint8_t[::1] arena, uint8_t[::1] blob, int64_t at):
    """Append the bytes of ``spans[picks]`` to ``blob`` from ``at``; returns the end."""
    cdef Py_ssize_t q, j
    cdef int64_t b
    with nogil:
        for q in range(picks.shape[0]):
            j = picks[q]
            for b in range(spans[j, 0], spans[j, 1]):
                blob[at] = arena[b]
                at += 1
    return at


from snowpy._core._hash cimport murmur3_64


def murmurhash3_64(const uint8_t[::1] data, uint64_t seed=0):
    """The first 64 bits of MurmurHash3 x64_128 of a bytes-like object."""
    if data.shape[0] == 0:
        return murmur3_64(NULL, 0, seed)
    return murmur3_64(&data[0], data.shape[0], seed)


def hash_documents(const uint8_t[::1] data, const int64_t[::1] offsets, uint64_t seed,
                   uint64_t[::1] out, bint joined):
    """``out[d]``: the 64-bit hash of document ``d``'s bytes ``data[offsets[d]:offsets[d
    + 1]]``; ``joined``: the documents are NUL-joined, each keeping its separator, left
    out of the hash."""
    cdef Py_ssize_t d
    cdef int64_t begin, end
    cdef const uint8_t *base = &data[0] if data.shape[0] else NULL
    with nogil:
        for d in range(out.shape[0]):
            begin = offsets[d]
            end = offsets[d + 1]
            if joined and end > begin and base[end - 1] == 0:
                end -= 1
            out[d] = murmur3_64(base + begin, end - begin, seed)
