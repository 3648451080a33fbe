from collections.abc import Sequence

import numpy as np

EXTRACTORS: tuple[str, ...]

class Extractor:
    name: str
    def __init__(self, name: str) -> None: ...
    def __call__(self, text: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                 doc_ptr: np.ndarray, params: np.ndarray, seed: int, mask: int,
                 out_ids: np.ndarray, out_ptr: np.ndarray, names: bool, arena: np.ndarray,
                 spans: np.ndarray) -> int: ...
def assemble_rows(ids: np.ndarray, ptrs: np.ndarray, mode: int, l2: bool, bits: int,
                  indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                  scratch: np.ndarray) -> int: ...
def count_numbers(numbers: np.ndarray, counts: np.ndarray) -> None: ...
def count_by_label(indptr: np.ndarray, numbers: np.ndarray, data: np.ndarray,
                   starts: np.ndarray, documents: np.ndarray, weights: np.ndarray,
                   size: int, numbers_out: np.ndarray, counts_out: np.ndarray,
                   starts_out: np.ndarray) -> int: ...
def relevance(numbers: np.ndarray, counts: np.ndarray, starts: np.ndarray, ranked: np.ndarray,
              totals: np.ndarray, sizes: np.ndarray, every: float, features: float,
              out: np.ndarray) -> None: ...
def idf_table(counts: np.ndarray, documents: int, factors: np.ndarray, out: np.ndarray
              ) -> None: ...
class OneDocument:
    documents: int
    next_row: int
    norm: bool
    def __init__(self, table: np.ndarray, row_ids: np.ndarray, counts: np.ndarray,
                 factors: np.ndarray) -> None: ...
    def weigh(self, ids: np.ndarray, vals: np.ndarray, learn: bool
              ) -> tuple[np.ndarray, np.ndarray] | None: ...
def weigh_rows(indptr: np.ndarray, numbers: np.ndarray, data: np.ndarray, counts: np.ndarray,
               documents: int, weights: np.ndarray, each: bool, norm: bool,
               out: np.ndarray, table: np.ndarray, factors: np.ndarray) -> int: ...

class WordsRow:
    indices: np.ndarray
    values: np.ndarray
    def __init__(self, unicode_tables: object, ascii_word: np.ndarray,
                 lowercase: bool, strip_marks: bool, segments: Sequence[tuple[int, int, int]],
                 mode: int, l2: bool, bits: int) -> None: ...
    @property
    def width(self) -> int: ...
    serial: int
    last_nnz: int
    def row(self, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]: ...
    def last(self, serial: int) -> tuple[np.ndarray, np.ndarray] | None: ...
