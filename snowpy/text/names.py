"""The inverse feature map: hash id -> the feature strings that produced it.

Kept only when asked (``keep_names=True``). Extractors then also copy the
bytes they hash into an arena; here each (id, fingerprint of the bytes)
pair is looked up in a compiled hash set, and only pairs never seen before
are decoded in Python. The cost is one extra hash and probe per feature and
one Python string per *distinct* feature, not per occurrence. Two different
strings with the same id are a collision; both are kept.
"""

from __future__ import annotations

from collections import defaultdict

import numba
import numpy as np

from snowpy.network.feature_map import FeatureMap
from snowpy.text.hashing import murmur_bytes

__all__ = ["NameIndex"]

_FINGERPRINT_SEED = 0x2545F491


@numba.njit(nogil=True, cache=True)
def _keys(ids, spans, arena, out):  # pragma: no cover - compiled
    for j in range(ids.shape[0]):
        fingerprint = murmur_bytes(arena, spans[j, 0], spans[j, 1], 0x2545F491)
        out[j] = (np.int64(ids[j]) << 32) | np.int64(fingerprint)


class NameIndex:
    """Feature strings seen per id, in order of first appearance."""

    def __init__(self) -> None:
        self._pairs = FeatureMap()
        self.names: dict[int, list[str]] = defaultdict(list)

    def add(self, ids: np.ndarray, spans: np.ndarray, arena: np.ndarray, label) -> None:
        """Record the strings behind ``ids`` (one extractor's output for a chunk)."""
        if ids.size == 0:
            return
        keys = np.empty(ids.size, dtype=np.int64)
        _keys(ids, spans, arena, keys)
        before = self._pairs.next_row
        rows = self._pairs.rows(keys, insert=True)
        fresh = np.flatnonzero(rows >= before)
        if fresh.size == 0:
            return
        _, first = np.unique(rows[fresh], return_index=True)
        raw = arena.tobytes()
        for j in fresh[first]:
            text = label(raw[spans[j, 0]:spans[j, 1]].decode("utf-8", "replace"))
            known = self.names[int(ids[j])]
            if text not in known:  # a name restored from a model file is known already
                known.append(text)

    def restore(self, feature_id: int, strings: list[str]) -> None:
        """Set the strings of one id (from a model file)."""
        self.names[feature_id] = list(strings)

    def collisions(self) -> dict[int, int]:
        """Ids shared by several strings, with the number of extra strings."""
        return {i: len(v) - 1 for i, v in self.names.items() if len(v) > 1}
