"""A map from 64-bit keys to dense numbers 1, 2, 3..., compiled with numba.

A shared building block: the network gives a row to each feature id seen in
training (:mod:`snowpy.network.links`), and the front end keeps the (feature
id, string fingerprint) pairs it has named (:mod:`snowpy.text.names`). One
probe sequence per key: linear probing over a power-of-two table of ``int64``
(key, number) pairs (key ``-1`` marks an empty slot), so that a probe reads one
cache line, kept between a quarter and half full, with Fibonacci hashing. It
holds 40 to 80 bytes per key (slots and the number-to-key list), whatever the
range of the keys.
"""

from __future__ import annotations

import numpy as np

from snowpy._jit import interpreted, jit

__all__ = ["FeatureMap"]

_EMPTY = -1


@jit(inline="always")
def _slot(slots, key, mask, shift):  # pragma: no cover - compiled
    """The slot holding ``key``, or the empty slot where it would go (reads only)."""
    slot = int((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> shift) & mask
    while slots[2 * slot] != key and slots[2 * slot] != -1:
        slot = (slot + 1) & mask
    return slot


@jit
def _probe(slots, row_ids, ids, out, start, next_row):  # pragma: no cover - compiled
    """Map ``ids[start:]`` to rows, new keys getting new rows; returns (stop, next_row).

    ``slots[2 s]`` holds slot ``s``'s key and ``slots[2 s + 1]`` its row: one
    cache line per probe. Stops early (``stop < ids.size``) when inserting
    would fill the table beyond half; the caller grows it and calls again
    from ``stop``.
    """
    size = slots.size // 2
    mask = size - 1
    shift = np.uint64(64 - int(np.log2(size)))
    limit = size // 2
    for j in range(start, ids.size):
        key = np.int64(ids[j])
        slot = _slot(slots, key, mask, shift)
        if slots[2 * slot] == key:
            out[j] = slots[2 * slot + 1]
            continue
        if next_row >= limit:
            return j, next_row
        slots[2 * slot] = key
        slots[2 * slot + 1] = next_row
        row_ids[next_row - 1] = key
        out[j] = next_row
        next_row += 1
    return ids.size, next_row


@jit
def lookup(slots, ids, out, unseen):  # pragma: no cover - compiled
    """Rows of ``ids`` into ``out`` (``unseen`` for a key not in the map), reading the
    table only: a map whose arrays are read-only (memory-mapped, or shared with other
    processes) answers lookups."""
    size = slots.size // 2
    mask = size - 1
    shift = np.uint64(64 - int(np.log2(size)))
    for j in range(ids.size):
        key = np.int64(ids[j])
        slot = _slot(slots, key, mask, shift)
        out[j] = slots[2 * slot + 1] if slots[2 * slot] == key else unseen


class FeatureMap:
    """Numbers 1, 2, ... for keys in order of first appearance (0 is left free: the
    network's bias row).

    Examples
    --------
    >>> fmap = FeatureMap()
    >>> fmap.rows(np.array([7, 2**40, 7]), insert=True).tolist()
    [1, 2, 1]
    >>> fmap.rows(np.array([5, 2**40]), insert=False, unseen=99).tolist()
    [99, 2]
    >>> fmap.row_ids.tolist()
    [7, 1099511627776]
    """

    def __init__(self, capacity: int = 1024, *, narrow: bool = False) -> None:
        #: keys below 2**31: (key, number) pairs of int32, half the memory
        self.narrow = narrow
        self._dtype = np.int32 if narrow else np.int64
        size = 1 << max(4, int(np.ceil(np.log2(max(capacity, 2) * 2))))
        #: counts the times the arrays were replaced (compiled callers holding them
        #: compare it to know when to take the new ones)
        self.generation = 0
        self._slots = self._empty_slots(size)
        self._row_ids = np.zeros(size // 2, dtype=self._dtype)
        self.next_row = 1

    def _empty_slots(self, size: int) -> np.ndarray:
        slots = np.empty(2 * size, dtype=self._dtype)
        slots[0::2] = _EMPTY
        return slots

    def __len__(self) -> int:
        return self.next_row - 1

    @property
    def row_ids(self) -> np.ndarray:
        """Feature id of each row from 1 on."""
        return self._row_ids[: len(self)]

    @property
    def nbytes(self) -> int:
        return self._slots.nbytes + self._row_ids.nbytes

    def rows(self, ids: np.ndarray, *, insert: bool, unseen: int = 0,
             checked: bool = False) -> np.ndarray:
        """Row of each id; new ids get new rows when ``insert``, else ``unseen``.

        ``checked``: the caller knows the ids are contiguous ``int32``/``int64``
        keys the map can hold (the one-example path skips the checks).
        """
        if not checked:
            if ids.dtype not in (np.int32, np.int64):  # CSR indices are int32/int64 already
                ids = ids.astype(np.int64)
            ids = np.ascontiguousarray(ids)
            if self.narrow and ids.dtype == np.int64 and ids.size \
                    and (ids.max() >= 2**31 or ids.min() < 0):
                raise ValueError("a narrow map holds keys from 0 to 2**31 - 1")
        out = np.empty(ids.size, dtype=np.int32)
        if not insert:
            if interpreted():
                with np.errstate(over="ignore"):
                    lookup(self._slots, ids, out, unseen)
            else:
                lookup(self._slots, ids, out, unseen)
            return out
        start, before = 0, self.next_row
        while True:
            if interpreted():
                # Fibonacci hashing multiplies modulo 2**64 on purpose: numpy's overflow
                # warning (pure-Python runs) is not an error here
                with np.errstate(over="ignore"):
                    start, self.next_row = _probe(self._slots, self._row_ids, ids, out, start,
                                                  self.next_row)
            else:
                start, self.next_row = _probe(self._slots, self._row_ids, ids, out, start,
                                              self.next_row)
            if start == ids.size:
                return out
            # as many new keys to come as the part read so far had, up to four times the
            # room (each doubling inserts every key again: a batch of 14 million ids
            # grew the map twelve times); new keys only get rarer, so this overshoots
            coming = (self.next_row - before) * (ids.size - start) // max(start, 1)
            self._grow(min(self.next_row + coming, self._slots.size))  # (room: size / 4)

    def _grow(self, rows: int = 0) -> None:
        """Twice the slots, or enough to hold ``rows`` rows at most half full."""
        used = self.row_ids.copy()
        self.generation += 1
        size = self._slots.size  # twice the slots: between a quarter and half full
        while size < 2 * rows:  # (rows fill at most half the slots)
            size *= 2
        self._slots = self._empty_slots(size)
        self._row_ids = np.zeros(size // 2, dtype=self._dtype)
        self.next_row = 1
        self.rows(used, insert=True)  # same order: rows keep their numbers
