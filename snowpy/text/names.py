"""The inverse feature map: hash id -> the feature strings that produced it.

Kept only when asked (``keep_names=True``). Extractors then also copy the
bytes they hash into an arena; each (id, fingerprint of the bytes) pair is
looked up in a compiled hash set, and the bytes of pairs never seen before
are appended to one byte array. Nothing is a Python object until asked for:
per name, an id, an offset into the bytes and the number of the extractor
that made it (which turns the bytes into a readable name: a namespace, the
n-gram's tokens). Two different strings with the same id are a collision;
both are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from snowpy._core.hashing import gather_names, name_keys, novel_names, stored_name_keys
from snowpy.hashmap import FeatureMap

__all__ = ["AS_IS", "NameIndex"]

#: Extractor number of a name stored already readable (model files of format 1).
AS_IS = 255


def _grown(array: np.ndarray, length: int) -> np.ndarray:
    if length <= array.shape[0]:
        return array
    grown = np.empty(max(length, 2 * array.shape[0]), dtype=array.dtype)
    grown[:array.shape[0]] = array
    return grown


class NameIndex:
    """Feature strings seen per id, in order of first appearance, as flat arrays.

    ``labels`` turns an extractor's number and raw bytes into a readable name.
    """

    def __init__(self, labels: Sequence[Callable[[str], str]] = (), *,
                 stored: tuple[np.ndarray, ...] | None = None) -> None:
        self.labels = list(labels)
        self._pairs: FeatureMap | None = FeatureMap()
        self._ids = np.empty(1024, dtype=np.int64)
        self._segments = np.empty(1024, dtype=np.uint8)
        self._offsets = np.zeros(1025, dtype=np.int64)
        self._blob = np.empty(1 << 16, dtype=np.uint8)
        self._count = 0
        if stored is not None:  # (ids, segments, offsets, blob) of a model file, checked
            ids, segments, offsets, blob = stored
            self._pairs = None
            self._ids = np.array(ids, dtype=np.int64)
            self._segments = np.array(segments, dtype=np.uint8)
            self._offsets = np.array(offsets, dtype=np.int64)
            self._blob = np.array(blob, dtype=np.uint8)
            self._count = ids.size
        self._order: np.ndarray | None = None
        self._wanted: FeatureMap | None = None
        self._first = np.zeros(0, dtype=np.int64)
        self._collided: set[int] = set()

    def __len__(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        arrays = (self._ids, self._segments, self._offsets, self._blob)
        return sum(a.nbytes for a in arrays) + (self._pairs.nbytes if self._pairs else 0)

    # ----------------------------------------------------------- collecting
    def collect_for(self, ids: np.ndarray) -> FeatureMap:
        """Collect names of these ids only, from now until :meth:`seal`: one fingerprint
        slot per id deduplicates them (no set of pairs), arrays sized up front."""
        wanted = FeatureMap(capacity=ids.size)
        wanted.rows(np.asarray(ids, dtype=np.int64), insert=True)
        self._wanted = wanted
        self._first = np.zeros(wanted.next_row, dtype=np.int64)
        if self._count:  # names known already (a model file): their fingerprints
            keys = np.empty(self._count, dtype=np.int64)
            stored_name_keys(self._ids[:self._count], self._offsets[:self._count + 1], self._blob,
                         keys)
            rows = wanted.rows(self._ids[:self._count], insert=False, unseen=-1)
            fresh = np.empty(self._count, dtype=np.int8)
            novel_names(rows, keys, self._first, fresh)
            self._collided = {int(k) for k in keys[fresh == 2]}
        room = self._count + int(1.05 * ids.size) + 16
        self._ids, self._segments = _grown(self._ids, room), _grown(self._segments, room)
        self._offsets = _grown(self._offsets, room + 1)
        return wanted

    def add(self, ids: np.ndarray, spans: np.ndarray, arena: np.ndarray, segment: int) -> None:
        """Record the strings behind ``ids`` (extractor ``segment``'s output for a chunk)."""
        if ids.size == 0:
            return
        keys = np.empty(ids.size, dtype=np.int64)
        name_keys(ids, spans, arena, keys)
        if self._wanted is not None:
            rows = self._wanted.rows(ids, insert=False, unseen=-1)
            fresh = np.empty(ids.size, dtype=np.int8)
            novel_names(rows, keys, self._first, fresh)
            picks = np.flatnonzero(fresh == 1)
            for j in np.flatnonzero(fresh == 2):  # another string for an id: rare
                if int(keys[j]) not in self._collided:
                    self._collided.add(int(keys[j]))
                    picks = np.append(picks, j)
            picks.sort()
        else:
            pairs = self._known_pairs()
            before = pairs.next_row
            known_rows = pairs.rows(keys, insert=True)
            new = np.flatnonzero(known_rows >= before)
            if new.size == 0:
                return
            _, first = np.unique(known_rows[new], return_index=True)
            picks = new[np.sort(first)]
        if picks.size == 0:
            return
        lengths = spans[picks, 1] - spans[picks, 0]
        count, end = self._count, int(self._offsets[self._count])
        new_count, new_end = count + picks.size, end + int(lengths.sum())
        self._ids = _grown(self._ids, new_count)
        self._segments = _grown(self._segments, new_count)
        self._offsets = _grown(self._offsets, new_count + 1)
        self._blob = _grown(self._blob, new_end)
        self._ids[count:new_count] = ids[picks]
        self._segments[count:new_count] = segment
        self._offsets[count + 1:new_count + 1] = end + np.cumsum(lengths)
        gather_names(picks, spans, arena, self._blob, end)
        self._count = new_count
        self._order = None

    def _known_pairs(self) -> FeatureMap:
        """The (id, fingerprint) set, rebuilt from the stored names when it was dropped."""
        if self._pairs is None:
            pairs = FeatureMap()
            if self._count:
                keys = np.empty(self._count, dtype=np.int64)
                stored_name_keys(self._ids[:self._count], self._offsets[:self._count + 1],
                             self._blob, keys)
                pairs.rows(keys, insert=True)
            self._pairs = pairs
        return self._pairs

    @property
    def collecting(self) -> bool:
        """A :meth:`collect_for` is under way (not sealed yet)."""
        return self._wanted is not None

    def seal(self) -> None:
        """Free what keeps names from being recorded twice (rebuilt if needed)."""
        self._pairs = None
        self._wanted = None
        self._first = np.zeros(0, dtype=np.int64)
        self._collided = set()
        for name in ("_ids", "_segments"):  # give back the room collected ahead
            setattr(self, name, getattr(self, name)[:self._count].copy())
        self._offsets = self._offsets[:self._count + 1].copy()
        self._blob = self._blob[:int(self._offsets[self._count])].copy()

    # -------------------------------------------------------------- reading
    def _name(self, j: int) -> str:
        raw = self._blob[self._offsets[j]:self._offsets[j + 1]].tobytes()
        text = raw.decode("utf-8", "replace")
        segment = int(self._segments[j])
        if segment == AS_IS or segment >= len(self.labels):
            return text
        return self.labels[segment](text)

    def names_of(self, ids: Iterable[int]) -> dict[int, list[str]]:
        """The strings of the given ids (those that have any), decoded now."""
        if self._order is None:
            self._order = np.argsort(self._ids[:self._count], kind="stable")
        order = self._order
        sorted_ids = self._ids[:self._count][order]
        wanted = np.asarray(list(ids) if not isinstance(ids, np.ndarray) else ids,
                            dtype=np.int64)
        lows = np.searchsorted(sorted_ids, wanted, side="left")
        highs = np.searchsorted(sorted_ids, wanted, side="right")
        return {int(feature_id): [self._name(int(j)) for j in order[lo:hi]]
                for feature_id, lo, hi in zip(wanted, lows, highs) if hi > lo}

    @property
    def names(self) -> dict[int, list[str]]:
        """Every id with its strings (decodes them all: for small vocabularies)."""
        return self.names_of(np.unique(self._ids[:self._count]))

    def collisions(self) -> dict[int, int]:
        """Ids shared by several strings, with the number of extra strings."""
        ids, counts = np.unique(self._ids[:self._count], return_counts=True)
        return {int(i): int(c) - 1 for i, c in zip(ids, counts) if c > 1}

    # ---------------------------------------------------------- model files
    def arrays(self, keep_ids: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The names as arrays for a model file; of ``keep_ids`` only, when given."""
        ids = self._ids[:self._count]
        offsets = self._offsets[:self._count + 1]
        picks = np.arange(self._count) if keep_ids is None else \
            np.flatnonzero(np.isin(ids, keep_ids))
        order = picks[np.argsort(ids[picks], kind="stable")]  # by id: packs well
        lengths = offsets[order + 1] - offsets[order]
        spans = np.stack([offsets[order], offsets[order + 1]], axis=1)
        blob = np.empty(int(lengths.sum()), dtype=np.uint8)
        gather_names(np.arange(order.size), spans, self._blob, blob, 0)
        return {"names_ids": ids[order].copy(), "names_segments": self._segments[order].copy(),
                "names_offsets": np.r_[0, np.cumsum(lengths)].astype(np.int64),
                "names_blob": blob}

    def pack(self, keep_ids: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, int]]:
        """The names as one zlib-compressed byte array and its description.

        Ids are stored as differences from the previous one (sorted), lengths as
        4-byte integers; text and small differences compress several fold.
        """
        import zlib

        arrays = self.arrays(keep_ids)
        ids = arrays["names_ids"]
        parts = (np.diff(ids, prepend=0).astype(np.int64), arrays["names_segments"],
                 np.diff(arrays["names_offsets"]).astype(np.uint32), arrays["names_blob"])
        del arrays
        deflater = zlib.compressobj(6)
        chunks = [deflater.compress(np.ascontiguousarray(part).data.cast("B"))
                  for part in parts]  # streamed: no joined copy of the whole
        chunks.append(deflater.flush())
        packed = np.frombuffer(b"".join(chunks), dtype=np.uint8)
        raw_bytes = sum(part.nbytes for part in parts)
        return packed, {"count": int(ids.size), "text_bytes": int(parts[3].size),
                        "raw_bytes": int(raw_bytes)}

    @staticmethod
    def unpack(packed: np.ndarray, info: dict[str, Any], where: str) -> dict[str, np.ndarray]:
        """The arrays :meth:`pack` compressed; the sizes are checked, never trusted."""
        import zlib

        from snowpy.exceptions import ModelFileError

        try:
            count, text, size = int(info["count"]), int(info["text_bytes"]), \
                int(info["raw_bytes"])
        except (KeyError, TypeError, ValueError):
            raise ModelFileError(f"{where}: the names' description is invalid") from None
        if count < 0 or text < 0 or size != count * 13 + text:
            raise ModelFileError(f"{where}: the names' description is inconsistent")
        inflater = zlib.decompressobj()
        try:
            raw = inflater.decompress(packed.tobytes(), size + 1)
        except zlib.error as exc:
            raise ModelFileError(f"{where}: the names are damaged ({exc})") from None
        if len(raw) != size or inflater.unconsumed_tail or not inflater.eof:
            raise ModelFileError(f"{where}: the names do not have their declared size")
        steps = np.frombuffer(raw, dtype=np.int64, count=count)
        segments = np.frombuffer(raw, dtype=np.uint8, count=count, offset=8 * count)
        lengths = np.frombuffer(raw, dtype=np.uint32, count=count, offset=9 * count)
        blob = np.frombuffer(raw, dtype=np.uint8, offset=13 * count)
        offsets = np.r_[0, np.cumsum(lengths, dtype=np.int64)]
        return {"names_ids": np.cumsum(steps), "names_segments": segments,
                "names_offsets": offsets, "names_blob": blob}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], labels: Sequence[Callable[[str], str]],
                    where: str) -> NameIndex:
        """Names from :meth:`arrays` (or the per-feature layout of format 1 files)."""
        from snowpy.exceptions import ModelFileError

        if "names_offsets" in arrays:
            ids, segments = arrays["names_ids"], arrays["names_segments"]
            offsets, blob = arrays["names_offsets"], arrays["names_blob"]
        elif "names_counts" in arrays:  # format 1: per feature, readable strings
            counts, lengths = arrays["names_counts"], arrays["names_lengths"]
            if counts.shape != arrays["names_ids"].shape or np.any(counts < 0):
                raise ModelFileError(f"{where}: the inverse feature map is inconsistent")
            ids = np.repeat(arrays["names_ids"], counts)
            segments = np.full(ids.size, AS_IS, dtype=np.uint8)
            offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
            blob = arrays["names_blob"]
        else:
            return cls(labels)
        if ids.ndim != 1 or segments.shape != ids.shape or offsets.shape != (ids.size + 1,) \
                or offsets[0] != 0 or np.any(np.diff(offsets) < 0) \
                or offsets[-1] != blob.size:
            raise ModelFileError(f"{where}: the inverse feature map is inconsistent")
        return cls(labels, stored=(ids, segments, offsets, blob))
