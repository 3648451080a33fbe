"""One document in one compiled call: tokenise, word n-grams, one sorted row.

The one-example paths (``features_one``: ``learn_one``, ``predict_one``, a
served model) featurise a single short text, where the chunk pipeline's
stages and the Python between them cost more than the work. For the front
ends made of word n-gram extractors only (the default), this module runs the
same compiled stages (the tokeniser, the word n-grams, the row assembly) in
one call (:class:`snowpy._core.extract.WordsRow`), so the row is the one
``transform`` gives (a test checks it), for one call.
"""

from __future__ import annotations

import numpy as np

from snowpy._core.extract import WordsRow
from snowpy.text.tokenize import _ascii_word
from snowpy.text.unicode import tables

__all__ = ["WordsOnly"]


class WordsOnly:
    """The one-call row of a words-only front end, its buffers grown to the longest
    document seen."""

    def __init__(self, segments: list, lowercase: bool, strip_marks: bool, mode: int,
                 l2: bool, bits: int) -> None:
        spec = [(int(segment.kernel.params[0]), int(segment.kernel.params[1]),
                 int(segment.seed)) for segment in segments]
        self.words = WordsRow(tables(), _ascii_word(bool(lowercase)), bool(lowercase),
                              bool(strip_marks), spec, int(mode), bool(l2), int(bits))

    @property
    def width(self) -> int:
        """The longest document, in bytes, read without growing the buffers."""
        return int(self.words.width)

    def row(self, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """``(ids, strengths, invalid bytes)`` of one document's UTF-8 bytes."""
        return self.words.row(raw)
