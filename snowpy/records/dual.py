"""The record a dual rule returns: a rule whose state is support vectors, not weights.

A linear rule (:class:`~snowpy.rules.RuleKernel`) updates a weight per
(feature, target) link. A *dual* rule, such as the kernel Perceptron (seed
003), keeps the examples it erred on, the *support vectors* ``x_s``, with a
coefficient per target, and scores

    ``f_t(x) = sum_s alpha[s, t] * K(x_s, x)``

for a similarity ``K`` of its own. Such a rule declares ``RuleSpec(...,
dual=True)`` and its ``build`` returns a :class:`DualKernel`; a network of it
is a :class:`snowpy.DualNetwork` (``SnowClassifier`` and ``snowpy train``
choose it by the rule), trained by one compiled loop
(:mod:`snowpy.network.dual_engine`) that serves every dual rule, as the link
engine serves every linear one.

The similarity contract
-----------------------
``similarity(a_ids, a_vals, b_ids, b_vals, params) -> float``, a
``@numba.njit`` function: two sparse examples as their feature ids (sorted,
unique, ``int64[::1]``) and strengths (``float64[::1]``), and the rule's
packed parameters. snowpy compiles it as a C callback of
:data:`SIMILARITY_SIGNATURE`, once, cached on disk.

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

from snowpy._jit import is_kernel
from snowpy.exceptions import PluginError

__all__ = ["SIMILARITY_SIGNATURE", "DualKernel"]  # noqa: F822 - module __getattr__

@functools.cache
def similarity_signature() -> Any:
    """The numba signature of every similarity (built on first use: interpreting needs
    no numba): ``similarity(a_ids, a_vals, b_ids, b_vals, params) -> float``."""
    import numba

    types = numba.types
    return types.float64(types.int64[::1], types.float64[::1], types.int64[::1],
                         types.float64[::1], types.float64[::1])


def __getattr__(name: str) -> Any:  # SIMILARITY_SIGNATURE, built when first asked for
    if name == "SIMILARITY_SIGNATURE":
        return similarity_signature()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class DualKernel:
    """A dual rule made ready for :class:`snowpy.DualNetwork`.

    Parameters
    ----------
    similarity : numba dispatcher
        The ``@numba.njit`` function of the similarity contract (module docstring).
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
    """

    similarity: Callable[..., Any]
    params: Sequence[float] | np.ndarray
    step: float = 1.0
    budget: int = 0
    resolved: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not is_kernel(self.similarity):
            raise PluginError(
                f"the similarity {getattr(self.similarity, '__name__', self.similarity)!r} "
                "must be a numba.njit function")
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

    @property
    def compiled(self) -> Any:
        """The similarity as the engine calls it (a C callback, cached on disk)."""
        from snowpy.records.kernels import compile_kernel

        return compile_kernel(self.similarity, similarity_signature(), "similarity",
                              "similarity contract (see snowpy.records.dual)")
