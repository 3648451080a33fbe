"""Normalised Winnow (Littlestone 1988, in Mohri et al. 2018's form): exponentiated weights.

Weights start at ``1/N`` (``N`` features) and sum to 1; on a mistake every
weight is multiplied by ``exp(eta * y * x_i)`` and all are divided by
``Z = sum_i w_i exp(eta * y * x_i)``. Strengths may be negative (``x`` in
``[-R, R]^N``); the prediction is the sign of ``w . x`` (``theta = 0``). If some
``v >= 0`` separates the data with ``l_inf`` margin ``rho = min_t y_t (v . x_t)
/ ||v||_1`` and ``|x_i| <= R``, it makes at most ``2 (R^2 / rho^2) ln N``
mistakes with ``eta = rho / R^2`` (``tests/test_mistake_bounds.py``).

In a sparse network only the active weights can be touched, so the rule keeps
the normalisation as a per-target scale: the stored weight ``u_i`` times
``s_t`` (``log s_t`` in the rule's state ``S[t, 0]``) is the normalised
weight. Since the inactive features contribute ``exp(0) = 1``, ``Z = 1 +
sum over active i of s_t u_i (exp(eta y x_i) - 1)``, computed from the gathered
weights alone. A common scale never changes the sign of ``w . x``, so the
predictions, mistakes and updates are the normalised algorithm's exactly;
:func:`normalised_weights` gives the weights that sum to 1. The theorem's
network has every feature at its initial weight from the start: use
``links="touched"`` (or ``"all"``), with which a missing link weighs ``1/N``,
and ``bias=False`` (a bias is one more expert). With other link policies a
feature's first link adds weight that was not counted, the scale is only
approximate (never applied when ``Z`` would not be positive), and the
predictions are still those of the exponentiated update.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from snowpy._core.rules import UpdateKernel
from snowpy.hookspecs import hookimpl
from snowpy.rules.spec import (
    BuildContext,
    Param,
    RuleKernel,
    RuleSpec,
    theta_param,
    thickness_params,
)

__all__ = ["NORMALISED_WINNOW", "normalised_weights", "normalised_winnow_update"]


def normalised_winnow_update(w, S, t, y, activation, vals, m, sqnorm,
                             params):
    """``u_i *= exp(eta y x_i)``; ``log s_t -= log Z`` (``params = [eta]``)."""
    eta = params[0]
    scale = math.exp(S[t, 0])
    z = 1.0
    for k in range(m):
        factor = math.exp(eta * y * vals[k])
        z += scale * w[k, 0] * (factor - 1.0)
        w[k, 0] *= factor
    if z > 0.0:  # (1 + ... assumes the weights sum to 1, true with links="touched" or "all")
        S[t, 0] -= math.log(z)


def normalised_weights(network: Any) -> np.ndarray:
    """The normalised weights ``float64[features + 1, targets]`` (rows as
    :meth:`~snowpy.network.engine.Engine.effective_weights`: the bias first, the unseen last)."""
    scale = np.exp(network.engine_.store.S[:, 0])
    return network.engine_.effective_weights() * scale[None, :]


def _build(params: dict, context: BuildContext) -> RuleKernel:
    w0 = params["initial_weight"]
    resolved = {}
    if w0 is None:
        w0 = resolved["initial_weight"] = 1.0 / max(context.n_features, 1)
    return RuleKernel(
        update=UpdateKernel.builtin("normalised-winnow"),
        reference=normalised_winnow_update,
        params=[params["eta"]],
        initial_weights=(w0,),
        initial_state=(0.0,),
        resolved=resolved,
        multiplicative=True,
    )


NORMALISED_WINNOW = RuleSpec(
    name="normalised-winnow",
    build=_build,
    params=(
        Param("eta", 0.5, "learning rate: a mistake multiplies w_i by exp(eta * y * x_i)",
              low=0.0, low_open=True),
        theta_param(0.0),
        Param("initial_weight", None, "initial weight; None means 1/N, N the features",
              low=0.0, low_open=True),
    ) + thickness_params(default=0.01),
    summary="exponentiated update normalised to sum 1; bound 2 (R/rho)^2 ln N",
    reference="Littlestone 1988; Mohri, Rostamizadeh and Talwalkar 2018 (the bound)",
    signed=True,
)


@hookimpl
def snowpy_update_rules() -> list[RuleSpec]:
    """Normalised Winnow."""
    return [NORMALISED_WINNOW]
