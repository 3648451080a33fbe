from typing import Any

import numpy as np

ANOMALIES: dict[int, str]

def parse_lines(data: Any, fmt: int, multilabel: bool, prefix: bytes, unicode_tables: Any,
                ascii_word: np.ndarray, lowercase: bool,
                strip_marks: bool, segments: list[tuple[int, int, int]], mode: int, l2: bool,
                bits: int, max_document: int) -> dict[str, Any]: ...
