import numpy as np

def changes(features: np.ndarray, order: np.ndarray, sizes: np.ndarray, targets: np.ndarray,
            W: np.ndarray, U: np.ndarray, averaging: bool, start_sizes: np.ndarray,
            start_targets: np.ndarray, start_W: np.ndarray, start_U: np.ndarray,
            reference: np.ndarray, geometric: bool, n_targets: int, weight: float
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
def merge(ka: np.ndarray, Wa: np.ndarray, Ua: np.ndarray, Ca: np.ndarray, ca: np.ndarray,
          kb: np.ndarray, Wb: np.ndarray, Ub: np.ndarray, Cb: np.ndarray, cb: np.ndarray,
          adding: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                 np.ndarray]: ...
def mixed(features: np.ndarray, sizes: np.ndarray, targets: np.ndarray, W: np.ndarray,
          U: np.ndarray, averaging: bool, counts: np.ndarray, keys: np.ndarray,
          change_W: np.ndarray, change_U: np.ndarray, scale: np.ndarray,
          change_counts: np.ndarray, reference: np.ndarray, offset: np.ndarray,
          geometric: bool, n_targets: int, limit: float, single: bool
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                     np.ndarray]: ...
class Mixing:
    def __init__(self, start: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                 pools: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
                 weights: np.ndarray, reference: np.ndarray, averaging: bool,
                 n_targets: int) -> None: ...
    def first(self, r0: int) -> int: ...
    def count(self, r0: int, r1: int, first0: int, out_sizes: np.ndarray) -> None: ...
    def fill(self, r0: int, r1: int, first0: int, k: int, out_target: np.ndarray,
             out_W: np.ndarray, out_U: np.ndarray) -> None: ...
