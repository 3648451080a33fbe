"""How a row's strengths are made: the value of each distinct id (compiled, in the
assembly of each document's row: :func:`snowpy._core.extract.assemble_rows`), then,
with ``idf=True``, each times its feature's inverse document frequency
(:class:`DocumentFrequencies`), then the row divided by its Euclidean norm:

* ``binary``: 1 (presence, SNoW's default);
* ``count``: the number of occurrences;
* ``log``: ``1 + ln(count)`` (sublinear term frequency).

Rows come out sorted and without duplicates, scikit-learn's canonical CSR format.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy._core.extract import (
    OneDocument,
    count_numbers,
    idf_table,
    weigh_rows,
)
from snowpy._rows import Rows
from snowpy.hashmap import FeatureMap

__all__ = ["VALUE_MODES", "DocumentFrequencies"]

VALUE_MODES = ("binary", "count", "log")

_NONE = np.zeros(0, np.int64)
_NONE_F = np.zeros(0, np.float64)


class DocumentFrequencies:
    """How many of the documents counted hold each feature: the front end's inverse
    document frequencies, ``idf(f) = ln((1 + n) / (1 + df(f))) + 1`` for the ``n``
    documents counted (scikit-learn's ``TfidfTransformer(smooth_idf=True)``).

    :meth:`count` adds documents (a fit counts all its training documents before
    learning any); :meth:`weigh` multiplies each strength by its feature's idf and
    drops the features never counted, as a vocabulary would: they have no weight in any
    network trained on the counted documents, and leaving them out of the norm keeps a
    row's scale that of the documents learned. ``weigh(rows, each=True)`` counts each
    document, in order, before weighing it (``partial_fit``, ``learn_one``, a stream):
    a document's idf is that of the documents up to it, however the stream is cut
    into blocks.

    >>> frequencies = DocumentFrequencies(width=8)
    >>> frequencies.count(Rows(np.array([0, 2, 3]), np.array([1, 5, 5]), None, 8)).tolist()
    [1, 2, 2]
    >>> weighed = frequencies.weigh(Rows(np.array([0, 3]), np.array([1, 5, 7]), None, 8))
    >>> weighed.indices.tolist(), np.round(weighed.data, 4).tolist()
    ([1, 5], [1.4055, 1.0])
    """

    def __init__(self, width: int, ids: np.ndarray | None = None,
                 counts: np.ndarray | None = None, documents: int = 0) -> None:
        self.width = int(width)
        self.documents = int(documents)
        self._map = FeatureMap(width=self.width)
        self._counts = np.zeros(1, dtype=np.int64)  # by the map's numbers; 0: never counted
        #: the arrays bound for one document at a time (and the map's generation and the
        #: counts' size they were bound at)
        self._one: tuple[Any, OneDocument] | None = None
        if ids is not None and counts is not None:  # (what to_arrays gave: a model file's)
            numbers = self._map.rows(np.asarray(ids, dtype=np.int64), insert=True)
            self._counts = np.zeros(self._map.next_row, dtype=np.int64)
            self._counts[numbers] = counts

    def __len__(self) -> int:
        return len(self._map)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_one"] = None  # (compiled, bound to the arrays: bound again when used)
        return state

    def count(self, rows: Any, weights: Any = None) -> np.ndarray:
        """Count the documents of ``rows`` (CSR rows: each holds a feature once), each
        ``weights`` times (whole numbers; once each by default); returns the rows'
        features by the map's numbers (for :meth:`weigh`)."""
        numbers = self._numbers(rows)
        if weights is None:
            count_numbers(numbers, self._counts)
            self.documents += int(rows.shape[0])
        else:
            weights = np.asarray(weights).astype(np.int64)
            self._counts += np.bincount(numbers, weights=np.repeat(weights, np.diff(
                rows.indptr)), minlength=self._counts.size).astype(np.int64)
            self.documents += int(weights.sum())
        return numbers

    def _numbers(self, rows: Any) -> np.ndarray:
        """The rows' features by the map's numbers, new ones numbered (and counted 0)."""
        numbers = self._map.rows(np.asarray(rows.indices), insert=True)
        self._make_room()
        return numbers

    def _make_room(self, rows: int = 0) -> None:
        """Counts for every number the map gave, or ``rows`` numbers (twice the room when
        they grow: one document at a time, they grow often)."""
        needed = max(self._map.next_row, rows)
        if needed > self._counts.size:
            grown = np.zeros(max(needed, 2 * self._counts.size), np.int64)
            grown[:self._counts.size] = self._counts
            self._counts = grown

    def bound(self, norm: bool) -> OneDocument | None:
        """The count bound for one document at a time in compiled code
        (:class:`~snowpy._core.extract.OneDocument`, bound again when an array was
        replaced), its figures set to the count's (``norm``: l2 after weighing); what it
        counts is taken back with :meth:`counted_by`. None for a hashed map (too wide for a
        table)."""
        fmap = self._map
        if not fmap.direct:
            return None
        one = self._one
        if one is None or one[0] != (fmap.generation, self._counts.size):
            one = self._one = ((fmap.generation, self._counts.size),
                               OneDocument(*fmap.arrays, self._counts))
        bound = one[1]
        bound.documents, bound.next_row, bound.norm = self.documents, fmap.next_row, norm
        return bound

    def counted_by(self, bound: OneDocument) -> None:
        """The figures of what ``bound`` (:meth:`bound`) counted, taken back."""
        self.documents, self._map.next_row = bound.documents, bound.next_row

    def weigh_one(self, ids: np.ndarray, vals: np.ndarray, *, norm: bool, learn: bool
                  ) -> tuple[np.ndarray, np.ndarray]:
        """One document's features (sorted int64 ids below the width, their strengths)
        weighed as :meth:`weigh` weighs a row of one document, to the bit; counted first
        when ``learn`` (as ``each``). The one-example path: no block, no matrix, and for
        a direct map one compiled call (:meth:`bound`)."""
        fmap = self._map
        if fmap.direct:
            vals = np.ascontiguousarray(vals, np.float64)
            while True:
                bound = self.bound(norm)
                assert bound is not None  # (a direct map)
                weighed = bound.weigh(ids, vals, learn)
                if weighed is not None:
                    self.counted_by(bound)
                    return weighed
                fmap.grow(fmap.next_row + ids.shape[0])  # (room first; nothing changed)
                self._make_room(fmap.next_row + ids.shape[0] + 1)
        numbers = fmap.rows(ids, insert=learn, unseen=0, checked=True)
        if learn:
            self._make_room()
        data = np.empty(ids.shape[0], dtype=np.float64)
        self.documents = weigh_rows(np.array([0, ids.shape[0]], np.int64), numbers,
                                    np.ascontiguousarray(vals, dtype=np.float64),
                                    self._counts, self.documents, _NONE, learn, norm, data,
                                    _NONE_F)
        if not learn:
            counted = numbers > 0
            if not counted.all():
                return ids[counted], data[counted]
        return ids, data

    def weigh(self, rows: Any, *, norm: bool = False, each: bool = False,
              weights: Any = None, numbers: np.ndarray | None = None,
              copy: bool = True) -> Rows:
        """``rows`` with each strength times its feature's idf, the features never
        counted left out, each row then divided by its Euclidean norm when ``norm``;
        with ``each``, every document is counted (``weights`` times) before it is
        weighed, in order. ``numbers``: the rows' features by the map's numbers, as
        :meth:`count` gave them. ``copy=False``: the strengths of ``rows`` are weighed
        where they lie (float64 ones; no second array of them)."""
        indices = np.asarray(rows.indices)
        indptr = np.ascontiguousarray(rows.indptr, dtype=np.int64)
        counted = each or numbers is not None  # (then every feature is counted)
        if each:
            numbers = self._numbers(rows)
        elif numbers is None:
            numbers = self._map.rows(indices, insert=False, unseen=0)
        strengths = rows.strengths if isinstance(rows, Rows) else rows.data
        in_place = not copy and strengths is not None and strengths.dtype == np.float64 \
            and strengths.flags.c_contiguous and strengths.flags.writeable
        data = strengths if in_place and strengths is not None else \
            np.empty(indices.shape[0], dtype=np.float64)
        table = _NONE_F
        if not each and indices.shape[0] > self._counts.size:  # (a large block: each
            table = np.empty(self._counts.size, np.float64)     #  number's idf once)
            idf_table(self._counts, self.documents, table)
        self.documents = weigh_rows(
            indptr, np.ascontiguousarray(numbers, dtype=np.int32),
            _NONE_F if strengths is None else np.ascontiguousarray(strengths, np.float64),
            self._counts, self.documents,
            _NONE if weights is None else np.ascontiguousarray(weights, np.int64),
            each, norm, data, table)
        kept = None if counted else numbers > 0
        if kept is not None and not kept.all():
            ends = np.concatenate([[0], np.cumsum(kept, dtype=np.int64)])
            indptr, indices, data = ends[indptr], indices[kept], data[kept]
        return Rows(indptr, indices, data, rows.shape[1])

    def to_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The features counted (ascending ids) and their document frequencies."""
        if self._map.direct:  # (the table, key -> number, read in key order: no sort)
            table = self._map.arrays[0]
            ids = np.flatnonzero(table)
            return ids.astype(np.int64), self._counts[table[ids]]
        ids = self._map.row_ids.astype(np.int64)
        counts = self._counts[1:len(self._map) + 1]
        order = np.argsort(ids, kind="stable")
        return ids[order], counts[order].copy()
