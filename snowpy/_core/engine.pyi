from collections.abc import Sequence

import numpy as np

from snowpy._core.rules import UpdateKernel

POLICIES: dict[str, int]

class Workspace:
    def __init__(self, max_active: int, n_targets: int, n_planes: int, queue: int) -> None: ...
    @property
    def width(self) -> int: ...
    @property
    def n_targets(self) -> int: ...
    @property
    def queue(self) -> int: ...

class Links:
    single: bool
    def __init__(self, rows: np.ndarray, count: np.ndarray, target: np.ndarray,
                 W: np.ndarray, U: np.ndarray, lcount: np.ndarray, meta: np.ndarray
                 ) -> None: ...
    @property
    def capacity(self) -> int: ...

class RuleBinding:
    checked: bool
    kernel: UpdateKernel
    def __init__(self, kernel: UpdateKernel, params: np.ndarray, planes: np.ndarray,
                 initial_weights: Sequence[float] | np.ndarray,
                 absent_weights: Sequence[float] | np.ndarray, S: np.ndarray, single: bool,
                 checked: bool = ...) -> None: ...
    def violation(self) -> IndexError | None: ...
    @property
    def absent(self) -> float: ...

class Options:
    def __init__(self, policy: int, min_count: int, multiplicative: bool,
                 min_magnitude: float, max_magnitude: float, theta: float,
                 pos_thickness: float, neg_thickness: float, bias: float, multilabel: bool,
                 constraint: bool) -> None: ...
    @property
    def theta(self) -> float: ...
    @property
    def bias(self) -> float: ...

class Outcome:
    processed: int
    mistakes: int
    updates: int
    overflows: int
    underflows: int
    nonfinite: bool
    failed: bool
    seen: int
    need_room: int
    need_queue: int

def run(links: Links, rule: RuleBinding, options: Options, indptr: np.ndarray,
        rows: np.ndarray, vals: np.ndarray | None, order: np.ndarray, y_indptr: np.ndarray,
        y_targets: np.ndarray, a_indptr: np.ndarray, a_targets: np.ndarray, seen: int,
        counts: np.ndarray, max_active: int, scores: np.ndarray, counting: bool,
        creating: bool, workspace: Workspace | None = ...,
        activations: np.ndarray | None = ...) -> Outcome: ...
