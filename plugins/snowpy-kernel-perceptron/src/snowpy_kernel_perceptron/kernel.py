"""The record a dual rule returns: a rule whose state is support vectors, not weights.

A linear rule (:class:`~snowpy.rules.RuleKernel`) updates a weight per
(feature, target) link. A *dual* rule, such as the kernel Perceptron (seed
003), keeps the examples it erred on, the *support vectors* ``x_s``, with a
coefficient per target, and scores

    ``f_t(x) = sum_s alpha[s, t] * K(x_s, x)``

for a similarity ``K`` of its own. Such a rule declares ``RuleSpec(...,
network=DualNetwork)`` (this plugin's :class:`~snowpy_kernel_perceptron.DualNetwork`)
and its ``build`` returns a :class:`DualKernel`; ``SnowClassifier`` and ``snowpy
train`` choose the network by the rule. One compiled loop
(:mod:`snowpy_kernel_perceptron._dual`) serves every dual rule, as snowpy's link
engine serves every linear one: another plugin's dual rule depends on this one.

The similarity contract
-----------------------
``similarity(a_ids, a_vals, b_ids, b_vals, params) -> float``: two sparse
examples as their feature ids (sorted, unique, ``int64[::1]``) and strengths
(``float64[::1]``), and the rule's packed parameters. The dual engine calls it
as a C function of one ABI::

    double similarity(const int64_t *a_ids, const double *a_vals, int64_t a_n,
                      const int64_t *b_ids, const double *b_vals, int64_t b_n,
                      const double *params, int64_t n_params, void *user_data);

given as a ``PyCapsule`` named :data:`SIMILARITY_SIGNATURE` (C, Cython), a numba
``@cfunc`` of ``snowpy.numba_kernels.SIMILARITY`` or a ``@numba.njit`` function of
the array contract (compiled on first use), or a Python function of the array
contract (slow: for prototyping); see :func:`snowpy.rules.kernels.kernel_of`.

The update
----------
The engine applies SNoW's test to each target, as for a linear rule: a
positive example needs ``f_t(x) >= theta + thickness``, a negative one ``f_t(x)
< theta - negative_thickness``. When some target fails it, ``x`` becomes a
support vector with ``alpha[s, t] = step * y_t`` on the targets that failed
and 0 on the others: the Perceptron's dual update (with the linear similarity
it makes exactly the primal Perceptron's mistakes). With a ``budget`` of ``B``
support vectors the oldest is dropped for a new one once ``B`` are held (the
Forgetron's removal, without its shrinking): memory stays bounded whatever
the stream.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from snowpy.exceptions import PluginError
from snowpy.rules.kernels import (
    SIMILARITY_SIGNATURE,
    SimilarityKernel,
    implementation_of,
    kernel_of,
)

__all__ = ["SIMILARITY_SIGNATURE", "DualKernel"]


@dataclass(frozen=True)
class DualKernel:
    """A dual rule made ready for a :class:`~snowpy_kernel_perceptron.DualNetwork`.

    Parameters
    ----------
    similarity : SimilarityKernel, capsule, numba function or Python function
        The similarity (module docstring).
    params : sequence of float
        The numbers the similarity reads, in the order it reads them.
    step : float
        The coefficient a support vector gets on a target that failed the test
        (times the label's sign): the Perceptron's learning rate.
    budget : int
        The most support vectors kept (the oldest is dropped for a new one); 0
        keeps every one.
    resolved : mapping
        Values derived for parameters left at ``None``, recorded with the model.
    reference : callable or None
        The similarity written in Python (the array contract), which the conformance
        suite runs beside the compiled one; defaults to ``similarity`` itself when that
        is a Python or numba function.
    """

    similarity: Callable[..., Any]
    params: Sequence[float] | np.ndarray
    step: float = 1.0
    budget: int = 0
    resolved: Mapping[str, Any] = field(default_factory=dict)
    reference: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        if not callable(self.similarity) and type(self.similarity).__name__ != "PyCapsule":
            raise PluginError(f"the similarity {self.similarity!r} must be a kernel, a "
                              "capsule or a function")
        if self.reference is None and implementation_of(self.similarity) in ("python",
                                                                              "numba"):
            object.__setattr__(self, "reference", getattr(self.similarity, "py_func", None)
                               or (self.similarity if callable(self.similarity) else None))
        packed = np.ascontiguousarray(np.asarray(self.params, dtype=np.float64).reshape(-1))
        if not np.all(np.isfinite(packed)):
            raise PluginError(f"similarity parameters must be finite, got {packed.tolist()}")
        object.__setattr__(self, "params", packed)
        if not (math.isfinite(self.step) and self.step > 0):
            raise PluginError(f"step must be a positive number, got {self.step}")
        if int(self.budget) != self.budget or self.budget < 0:
            raise PluginError(f"budget must be a whole number >= 0, got {self.budget}")
        object.__setattr__(self, "budget", int(self.budget))
        object.__setattr__(self, "resolved", dict(self.resolved))

    def normalisation(self, multilabel: bool) -> str:
        """How calibrated probabilities are combined across targets."""
        return "none" if multilabel else "sum"

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its compiled similarity (made again on use)."""
        return {k: v for k, v in self.__dict__.items() if k != "compiled"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)

    @functools.cached_property
    def compiled(self) -> SimilarityKernel:
        """The similarity as the dual engine calls it (compiled on first use for a numba
        function)."""
        return kernel_of(self.similarity, SimilarityKernel,
                         getattr(self.similarity, "__name__", ""))
