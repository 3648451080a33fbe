from collections.abc import Sequence

import numpy as np

def words_extract(text: np.ndarray, starts: np.ndarray, ends: np.ndarray, doc_ptr: np.ndarray,
                  params: np.ndarray, seed: int, mask: int, out_ids: np.ndarray,
                  out_ptr: np.ndarray, names: bool, arena: np.ndarray,
                  spans: np.ndarray) -> int: ...
def chars_extract(text: np.ndarray, starts: np.ndarray, ends: np.ndarray, doc_ptr: np.ndarray,
                  params: np.ndarray, seed: int, mask: int, out_ids: np.ndarray,
                  out_ptr: np.ndarray, names: bool, arena: np.ndarray,
                  spans: np.ndarray) -> int: ...
def skipgrams_extract(text: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                      doc_ptr: np.ndarray, params: np.ndarray, seed: int, mask: int,
                      out_ids: np.ndarray, out_ptr: np.ndarray, names: bool,
                      arena: np.ndarray, spans: np.ndarray) -> int: ...
def affixes_extract(text: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                    doc_ptr: np.ndarray, params: np.ndarray, seed: int, mask: int,
                    out_ids: np.ndarray, out_ptr: np.ndarray, names: bool, arena: np.ndarray,
                    spans: np.ndarray) -> int: ...
def conjunctions_extract(text: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                         doc_ptr: np.ndarray, params: np.ndarray, seed: int, mask: int,
                         out_ids: np.ndarray, out_ptr: np.ndarray, names: bool,
                         arena: np.ndarray, spans: np.ndarray) -> int: ...
def assemble_rows(ids: np.ndarray, ptrs: np.ndarray, mode: int, l2: bool, bits: int,
                  indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                  scratch: np.ndarray) -> int: ...
def max_token_bytes(starts: np.ndarray, ends: np.ndarray) -> int: ...
def count_numbers(numbers: np.ndarray, counts: np.ndarray) -> None: ...
def idf_table(counts: np.ndarray, documents: int, out: np.ndarray) -> None: ...
def weigh_document(ids: np.ndarray, vals: np.ndarray, table: np.ndarray, row_ids: np.ndarray,
                   next_row: int, counts: np.ndarray, documents: int, learn: bool,
                   norm: bool, ids_out: np.ndarray, out: np.ndarray
                   ) -> tuple[int, int, int]: ...
def weigh_rows(indptr: np.ndarray, numbers: np.ndarray, data: np.ndarray, counts: np.ndarray,
               documents: int, weights: np.ndarray, each: bool, norm: bool,
               out: np.ndarray, table: np.ndarray) -> int: ...

class WordsRow:
    indices: np.ndarray
    values: np.ndarray
    def __init__(self, unicode_tables: object, ascii_word: np.ndarray,
                 lowercase: bool, strip_marks: bool, segments: Sequence[tuple[int, int, int]],
                 mode: int, l2: bool, bits: int) -> None: ...
    @property
    def width(self) -> int: ...
    def row(self, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]: ...
