"""Feature id to row: an open-addressing hash map compiled with numba.

Compact storage gives a row of the weight table only to features seen in
training. This map finds the row of each column id of a CSR matrix in one
probe sequence per non-zero: linear probing over a power-of-two table of
``int64`` keys (``-1`` marks an empty slot) kept at most half full, with
Fibonacci hashing. It holds about 12 to 24 bytes per feature seen, whatever
the width of the feature space.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["FeatureMap"]

_EMPTY = -1


@numba.njit(nogil=True, cache=True)
def _probe(keys, rows, row_ids, ids, out, start, next_row, insert, unseen):  # pragma: no cover
    """Map ``ids[start:]`` to rows; returns (stop, next_row).

    Stops early (``stop < ids.size``) when inserting would fill the table
    beyond half; the caller grows it and calls again from ``stop``.
    """
    mask = keys.size - 1
    shift = np.uint64(64 - int(np.log2(keys.size)))
    limit = keys.size // 2
    for j in range(start, ids.size):
        key = ids[j]
        slot = int((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> shift) & mask
        while True:
            current = keys[slot]
            if current == key:
                out[j] = rows[slot]
                break
            if current == -1:
                if insert:
                    if next_row >= limit:
                        return j, next_row
                    keys[slot] = key
                    rows[slot] = next_row
                    row_ids[next_row - 1] = key
                    out[j] = next_row
                    next_row += 1
                else:
                    out[j] = unseen
                break
            slot = (slot + 1) & mask
    return ids.size, next_row


class FeatureMap:
    """Rows 1, 2, ... for feature ids in order of first appearance (row 0 is the bias).

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

    def __init__(self, capacity: int = 1024) -> None:
        size = 1 << max(4, int(np.ceil(np.log2(max(capacity, 2) * 2))))
        self._keys = np.full(size, _EMPTY, dtype=np.int64)
        self._rows = np.zeros(size, dtype=np.int32)
        self._row_ids = np.zeros(size // 2, dtype=np.int64)
        self.next_row = 1

    def __len__(self) -> int:
        return self.next_row - 1

    @property
    def row_ids(self) -> np.ndarray:
        """Feature id of each row from 1 on."""
        return self._row_ids[: len(self)]

    @property
    def nbytes(self) -> int:
        return self._keys.nbytes + self._rows.nbytes + self._row_ids.nbytes

    def rows(self, ids: np.ndarray, *, insert: bool, unseen: int = 0) -> np.ndarray:
        """Row of each id; new ids get new rows when ``insert``, else ``unseen``."""
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        out = np.empty(ids.size, dtype=np.int32)
        start = 0
        while True:
            start, self.next_row = _probe(
                self._keys, self._rows, self._row_ids, ids, out, start, self.next_row,
                insert, unseen,
            )
            if start == ids.size:
                return out
            self._grow()

    def _grow(self) -> None:
        used = self.row_ids.copy()
        size = self._keys.size * 4  # few rehashes; the table stays small enough to cache
        self._keys = np.full(size, _EMPTY, dtype=np.int64)
        self._rows = np.zeros(size, dtype=np.int32)
        self._row_ids = np.zeros(size // 2, dtype=np.int64)
        self.next_row = 1
        self.rows(used, insert=True)  # same order: rows keep their numbers
