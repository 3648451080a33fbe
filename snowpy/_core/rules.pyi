from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

UPDATE_SIGNATURE: str
SIMILARITY_SIGNATURE: str

_K = TypeVar("_K", bound=Kernel)

class Kernel:
    abi: str
    signature: str
    noun: str
    contract: str
    name: str
    implementation: str
    error: BaseException | None
    @classmethod
    def from_capsule(cls: type[_K], capsule: Any, name: str = ..., keep: Any = ...) -> _K: ...
    @classmethod
    def from_address(cls: type[_K], address: int, name: str = ..., implementation: str = ...,
                     keep: Any = ..., user_data: int = ...) -> _K: ...
    @classmethod
    def from_python(cls: type[_K], function: Callable[..., Any], name: str = ...) -> _K: ...
    @property
    def address(self) -> int: ...
    @property
    def user_data_address(self) -> int: ...
    @property
    def function(self) -> Callable[..., Any] | None: ...

class UpdateKernel(Kernel):
    @staticmethod
    def builtin(name: str) -> UpdateKernel: ...
    def __call__(self, w: np.ndarray, S: np.ndarray, t: int, y: float, activation: float,
                 vals: np.ndarray, m: int, sqnorm: float, params: np.ndarray) -> None: ...

class SimilarityKernel(Kernel):
    def __call__(self, a_ids: np.ndarray, a_vals: np.ndarray, b_ids: np.ndarray,
                 b_vals: np.ndarray, params: np.ndarray) -> float: ...

PERCEPTRON: UpdateKernel
WINNOW: UpdateKernel
BALANCED_WINNOW: UpdateKernel
AGGRESSIVE: UpdateKernel
PASSIVE_AGGRESSIVE: UpdateKernel
NAIVE_BAYES: UpdateKernel
NORMALISED_WINNOW: UpdateKernel
