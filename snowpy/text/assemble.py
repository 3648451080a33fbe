"""Per-document merge of extractor outputs into canonical CSR rows (numba).

Each document's ids from every extractor (and field) are gathered, sorted and
run-length counted: a row holds each distinct id once, with its value:

* ``binary``: 1 (presence, SNoW's default);
* ``count``: the number of occurrences;
* ``log``: ``1 + ln(count)`` (sublinear term frequency);

optionally divided by the row's Euclidean norm. Rows come out sorted and
without duplicates, scikit-learn's canonical CSR format.
"""

from __future__ import annotations

import math

import numpy as np

from snowpy._jit import jit

__all__ = ["VALUE_MODES", "assemble_rows", "sort_hashed"]

VALUE_MODES = ("binary", "count", "log")


@jit
def _insertion_sort(a, m):  # pragma: no cover - compiled
    for i in range(1, m):
        x = a[i]
        j = i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


@jit
def sort_hashed(a, m, bits, tmp, counts):  # pragma: no cover - compiled
    """Sort ``a[:m]``, values in ``[0, 2**bits)`` spread uniformly (hashes).

    One bucket pass on the top bits, about one value per bucket, then an
    insertion sort of the nearly sorted result: expected O(m).
    """
    if m < 24:
        _insertion_sort(a, m)
        return
    level = 1
    while (1 << level) < m and level < bits:
        level += 1
    buckets = 1 << level
    shift = bits - level
    for b in range(buckets + 1):
        counts[b] = 0
    for i in range(m):
        counts[(a[i] >> shift) + 1] += 1
    for b in range(buckets):
        counts[b + 1] += counts[b]
    for i in range(m):
        b = a[i] >> shift
        tmp[counts[b]] = a[i]
        counts[b] += 1
    _insertion_sort(tmp, m)
    for i in range(m):
        a[i] = tmp[i]


@jit
def assemble_rows(ids, ptrs, mode, l2, bits, indptr, indices, data, scratch):  # pragma: no cover
    """Fill ``indptr`` (n_docs + 1), ``indices`` and ``data``; return nnz.

    ``ptrs[s, d]:ptrs[s, d + 1]`` are document ``d``'s ids in ``ids`` from
    segment ``s`` (one segment per extractor and field). ``data`` may be
    empty for binary values without a norm (every value is 1): then only
    ``indptr`` and ``indices`` are written.
    """
    n_docs = ptrs.shape[1] - 1
    values = data.shape[0] > 0
    nnz = 0
    indptr[0] = 0
    tmp = np.empty(scratch.shape[0], scratch.dtype)
    counts = np.empty(2 * scratch.shape[0] + 2, np.int64)
    for d in range(n_docs):
        m = 0
        for s in range(ptrs.shape[0]):
            for j in range(ptrs[s, d], ptrs[s, d + 1]):
                scratch[m] = ids[j]
                m += 1
        if m > 0:
            sort_hashed(scratch, m, bits, tmp, counts)
            row = scratch
            begin = nnz
            previous = row[0]
            repeats = 1
            for q in range(1, m + 1):
                if q < m and row[q] == previous:
                    repeats += 1
                    continue
                indices[nnz] = previous
                if not values:
                    pass
                elif mode == 0:
                    data[nnz] = 1.0
                elif mode == 1:
                    data[nnz] = repeats
                else:
                    data[nnz] = 1.0 + math.log(repeats)
                nnz += 1
                if q < m:
                    previous = row[q]
                    repeats = 1
            if l2:
                total = 0.0
                for q in range(begin, nnz):
                    total += data[q] * data[q]
                scale = 1.0 / math.sqrt(total)
                for q in range(begin, nnz):
                    data[q] *= scale
        indptr[d + 1] = nnz
    return nnz
