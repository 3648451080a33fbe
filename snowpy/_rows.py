"""Rows of active features as plain arrays: the CSR layout without scipy.

What the front end hands the network inside snowpy (featurised text, a corpus file
read by the compiled reader) is a :class:`Rows`: ``indptr``, ``indices`` and ``data``
as a CSR matrix holds them, sorted and without duplicates. The network reads exactly
those attributes, so it takes a :class:`Rows` or a scipy CSR matrix alike; scipy,
whose import costs a tenth of a second, is imported only when a caller asks for a
scipy matrix (:meth:`Rows.tocsr`), which the public ``Featurizer.transform`` does.

>>> import numpy as np
>>> rows = Rows(np.array([0, 2, 3]), np.array([1, 4, 2], dtype=np.int32),
...             np.array([1.0, 2.0, 1.0]), width=5)
>>> rows.shape, rows.nnz
((2, 5), 3)
>>> rows[np.array([1, 0, 1])].indices.tolist()
[2, 1, 4, 2]
>>> rows.toarray().tolist()
[[0.0, 1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 1.0, 0.0, 0.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Evidence", "Rows"]


class Evidence:
    """Each row's Naive Bayes evidence for each label the front end counted
    (:class:`snowpy.text.weighing.LabelRatios`), which a calibrated network adds to its
    target scores (:class:`snowpy.calibration.Calibration`'s ``evidence`` weights).

    Parameters
    ----------
    values : float64 array, shape (n, labels)
    labels : sequence
        The label of each column.

    >>> evidence = Evidence(np.array([[0.5, -0.5]]), ["pos", "neg"])
    >>> evidence.by(["neg", "pos", "new"]).tolist()
    [[-0.5, 0.5, 0.0]]
    """

    def __init__(self, values: np.ndarray, labels: Any) -> None:
        self.values = np.asarray(values, dtype=np.float64)
        self.labels = list(labels)

    def __getitem__(self, which: Any) -> Evidence:
        return Evidence(self.values[which], self.labels)

    def by(self, labels: Any) -> np.ndarray:
        """The values in the order of ``labels``, a column of 0 for a label not counted."""
        column = {label: c for c, label in enumerate(self.labels)}
        out = np.zeros((self.values.shape[0], len(labels)))
        for t, label in enumerate(labels):
            c = column.get(label)
            if c is not None:
                out[:, t] = self.values[:, c]
        return out


class Rows:
    """Rows of a sparse matrix, CSR layout, canonical (sorted ids, no repeats).

    Parameters
    ----------
    indptr : int array, shape (n + 1,)
    indices : int32 or int64 array
        The feature ids (columns) of each row, ``indices[indptr[i]:indptr[i + 1]]``.
    data : float64 array, or None
        Their strengths; None means every strength is 1 (binary features), made
        when first read.
    width : int
        The number of columns.
    evidence : Evidence or None
        Each row's Naive Bayes evidence by label, where the front end makes it (a
        classifier's ``evidence=True``); kept by the rows selected.
    """

    has_canonical_format = True
    dtype = np.dtype(np.float64)
    format = "csr"
    ndim = 2

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray | None,
                 width: int, evidence: Evidence | None = None, *,
                 coded: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.indptr = np.asarray(indptr)
        self.evidence = evidence
        self.indices = np.asarray(indices)
        self._data = None if data is None else np.asarray(data, dtype=np.float64)
        self.shape = (int(self.indptr.shape[0]) - 1, int(width))
        #: the strengths held as codes into a table of their distinct values (``code``),
        #: or None
        self._coded = coded

    @property
    def data(self) -> np.ndarray:
        """The strengths (ones for binary rows, made on first use; coded ones read back,
        a new array each time)."""
        if self._coded is not None:
            codes, values = self._coded
            return values[codes]
        if self._data is None:
            self._data = np.ones(self.indices.shape[0], dtype=np.float64)
        return self._data

    @property
    def binary(self) -> bool:
        """Whether every strength is 1 (no strengths array is kept)."""
        return self._data is None and self._coded is None

    @property
    def strengths(self) -> np.ndarray | None:
        """The strengths, or None for binary rows (what compiled code reads: None means
        every strength is 1, with no array of ones made)."""
        return self._data if self._coded is None else self.data

    def code(self) -> bool:
        """Hold the strengths as codes of one or two bytes into a table of their distinct
        values, when they take at most 65,536 (a document's counts or their logarithms,
        before any weighing: 20 Newsgroups' 5.0 million strengths in 10 MB instead of
        38); :attr:`data` reads them back, the same numbers. Whether they are coded.

        >>> rows = Rows(np.array([0, 2, 3]), np.array([1, 4, 2]), np.array([1.5, 1.0, 1.5]),
        ...             width=5)
        >>> rows.code(), rows.data.tolist(), rows[np.array([1])].data.tolist()
        (True, [1.5, 1.0, 1.5], [1.5])
        """
        if self._coded is not None:
            return True
        if self._data is None:
            return False
        coded = _coded(self._data)
        if coded is None:
            return False
        self._coded, self._data = coded, None
        return True

    @property
    def nnz(self) -> int:
        return int(self.indices.shape[0])

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, which: Any) -> Rows:
        """The rows ``which`` selects (an array of row numbers, a boolean mask or a
        slice), in that order."""
        if isinstance(which, slice) and which.step in (None, 1):  # a run: views, no copy
            first, stop, _ = which.indices(self.shape[0])
            stop = max(first, stop)
            begin, end = int(self.indptr[first]), int(self.indptr[stop])
            return self._with(self.indptr[first:stop + 1] - begin, slice(begin, end),
                              slice(first, stop))
        if isinstance(which, slice):
            which = np.arange(self.shape[0])[which]
        which = np.asarray(which)
        if which.dtype == bool:
            which = np.flatnonzero(which)
        starts = self.indptr[which].astype(np.int64)
        lengths = self.indptr[which + 1].astype(np.int64) - starts
        indptr = np.zeros(which.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        # the positions of the kept entries: each row's start, then one more per entry
        positions = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1])
        return self._with(indptr, positions, which)

    def _with(self, indptr: np.ndarray, entries: Any, rows: Any) -> Rows:
        """Rows of ``indptr`` over the ``entries`` of these (a slice: views), their
        strengths held as these hold them, and the evidence of these ``rows``."""
        coded = self._coded
        return Rows(indptr, self.indices[entries],
                    None if self._data is None else self._data[entries], self.shape[1],
                    None if self.evidence is None else self.evidence[rows],
                    coded=None if coded is None else (coded[0][entries], coded[1]))

    def replace_strengths(self, strengths: np.ndarray) -> None:
        """Hold ``strengths`` (float64, one an entry) instead of these, coded or not: a
        fit's own rows, weighed where they lie."""
        if strengths.shape != self.indices.shape:
            raise ValueError(f"{strengths.shape[0]} strengths for {self.nnz} entries")
        self._data, self._coded = np.asarray(strengths, dtype=np.float64), None

    def copy(self) -> Rows:
        return self._with(self.indptr.copy(), np.arange(self.nnz), slice(None))

    def sum_duplicates(self) -> None:
        """Nothing to do: rows are canonical."""

    def astype(self, dtype: Any) -> Rows:
        if np.dtype(dtype) != np.float64:
            raise TypeError("rows hold float64 strengths")
        return self

    def tocsr(self) -> Any:
        """The rows as a scipy CSR matrix (imports scipy)."""
        import scipy.sparse as sp

        matrix = sp.csr_matrix((self.data, self.indices, self.indptr), shape=self.shape)
        matrix.has_canonical_format = True
        return matrix

    def toarray(self) -> np.ndarray:
        out = np.zeros(self.shape)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        out[rows, self.indices] = self.data
        return out

    def __repr__(self) -> str:
        return f"<Rows {self.shape[0]} x {self.shape[1]}, {self.nnz} active features>"


#: The most distinct strengths held as codes (:meth:`Rows.code`): two bytes a strength.
_CODES = 1 << 16
#: Strengths made distinct a run at a time (a sort of this many: 8 MB, not the whole
#: array's copy).
_RUN = 1 << 20


def _coded(data: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``data`` as codes (``uint8`` or ``uint16``) into the table of its distinct values,
    ascending, or None when it holds more than :data:`_CODES` of them (NaN: never)."""
    values = np.zeros(0, np.float64)
    for start in range(0, data.shape[0], _RUN):
        values = np.union1d(values, data[start:start + _RUN])
        if values.shape[0] > _CODES:
            return None
    if np.isnan(values).any():  # (NaN is no value a table finds)
        return None
    codes = np.empty(data.shape[0], np.uint8 if values.shape[0] <= 256 else np.uint16)
    for start in range(0, data.shape[0], _RUN):
        run = data[start:start + _RUN]
        codes[start:start + _RUN] = np.searchsorted(values, run)
        if not np.array_equal(values[codes[start:start + _RUN]].view(np.uint64),
                              run.view(np.uint64)):
            return None  # (-0.0 is found as 0.0: read back, it would not be the same)
    return codes, values
