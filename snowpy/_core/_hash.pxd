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


cdef inline uint64_t _rotl64(uint64_t x, int r) noexcept nogil:
    return (x << r) | (x >> (64 - r))


cdef inline uint64_t _fmix64(uint64_t k) noexcept nogil:
    k ^= k >> 33
    k *= 0xFF51AFD7ED558CCDULL
    k ^= k >> 33
    k *= 0xC4CEB9FE1A85EC53ULL
    k ^= k >> 33
    return k


cdef inline uint64_t _block64(const uint8_t *p) noexcept nogil:
    return (<uint64_t>p[0] | (<uint64_t>p[1] << 8) | (<uint64_t>p[2] << 16)
            | (<uint64_t>p[3] << 24) | (<uint64_t>p[4] << 32) | (<uint64_t>p[5] << 40)
            | (<uint64_t>p[6] << 48) | (<uint64_t>p[7] << 56))


cdef inline uint64_t murmur3_64(const uint8_t *data, Py_ssize_t length,
                                uint64_t seed) noexcept nogil:
    """The first half of MurmurHash3 x64_128 of ``data[:length]``: the 64-bit key of a
    document's text (shuffling, folds)."""
    cdef uint64_t c1 = 0x87C37B91114253D5ULL
    cdef uint64_t c2 = 0x4CF5AD432745937FULL
    cdef uint64_t h1 = seed
    cdef uint64_t h2 = seed
    cdef uint64_t k1, k2
    cdef Py_ssize_t blocks = length // 16
    cdef Py_ssize_t i
    cdef const uint8_t *tail
    cdef int rest
    for i in range(blocks):
        k1 = _block64(data + 16 * i)
        k2 = _block64(data + 16 * i + 8)
        k1 *= c1
        k1 = _rotl64(k1, 31)
        k1 *= c2
        h1 ^= k1
        h1 = _rotl64(h1, 27)
        h1 += h2
        h1 = h1 * 5 + 0x52DCE729ULL
        k2 *= c2
        k2 = _rotl64(k2, 33)
        k2 *= c1
        h2 ^= k2
        h2 = _rotl64(h2, 31)
        h2 += h1
        h2 = h2 * 5 + 0x38495AB5ULL
    tail = data + 16 * blocks
    rest = length & 15
    k1 = 0
    k2 = 0
    if rest > 8:
        for i in range(rest - 1, 7, -1):
            k2 ^= (<uint64_t>tail[i]) << (8 * (i - 8))
        k2 *= c2
        k2 = _rotl64(k2, 33)
        k2 *= c1
        h2 ^= k2
    if rest > 0:
        for i in range((rest if rest < 8 else 8) - 1, -1, -1):
            k1 ^= (<uint64_t>tail[i]) << (8 * i)
        k1 *= c1
        k1 = _rotl64(k1, 31)
        k1 *= c2
        h1 ^= k1
    h1 ^= <uint64_t>length
    h2 ^= <uint64_t>length
    h1 += h2
    h2 += h1
    h1 = _fmix64(h1)
    h2 = _fmix64(h2)
    h1 += h2
    return h1
