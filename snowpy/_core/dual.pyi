import numpy as np

from snowpy._core.rules import SimilarityKernel

def dual_scores(sim: SimilarityKernel, sv_ids: np.ndarray, sv_vals: np.ndarray,
                sv_len: np.ndarray, width: int, n_sv: int, alpha: np.ndarray,
                indptr: np.ndarray, ids: np.ndarray, vals: np.ndarray, params: np.ndarray,
                theta: float, out: np.ndarray) -> None: ...
def dual_epoch(sim: SimilarityKernel, sv_ids: np.ndarray, sv_vals: np.ndarray,
               sv_len: np.ndarray, width: int, alpha: np.ndarray, state: np.ndarray,
               budget: int, indptr: np.ndarray, ids: np.ndarray, vals: np.ndarray,
               order: np.ndarray, y_indptr: np.ndarray, y_targets: np.ndarray,
               params: np.ndarray, theta: float, pos_thickness: float, neg_thickness: float,
               step: float, multilabel: bool,
               record: np.ndarray) -> tuple[int, int, int, int]: ...
