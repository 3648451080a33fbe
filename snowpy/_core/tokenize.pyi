from typing import Any

import numpy as np

def tokenize(data: np.ndarray, offsets: np.ndarray, unicode_tables: Any,
             ascii_word: np.ndarray, lowercase: bool, strip_marks: bool, out: np.ndarray,
             starts: np.ndarray, ends: np.ndarray, doc_ptr: np.ndarray,
             invalid: np.ndarray) -> tuple[int, int]: ...
def split_spaces(data: np.ndarray, offsets: np.ndarray, out: np.ndarray, starts: np.ndarray,
                 ends: np.ndarray, doc_ptr: np.ndarray) -> tuple[int, int]: ...
def nul_offsets(raw: np.ndarray, offsets: np.ndarray) -> int: ...
