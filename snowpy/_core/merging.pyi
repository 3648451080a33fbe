import numpy as np

def table(features: np.ndarray, order: np.ndarray, sizes: np.ndarray, targets: np.ndarray,
          W: np.ndarray, U: np.ndarray, averaging: bool, reference: np.ndarray,
          geometric: bool, n_targets: int) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                    np.ndarray]: ...
def changes(start_keys: np.ndarray, start_W: np.ndarray, start_U: np.ndarray,
            keys: np.ndarray, W: np.ndarray, U: np.ndarray,
            weight: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                    np.ndarray]: ...
def merge(ka: np.ndarray, Wa: np.ndarray, Ua: np.ndarray, Ca: np.ndarray, ca: np.ndarray,
          kb: np.ndarray, Wb: np.ndarray, Ub: np.ndarray, Cb: np.ndarray, cb: np.ndarray,
          adding: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                 np.ndarray]: ...
