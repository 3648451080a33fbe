"""The kernel Perceptron (the dual Perceptron with a kernel) as a dual rule.

Its state is not a weight table: the examples it erred on (support vectors)
with a coefficient per target, ``f_t(x) = sum_s alpha[s, t] K(x_s, x)``
(:class:`~snowpy_kernel_perceptron.SupportVectors`, the learner its ``build`` returns,
which snowpy's network hosts). Kernels:

* ``linear``: ``x . z`` (the primal Perceptron, as a check);
* ``polynomial``: ``(gamma x . z + coef0) ** degree``;
* ``gaussian``: ``exp(-gamma ||x - z||^2)``.

``budget`` bounds the support vectors (the oldest goes for a new one).

The similarity runs as a numba ``@cfunc`` of snowpy's similarity ABI
(:mod:`snowpy_kernel_perceptron._numba`, imported when a network of the rule is
built: listing the plugin imports no numba); :func:`similarity` is the same
arithmetic in Python, the reference the conformance suite runs beside it.
"""

from __future__ import annotations

import math

from snowpy import hookimpl
from snowpy.rules import BuildContext, Param, RuleSpec, theta_param

from snowpy_kernel_perceptron.learner import SupportVectors

__all__ = ["KERNEL_PERCEPTRON", "similarity"]

KERNELS = ("linear", "polynomial", "gaussian")


def _dot(a_ids, a_vals, b_ids, b_vals):
    """The dot product of two sparse vectors with sorted ids (a merge)."""
    i = j = 0
    total = 0.0
    while i < a_ids.shape[0] and j < b_ids.shape[0]:
        if a_ids[i] == b_ids[j]:
            total += a_vals[i] * b_vals[j]
            i += 1
            j += 1
        elif a_ids[i] < b_ids[j]:
            i += 1
        else:
            j += 1
    return total


def similarity(a_ids, a_vals, b_ids, b_vals, params):
    """The similarity in Python (the reference); ``params = [kernel, degree, gamma,
    coef0]`` (kernel 0 linear, 1 polynomial, 2 Gaussian)."""
    dot = _dot(a_ids, a_vals, b_ids, b_vals)
    kind = params[0]
    if kind == 0.0:
        return dot
    if kind == 1.0:
        return (params[2] * dot + params[3]) ** params[1]
    a2 = 0.0
    for v in a_vals:
        a2 += v * v
    b2 = 0.0
    for v in b_vals:
        b2 += v * v
    return math.exp(-params[2] * max(a2 + b2 - 2.0 * dot, 0.0))


def _build(params: dict, context: BuildContext) -> SupportVectors:
    from snowpy_kernel_perceptron._numba import similarity as compiled

    return SupportVectors(
        compiled, [float(KERNELS.index(params["kernel"])), float(params["degree"]),
                   params["gamma"], params["coef0"]],
        theta=params["theta"], thickness=params["thickness"],
        negative_thickness=params["negative_thickness"], step=params["learning_rate"],
        budget=params["budget"], reference=similarity)


KERNEL_PERCEPTRON = RuleSpec(
    name="kernel-perceptron",
    build=_build,
    params=(
        Param("kernel", "polynomial", "the similarity K", type=str, choices=KERNELS),
        Param("degree", 2, "degree of the polynomial kernel", type=int, low=1, high=10),
        Param("gamma", 1.0, "scale of x . z (polynomial) or of ||x - z||^2 (Gaussian)",
              low=0.0, low_open=True),
        Param("coef0", 1.0, "constant added before the power (polynomial)", low=0.0),
        Param("learning_rate", 1.0, "coefficient of a new support vector",
              low=0.0, low_open=True),
        Param("budget", 2000, "most support vectors kept (the oldest goes); 0: no bound",
              type=int, low=0),
        theta_param(0.0),
    ),
    summary="dual Perceptron with a polynomial or Gaussian kernel, budgeted support vectors",
    reference="Aizerman, Braverman and Rozonoer 1964; Freund and Schapire 1999; "
              "Dekel, Shalev-Shwartz and Singer 2008 (the Forgetron's removal)",
    learner=True,
)


@hookimpl
def snowpy_update_rules() -> list[RuleSpec]:
    """The kernel Perceptron."""
    return [KERNEL_PERCEPTRON]
