"""One document in one compiled call: tokenise, word n-grams, one sorted row.

The one-example paths (``features_one``: ``learn_one``, ``predict_one``, a
served model) featurise a single short text, where the chunk pipeline's five
compiled calls and the Python between them cost more than the work. For the
front ends made of word n-gram extractors only (the default), this module
runs the same compiled stages (:func:`snowpy.text.tokenize._tokenize`,
:func:`snowpy.text.extractors.words.words_extract`,
:func:`snowpy.text.assemble.assemble_rows`) inside one compiled function, so
the row is the one ``transform`` gives (a test checks it), for one call.
"""

from __future__ import annotations

import numpy as np

from snowpy._jit import jit
from snowpy.bundles import bundle
from snowpy.text.assemble import assemble_rows
from snowpy.text.extractors.words import words_extract
from snowpy.text.tokenize import _ascii_word, _tokenize
from snowpy.text.unicode import tables

__all__ = ["WordsOnly"]


@jit
def _words_row(data, offsets, classes, lower, ascii_word, lowercase, strip_marks, out, starts,
               ends, doc_ptr, invalid, params, seeds, mask, ids, ptrs, mode, l2, bits, indptr,
               indices, values, scratch):  # pragma: no cover - compiled
    """The row of one document; returns ``(nnz, invalid bytes)``, nnz -1 when a buffer is
    too small."""
    used, n_tokens = _tokenize(data, offsets, classes, lower, ascii_word, lowercase,
                               strip_marks, out, starts, ends, doc_ptr, invalid)
    text = out[:used]
    token_starts = starts[:n_tokens]
    token_ends = ends[:n_tokens]
    count = 0
    no_arena = np.empty(0, np.uint8)
    no_spans = np.empty((0, 2), np.int64)
    out_ptr = np.empty(2, np.int64)
    no_names = used < 0  # (a computed False: a literal would compile words_extract again)
    for s in range(params.shape[0]):
        written = words_extract(text, token_starts, token_ends, doc_ptr, params[s], seeds[s],
                                mask, ids[count:], out_ptr, no_names, no_arena, no_spans)
        if written < 0:
            return -1, invalid[0]
        ptrs[s, 0] = count
        ptrs[s, 1] = count + written
        count += written
    if count > scratch.shape[0]:
        return -1, invalid[0]
    nnz = assemble_rows(ids, ptrs, mode, l2, bits, indptr, indices, values, scratch)
    return nnz, invalid[0]


#: The buffers and tables of :func:`_words_row`, as one compiled argument.
WordsBuffers = bundle("WordsBuffers", (
    "offsets", "classes", "lower", "ascii_word", "out", "starts", "ends", "doc_ptr",
    "invalid", "params", "seeds", "ids", "ptrs", "indptr", "indices", "values", "scratch"),
    __name__)


@jit(nogil=False)
def _new_buffers(offsets, classes, lower, ascii_word, out, starts, ends, doc_ptr, invalid,
                 params, seeds, ids, ptrs, indptr, indices, values,
                 scratch):  # pragma: no cover - compiled
    """A :data:`WordsBuffers` built in compiled code cached on disk."""
    return WordsBuffers(offsets, classes, lower, ascii_word, out, starts, ends, doc_ptr,
                        invalid, params, seeds, ids, ptrs, indptr, indices, values, scratch)


@jit
def _row(b, raw, lowercase, strip_marks, mask, mode, l2, bits):  # pragma: no cover - compiled
    """:func:`_words_row` on a :data:`WordsBuffers`: ``(ids, strengths, invalid)``,
    ``ids`` None when a buffer is too small."""
    b.offsets[1] = raw.shape[0]
    nnz, invalid = _words_row(
        raw, b.offsets, b.classes, b.lower, b.ascii_word, lowercase, strip_marks, b.out,
        b.starts, b.ends, b.doc_ptr, b.invalid, b.params, b.seeds, mask, b.ids, b.ptrs, mode,
        l2, bits, b.indptr, b.indices, b.values, b.scratch)
    if nnz < 0:
        return np.empty(0, np.int64), np.empty(0, np.float64), -1
    return b.indices[:nnz].astype(np.int64), b.values[:nnz].copy(), invalid


class WordsOnly:
    """Buffers and settings for :func:`_words_row`, grown to the longest document seen."""

    def __init__(self, segments: list, lowercase: bool, strip_marks: bool, mode: int,
                 l2: bool, bits: int) -> None:
        self.classes, self.lower = tables()
        self.ascii_word = _ascii_word(bool(lowercase))
        self.lowercase = bool(lowercase)
        self.strip_marks = bool(strip_marks)
        self.params = np.array([segment.kernel.params for segment in segments], dtype=np.float64)
        self.seeds = np.array([segment.seed for segment in segments], dtype=np.int64)
        self.mask = (1 << bits) - 1
        self.per_token = int(sum(segment.kernel.per_token for segment in segments))
        self.mode, self.l2, self.bits = mode, bool(l2), bits
        self.settings = (self.lowercase, self.strip_marks, self.mask, self.mode, self.l2,
                         self.bits)
        self.offsets = np.zeros(2, dtype=np.int64)
        self.doc_ptr = np.zeros(2, dtype=np.int64)
        self.invalid = np.zeros(1, dtype=np.int64)
        self.ptrs = np.zeros((len(segments), 2), dtype=np.int64)
        self.indptr = np.zeros(2, dtype=np.int64)
        self._size = -1
        self._grow(256)

    def _grow(self, size: int) -> None:
        self._size = size
        self.out = np.empty(2 * size + 1, dtype=np.uint8)
        self.starts = np.empty(size + 1, dtype=np.int64)
        self.ends = np.empty(size + 1, dtype=np.int64)
        room = (size + 1) * self.per_token + 1
        self.ids = np.empty(room, dtype=np.int32)
        self.indices = np.empty(room, dtype=np.int32)
        self.values = np.empty(room, dtype=np.float64)
        self.scratch = np.empty(room, dtype=np.int32)
        self.buffers = _new_buffers(
            self.offsets, self.classes, self.lower, self.ascii_word, self.out, self.starts,
            self.ends, self.doc_ptr, self.invalid, self.params, self.seeds, self.ids,
            self.ptrs, self.indptr, self.indices, self.values, self.scratch)

    def row(self, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """``(ids, strengths, invalid bytes)`` of one document's UTF-8 bytes."""
        if raw.size > self._size:
            self._grow(max(raw.size, 2 * self._size))
        ids, vals, invalid = _row(self.buffers, raw, *self.settings)
        if invalid < 0:  # (the buffers are sized for the longest possible row)
            raise RuntimeError("a feature buffer was too small")
        return ids, vals, invalid
