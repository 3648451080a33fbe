from collections.abc import Callable
from typing import Any

import numpy as np

UPDATE_SIGNATURE: str
SIMILARITY_SIGNATURE: str

class UpdateKernel:
    name: str
    implementation: str
    error: BaseException | None
    @staticmethod
    def from_capsule(capsule: Any, name: str = ..., keep: Any = ...) -> UpdateKernel: ...
    @staticmethod
    def from_address(address: int, name: str = ..., implementation: str = ...,
                     keep: Any = ..., user_data: int = ...) -> UpdateKernel: ...
    @staticmethod
    def from_python(function: Callable[..., Any], name: str = ...) -> UpdateKernel: ...
    @staticmethod
    def builtin(name: str) -> UpdateKernel: ...
    @property
    def address(self) -> int: ...
    @property
    def function(self) -> Callable[..., Any] | None: ...
    def __call__(self, w: np.ndarray, S: np.ndarray, t: int, y: float, activation: float,
                 vals: np.ndarray, m: int, sqnorm: float, params: np.ndarray) -> None: ...

class SimilarityKernel:
    name: str
    implementation: str
    error: BaseException | None
    @staticmethod
    def from_capsule(capsule: Any, name: str = ..., keep: Any = ...) -> SimilarityKernel: ...
    @staticmethod
    def from_address(address: int, name: str = ..., implementation: str = ...,
                     keep: Any = ..., user_data: int = ...) -> SimilarityKernel: ...
    @staticmethod
    def from_python(function: Callable[..., Any], name: str = ...) -> SimilarityKernel: ...
    @property
    def address(self) -> int: ...
    def __call__(self, a_ids: np.ndarray, a_vals: np.ndarray, b_ids: np.ndarray,
                 b_vals: np.ndarray, params: np.ndarray) -> float: ...

PERCEPTRON: UpdateKernel
WINNOW: UpdateKernel
BALANCED_WINNOW: UpdateKernel
AGGRESSIVE: UpdateKernel
PASSIVE_AGGRESSIVE: UpdateKernel
NAIVE_BAYES: UpdateKernel
NORMALISED_WINNOW: UpdateKernel
