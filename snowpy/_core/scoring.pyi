import numpy as np

def score_rows(indptr: np.ndarray, rows: np.ndarray, vals: np.ndarray | None,
               pool_rows: np.ndarray, target: np.ndarray, E: np.ndarray | None,
               W: np.ndarray, U: np.ndarray, seen: float, planes: np.ndarray,
               averaging: bool, round32: bool, absent: float, bias: float, theta: float,
               out: np.ndarray) -> None: ...
def moved_by_target(rows: np.ndarray, target: np.ndarray, n_rows: int, n_targets: int,
                    W: np.ndarray, U: np.ndarray, seen: float, planes: np.ndarray,
                    averaging: bool, round32: bool, absent: float
                    ) -> tuple[np.ndarray, np.ndarray]: ...
def effective_weights(W: np.ndarray, U: np.ndarray, used: int, seen: float,
                      planes: np.ndarray, averaging: bool, round32: bool, absent: float,
                      out: np.ndarray) -> None: ...
