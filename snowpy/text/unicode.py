"""The character table of the tokeniser, pinned so tokens never drift.

For every code point the table holds a class and a lower-case mapping:

* ``WORD`` (1): letters (L*), numbers (N*) and connector punctuation (Pc,
  the underscore): they start or continue a token;
* ``MARK`` (2): combining marks (M*): they continue a token, never start
  one (so diacritics of Devanagari, Arabic or decomposed Latin stay inside
  their word, and a stray variation selector is dropped);
* ``SINGLE`` (3): symbols (So, which holds the emoji) and CJK ideographs:
  each is a token of its own (as BERT does for Han characters);
* ``SEPARATOR`` (0): everything else (spaces, punctuation, controls).

The lower-case mapping is the simple one-to-one mapping of ``str.lower``
(a character whose lower case has two code points, like U+0130, is kept).

The table is generated from Python's ``unicodedata`` by
``python -m snowpy.text.unicode`` and shipped with snowpy (a few kilobytes), so
that tokenisation, and therefore every feature id, is the same on every machine
and Python version. Its Unicode version is :data:`UNICODE_VERSION`.

It is kept as two-level tables: code point ``cp`` has the class
``class_pages[class_index[cp >> 8] * 256 + (cp & 255)]``, and the lower case
``cp + lower_pages[lower_index[cp >> 8] * 256 + (cp & 255)]``. Only a few hundred
pages of 256 code points differ, so the tables load in a millisecond, where the
flat arrays of 1,114,112 entries took 17 ms to inflate at every start.
"""

from __future__ import annotations

import functools
import sys
import unicodedata
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["MARK", "SEPARATOR", "SINGLE", "UNICODE_VERSION", "WORD", "UnicodeTables",
           "build_tables", "paged", "save_tables", "tables"]

SEPARATOR, WORD, MARK, SINGLE = 0, 1, 2, 3
_PATH = Path(__file__).with_name("unicode_table.npz")
_N = 0x110000
# CJK ideograph blocks, each character a token (the ranges BERT uses, plus extension G)
_HAN = [(0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF),
        (0x2A700, 0x2B73F), (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0x2CEB0, 0x2EBEF),
        (0x2F800, 0x2FA1F), (0x30000, 0x3134F)]


def build_tables() -> tuple[np.ndarray, np.ndarray, str]:
    """Compute ``(classes uint8, lower int32, unicode_version)`` from unicodedata."""
    classes = np.zeros(_N, dtype=np.uint8)
    lower = np.arange(_N, dtype=np.int32)
    for code in range(_N):  # (a surrogate's category is Cs: a separator, its own lower case)
        char = chr(code)
        category = unicodedata.category(char)
        if category[0] in "LN" or category == "Pc":
            classes[code] = WORD
        elif category[0] == "M":
            classes[code] = MARK
        elif category == "So":
            classes[code] = SINGLE
        folded = char.lower()
        if len(folded) == 1 and folded != char:
            lower[code] = ord(folded)
    for first, last in _HAN:
        classes[first : last + 1] = SINGLE
    return classes, lower, unicodedata.unidata_version


class UnicodeTables(NamedTuple):
    """The tokeniser's tables, two-level (see the module)."""

    class_index: np.ndarray  # int32 [4352]: the page of classes of each 256 code points
    class_pages: np.ndarray  # uint8 [pages * 256]
    lower_index: np.ndarray  # int32 [4352]
    lower_pages: np.ndarray  # int32 [pages * 256]: lower case minus the code point

    def classes(self) -> np.ndarray:
        """The class of every code point, a flat array (for tests and tools)."""
        return self.class_pages.reshape(-1, 256)[self.class_index].reshape(-1)

    def lower(self) -> np.ndarray:
        """The lower case of every code point, a flat array."""
        delta = self.lower_pages.reshape(-1, 256)[self.lower_index].reshape(-1)
        return delta + np.arange(_N, dtype=np.int32)


def paged(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(index, pages)``: ``values`` (a flat table of 1,114,112 entries) as its distinct
    pages of 256 and the page of each 256 entries."""
    pages, index = np.unique(values.reshape(-1, 256), axis=0, return_inverse=True)
    return index.astype(np.int32).reshape(-1), np.ascontiguousarray(pages.reshape(-1))


@functools.cache
def tables() -> UnicodeTables:
    """The shipped tables."""
    with np.load(_PATH) as data:
        return UnicodeTables(np.ascontiguousarray(data["class_index"], dtype=np.int32),
                             np.ascontiguousarray(data["class_pages"], dtype=np.uint8),
                             np.ascontiguousarray(data["lower_index"], dtype=np.int32),
                             np.ascontiguousarray(data["lower_pages"], dtype=np.int32))


def _shipped_version() -> str:
    with np.load(_PATH) as data:
        return str(data["version"])


UNICODE_VERSION = _shipped_version() if _PATH.exists() else unicodedata.unidata_version


def save_tables(classes: np.ndarray, lower: np.ndarray, version: str,
                path: Path | None = None) -> None:
    """Write flat tables as the two-level file (by default the shipped one)."""
    path = _PATH if path is None else path
    class_index, class_pages = paged(classes)
    lower_index, lower_pages = paged(lower - np.arange(_N, dtype=np.int32))
    np.savez_compressed(path, class_index=class_index, class_pages=class_pages,
                        lower_index=lower_index, lower_pages=lower_pages,
                        version=np.array(version))


def main() -> None:
    """Regenerate the shipped table (run when moving to a new Unicode version)."""
    classes, lower, version = build_tables()
    save_tables(classes, lower, version)
    print(f"wrote {_PATH} (Unicode {version})", file=sys.stderr)


if __name__ == "__main__":
    main()
