"""Per-document merge of extractor outputs into canonical CSR rows (compiled).

Each document's ids from every extractor (and field) are gathered, sorted and
run-length counted: a row holds each distinct id once, with its value:

* ``binary``: 1 (presence, SNoW's default);
* ``count``: the number of occurrences;
* ``log``: ``1 + ln(count)`` (sublinear term frequency);

optionally divided by the row's Euclidean norm. Rows come out sorted and
without duplicates, scikit-learn's canonical CSR format.
:func:`assemble_rows` (``snowpy._core.extract``) fills ``indptr``, ``indices``
and ``data`` from the ids of each segment (``ptrs[s, d]:ptrs[s, d + 1]`` are
document ``d``'s ids from segment ``s``) and returns the number of entries.
"""

from __future__ import annotations

from snowpy._core.extract import assemble_rows

__all__ = ["VALUE_MODES", "assemble_rows"]

VALUE_MODES = ("binary", "count", "log")
