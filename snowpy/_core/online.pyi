import numpy as np

from snowpy._core.engine import Links, Options, Outcome, RuleBinding
from snowpy._core.extract import OneDocument, WordsRow

GROW_MAP: int
GROW_ROWS: int
GROW_QUEUE: int

def checked(ids: np.ndarray, vals: np.ndarray) -> int: ...

class OnlineLearner:
    width: int
    low: float
    def __init__(self, links: Links, rule: RuleBinding, options: Options, slots: np.ndarray,
                 row_ids: np.ndarray, counts: np.ndarray, width: int, queue: int,
                 direct: bool = ..., window: np.ndarray | None = ...,
                 labelled: np.ndarray | None = ...) -> None: ...
    @property
    def queue(self) -> int: ...
    def learn(self, ids: np.ndarray, vals: np.ndarray, targets: np.ndarray, next_row: int,
              seen: int, row: int) -> tuple[int, int, Outcome]: ...
    def learn_text(self, words: WordsRow, raw: np.ndarray, targets: np.ndarray, next_row: int,
                   seen: int, row: int, weigher: OneDocument | None = ..., serial: int = ...
                   ) -> tuple[int, int, Outcome, tuple[np.ndarray, np.ndarray] | None] | None: ...
    def score(self, ids: np.ndarray, vals: np.ndarray, seen: float, absent: float,
              round32: bool, bias: float, theta: float, out: np.ndarray) -> int: ...
    def score_text(self, words: WordsRow, raw: np.ndarray, weigher: OneDocument | None,
                   seen: float, absent: float, round32: bool, bias: float, theta: float,
                   out: np.ndarray) -> int: ...
