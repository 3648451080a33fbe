"""The feature map's probes, compiled: 64-bit keys to dense numbers 1, 2, 3...

Linear probing over a power-of-two table of (key, number) pairs (key -1: an empty
slot), one cache line per probe, Fibonacci hashing; the table is kept between a
quarter and half full by :class:`snowpy.hashmap.FeatureMap`, which owns the arrays
(``int32`` pairs for keys below 2**31, ``int64`` otherwise).
"""

from libc.stdint cimport int32_t, int64_t

from snowpy._core._hash cimport fibonacci
from snowpy._core._types cimport index_t

ctypedef fused key_t:
    int32_t
    int64_t


cdef inline int _shift_of(Py_ssize_t size) noexcept nogil:
    cdef int log = 0
    while (<Py_ssize_t>1 << log) < size:
        log += 1
    return 64 - log


def probe(key_t[::1] slots, key_t[::1] row_ids, const index_t[::1] ids, int32_t[::1] out,
          Py_ssize_t start, int64_t next_row):
    """Map ``ids[start:]`` to rows, new keys getting new rows; returns ``(stop, next_row)``.

    Stops early (``stop < ids.size``) when inserting would fill the table beyond
    half; the caller grows it and calls again from ``stop``.
    """
    cdef Py_ssize_t size = slots.shape[0] // 2
    cdef Py_ssize_t mask = size - 1
    cdef int shift = _shift_of(size)
    cdef int64_t limit = size // 2
    cdef Py_ssize_t j, slot
    cdef int64_t key
    cdef Py_ssize_t stop = ids.shape[0]
    with nogil:
        for j in range(start, ids.shape[0]):
            key = ids[j]
            slot = fibonacci(key, mask, shift)
            while slots[2 * slot] != key and slots[2 * slot] != -1:
                slot = (slot + 1) & mask
            if slots[2 * slot] == key:
                out[j] = <int32_t>slots[2 * slot + 1]
                continue
            if next_row >= limit:
                stop = j
                break
            slots[2 * slot] = <key_t>key
            slots[2 * slot + 1] = <key_t>next_row
            row_ids[next_row - 1] = <key_t>key
            out[j] = <int32_t>next_row
            next_row += 1
    return stop, next_row


def lookup(const key_t[::1] slots, const index_t[::1] ids, int32_t[::1] out, int32_t unseen):
    """Rows of ``ids`` into ``out`` (``unseen`` for a key not in the map), reading the
    table only (a read-only, memory-mapped or shared map answers lookups)."""
    cdef Py_ssize_t size = slots.shape[0] // 2
    cdef Py_ssize_t mask = size - 1
    cdef int shift = _shift_of(size)
    cdef Py_ssize_t j, slot
    cdef int64_t key
    with nogil:
        for j in range(ids.shape[0]):
            key = ids[j]
            slot = fibonacci(key, mask, shift)
            while slots[2 * slot] != key and slots[2 * slot] != -1:
                slot = (slot + 1) & mask
            out[j] = <int32_t>slots[2 * slot + 1] if slots[2 * slot] == key else unseen


def direct_probe(int32_t[::1] table, key_t[::1] row_ids, const index_t[::1] ids,
                 int32_t[::1] out, Py_ssize_t start, int64_t next_row):
    """As :func:`probe` for a direct table (``table[key]``: the key's number, 0 for none):
    stops early when ``row_ids`` is full."""
    cdef Py_ssize_t j
    cdef int64_t key
    cdef int32_t found
    cdef Py_ssize_t stop = ids.shape[0]
    cdef int64_t capacity = row_ids.shape[0]
    cdef int64_t width = table.shape[0]
    for j in range(start, ids.shape[0]):
        if ids[j] < 0 or ids[j] >= width:
            raise ValueError(f"feature id {ids[j]} is beyond the map's {width}")
    with nogil:
        for j in range(start, ids.shape[0]):
            key = ids[j]
            found = table[key]
            if found:
                out[j] = found
                continue
            if next_row > capacity:
                stop = j
                break
            table[key] = <int32_t>next_row
            row_ids[next_row - 1] = <key_t>key
            out[j] = <int32_t>next_row
            next_row += 1
    return stop, next_row


def direct_lookup(const int32_t[::1] table, const index_t[::1] ids, int32_t[::1] out,
                  int32_t unseen):
    """As :func:`lookup` for a direct table (ids beyond it are unseen)."""
    cdef Py_ssize_t j
    cdef int64_t key
    cdef int64_t width = table.shape[0]
    with nogil:
        for j in range(ids.shape[0]):
            key = ids[j]
            if key < 0 or key >= width or table[key] == 0:
                out[j] = unseen
            else:
                out[j] = table[key]
