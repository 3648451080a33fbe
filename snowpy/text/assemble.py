"""Per-document merge of extractor outputs into canonical CSR rows (compiled).

Each document's ids from every extractor (and field) are gathered, sorted and
run-length counted: a row holds each distinct id once, with its value:

* ``binary``: 1 (presence, SNoW's default);
* ``count``: the number of occurrences;
* ``log``: ``1 + ln(count)`` (sublinear term frequency);

optionally multiplied by the feature's inverse document frequency
(:class:`DocumentFrequencies`, ``idf=True``), then divided by the row's
Euclidean norm. Rows come out sorted and without duplicates, scikit-learn's
canonical CSR format.
:func:`assemble_rows` (``snowpy._core.extract``) fills ``indptr``, ``indices``
and ``data`` from the ids of each segment (``ptrs[s, d]:ptrs[s, d + 1]`` are
document ``d``'s ids from segment ``s``) and returns the number of entries.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy._core.extract import assemble_rows
from snowpy._rows import Rows
from snowpy.hashmap import FeatureMap

__all__ = ["VALUE_MODES", "DocumentFrequencies", "assemble_rows", "l2_normalised"]

VALUE_MODES = ("binary", "count", "log")


class DocumentFrequencies:
    """How many of the documents counted hold each feature: the front end's inverse
    document frequencies, ``idf(f) = ln((1 + n) / (1 + df(f))) + 1`` for the ``n``
    documents counted (scikit-learn's ``TfidfTransformer(smooth_idf=True)``).

    :meth:`count` adds documents (a fit counts its training documents once, before
    learning; ``partial_fit`` and ``learn_one`` count each batch before learning it);
    :meth:`weigh` multiplies each strength by its feature's idf and drops the features
    never counted, as a vocabulary would: they have no weight in any network trained
    on the counted documents, and leaving them out of the norm keeps a row's scale that
    of the documents learned.

    >>> frequencies = DocumentFrequencies(width=8)
    >>> frequencies.count(Rows(np.array([0, 2, 3]), np.array([1, 5, 5]), None, 8))
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
        if ids is not None and counts is not None:  # (what to_arrays gave: a model file's)
            numbers = self._map.rows(np.asarray(ids, dtype=np.int64), insert=True)
            self._counts = np.zeros(self._map.next_row, dtype=np.int64)
            self._counts[numbers] = counts

    def __len__(self) -> int:
        return len(self._map)

    def count(self, rows: Any) -> None:
        """Count the documents of ``rows`` (CSR rows: each holds a feature once)."""
        numbers = self._map.rows(np.asarray(rows.indices), insert=True)
        found = np.bincount(numbers, minlength=self._map.next_row)
        if found.size > self._counts.size:
            grown = np.zeros(found.size, dtype=np.int64)
            grown[:self._counts.size] = self._counts
            self._counts = grown
        self._counts[:found.size] += found
        self.documents += int(rows.shape[0])

    def idf(self) -> np.ndarray:
        """The inverse document frequency by the map's numbers (0 at number 0: a feature
        never counted)."""
        idf = np.log((1.0 + self.documents) / (1.0 + self._counts)) + 1.0
        idf[0] = 0.0
        return idf

    def weigh(self, rows: Any, *, norm: bool = False) -> Rows:
        """``rows`` with each strength times its feature's idf, the features never
        counted left out, each row then divided by its Euclidean norm when ``norm``."""
        indices = np.asarray(rows.indices)
        numbers = self._map.rows(indices, insert=False, unseen=0)
        data = np.asarray(rows.data, dtype=np.float64) * self.idf()[numbers]
        kept = numbers > 0
        indptr = np.asarray(rows.indptr, dtype=np.int64)
        if not kept.all():
            ends = np.concatenate([[0], np.cumsum(kept, dtype=np.int64)])
            indptr, indices, data = ends[indptr], indices[kept], data[kept]
        weighed = Rows(indptr, indices, data, rows.shape[1])
        return l2_normalised(weighed) if norm else weighed

    def to_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The features counted (ascending ids) and their document frequencies."""
        ids = self._map.row_ids.astype(np.int64)
        counts = self._counts[1:len(self._map) + 1]
        order = np.argsort(ids, kind="stable")
        return ids[order], counts[order].copy()


def l2_normalised(rows: Rows) -> Rows:
    """``rows`` each divided by its Euclidean norm (an empty row stays empty)."""
    data = np.asarray(rows.data, dtype=np.float64)
    lengths = np.diff(rows.indptr)
    sums = np.bincount(np.repeat(np.arange(lengths.size), lengths), weights=data * data,
                       minlength=lengths.size)
    norms = np.sqrt(sums)
    norms[norms == 0] = 1.0
    return Rows(rows.indptr, rows.indices, data / np.repeat(norms, lengths), rows.shape[1])
