"""AROW: adaptive regularization of weights, as a snowpy update rule.

Crammer, Kulesza and Dredze, "Adaptive Regularization of Weight Vectors",
NIPS 2009, diagonal version. Each weight has a mean (plane 0, the weight that
predicts) and a variance (plane 1, coefficient 0: it does not enter the
activation). When the margin ``m = y (w.x - theta)`` is below 1 (snowpy's
thickness of 1), with ``v = sum_k Sigma_k x_k^2``:

    beta  = 1 / (v + r)
    alpha = (1 - m) beta
    mu_k    += alpha y Sigma_k x_k
    Sigma_k -= beta Sigma_k^2 x_k^2

The variance stays positive: ``Sigma_k x_k^2 <= v`` so the factor
``1 - beta Sigma_k x_k^2`` is at least ``r / (v + r)``.

The step runs as a C function of snowpy's update ABI, from this plugin's own Cython
module (``_kernel.pyx``, compiled when the plugin is installed); :func:`arow_update`
is the same arithmetic in Python, the reference snowpy's conformance suite trains
beside it.
"""

from __future__ import annotations

from snowpy import hookimpl
from snowpy.rules import Param, RuleKernel, RuleSpec, theta_param, thickness_params
from snowpy_arow._kernel import update_capsule

__all__ = ["arow_update", "AROW", "snowpy_update_rules"]


def arow_update(w, S, t, y, activation, vals, m, sqnorm, params):
    """One AROW step on target ``t``, in Python (the reference); ``params = [theta, r]``."""
    margin = y * (activation - params[0])
    if margin >= 1.0:
        return
    confidence = 0.0
    for k in range(m):
        confidence += w[k, 1] * vals[k] * vals[k]
    beta = 1.0 / (confidence + params[1])
    alpha = (1.0 - margin) * beta
    for k in range(m):
        sigma = w[k, 1]
        v = vals[k]
        w[k, 0] += alpha * y * sigma * v
        w[k, 1] = sigma - beta * sigma * sigma * v * v


def _build(params: dict, context) -> RuleKernel:
    return RuleKernel(
        update=update_capsule(),
        reference=arow_update,
        params=[params["theta"], params["r"]],
        initial_weights=(0.0, params["initial_variance"]),
        planes=(1.0, 0.0),
    )


AROW = RuleSpec(
    name="arow",
    build=_build,
    params=(
        theta_param(0.0),
        Param("r", 1.0, "regularisation: larger values update more conservatively",
              low=0.0, low_open=True),
        Param("initial_variance", 1.0, "variance of every weight before learning",
              low=0.0, low_open=True),
    ) + thickness_params(default=1.0),
    summary="AROW: confidence-weighted updates with a variance per weight",
    reference="Crammer, Kulesza and Dredze, Adaptive Regularization of Weight Vectors, "
              "NIPS 2009",
)


@hookimpl
def snowpy_update_rules() -> list[RuleSpec]:
    """The AROW rule."""
    return [AROW]
