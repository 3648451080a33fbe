# The hash functions every compiled module shares, inlined where they are used.
#
# murmur3: MurmurHash3 x86_32 (Austin Appleby, public domain), the stable hash of
# feature strings (scikit-learn's HashingVectorizer and Vowpal Wabbit use it);
# mix64: splitmix64's finaliser; fibonacci: the feature map's slot of a key.

from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t


cdef inline uint32_t _rotl32(uint32_t x, int r) noexcept nogil:
    return (x << r) | (x >> (32 - r))


cdef inline uint32_t murmur3(const uint8_t *data, Py_ssize_t length,
                             uint32_t seed) noexcept nogil:
    """MurmurHash3 x86_32 of ``data[:length]``."""
    cdef uint32_t c1 = 0xCC9E2D51U
    cdef uint32_t c2 = 0x1B873593U
    cdef uint32_t h = seed
    cdef uint32_t k
    cdef Py_ssize_t blocks = length // 4
    cdef Py_ssize_t i
    cdef const uint8_t *tail
    for i in range(blocks):
        k = (<uint32_t>data[4 * i] | (<uint32_t>data[4 * i + 1] << 8)
             | (<uint32_t>data[4 * i + 2] << 16) | (<uint32_t>data[4 * i + 3] << 24))
        k *= c1
        k = _rotl32(k, 15)
        k *= c2
        h ^= k
        h = _rotl32(h, 13)
        h = h * 5 + 0xE6546B64U
    tail = data + 4 * blocks
    k = 0
    i = length & 3
    if i == 3:
        k ^= <uint32_t>tail[2] << 16
    if i >= 2:
        k ^= <uint32_t>tail[1] << 8
    if i >= 1:
        k ^= <uint32_t>tail[0]
        k *= c1
        k = _rotl32(k, 15)
        k *= c2
        h ^= k
    h ^= <uint32_t>length
    h ^= h >> 16
    h *= 0x85EBCA6BU
    h ^= h >> 13
    h *= 0xC2B2AE35U
    h ^= h >> 16
    return h


cdef inline uint64_t mix64(uint64_t z) noexcept nogil:
    """splitmix64's finaliser."""
    z ^= z >> 30
    z *= 0xBF58476D1CE4E5B9ULL
    z ^= z >> 27
    z *= 0x94D049BB133111EBULL
    z ^= z >> 31
    return z


cdef inline Py_ssize_t fibonacci(int64_t key, Py_ssize_t mask, int shift) noexcept nogil:
    """The first slot of ``key`` in a table of ``mask + 1`` slots (``shift`` is 64 minus
    its log2): Fibonacci hashing."""
    return <Py_ssize_t>((<uint64_t>key * 0x9E3779B97F4A7C15ULL) >> shift) & mask
