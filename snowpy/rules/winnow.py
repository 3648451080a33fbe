"""Winnow, with Winnow-R's floor and SNoW's threshold-relative option.

Winnow (Littlestone 1988): weights
start positive; on a mistake on a positive example every active weight is
multiplied by ``alpha`` (promotion), on a negative one by ``beta``
(demotion). With real strengths ``v`` the factor is ``alpha ** v``. It makes
at most ``2 + 3k(1 + log2 n)`` mistakes on a k-disjunction of n attributes
with ``alpha = 2``, ``beta = 1/2``, ``theta = n`` and unit initial weights.

``floor > 0`` gives Winnow-R (Auer and Warmuth 1998): no weight falls below
the floor, so a feature that becomes relevant after a drift recovers in a
few promotions. ``threshold_relative`` is SNoW's ``-t +``: the factor is
scaled by ``theta / activation`` so one update moves the activation about as
far as the threshold.

Defaults are SNoW's ``-W 1.35,0.8,4.0`` and the thick separator of LBJava's
default ``SparseWinnow(1.35, 0.8, 4, thickness=1)``, with an initial weight
``theta / rho`` (rho: average number of active features per example), computed
from the first training batch when ``initial_weight`` is left at ``None``: an
average example starts at the threshold, as Balanced Winnow's default does.
SNoW's ``3 theta / rho`` was made for its sparse network, where a target counts
only the features linked to it; with every feature weighing (the default
``links="touched"``) it put every target three times above its threshold, so
every target was demoted on the features of every example, memorising noise
features (docs/rules.md, "The sparse network must learn what the full network
learns").
"""

from __future__ import annotations

import math

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

__all__ = ["WINNOW", "auto_initial_weight", "winnow_update"]


def winnow_update(w, S, t, y, activation, vals, m, sqnorm, params):
    """Multiplicative step; ``params = [alpha, beta, floor, threshold_relative, theta]``."""
    factor = params[0] if y > 0 else params[1]
    floor = params[2]
    theta = params[4]
    if params[3] > 0.0 and theta > 0.0 and activation > 0.0:
        factor *= theta / activation
    log_factor = math.log(factor)  # factor ** v as exp(v * log factor): half the cost of pow
    for k in range(m):
        v = vals[k]
        new = w[k, 0] * (factor if v == 1.0 else math.exp(v * log_factor))
        w[k, 0] = max(floor, new)


def auto_initial_weight(multiple: float, theta: float, context: BuildContext) -> float:
    """A data-dependent initial weight ``multiple * theta / rho`` (SNoW's, with multiple
    3; 1.0 when theta <= 0)."""
    if theta <= 0.0:
        return 1.0
    return multiple * theta / max(context.mean_active_features, 1.0)


def _build(params: dict, context: BuildContext) -> RuleKernel:
    w0 = params["initial_weight"]
    resolved = {}
    if w0 is None:
        w0 = resolved["initial_weight"] = auto_initial_weight(1.0, params["theta"], context)
    return RuleKernel(
        update=UpdateKernel.builtin("winnow"),
        reference=winnow_update,
        params=[
            params["alpha"],
            params["beta"],
            params["floor"],
            float(params["threshold_relative"]),
            params["theta"],
        ],
        initial_weights=(max(w0, params["floor"]),),
        resolved=resolved,
        multiplicative=True,
    )


WINNOW = RuleSpec(
    name="winnow",
    build=_build,
    params=(
        Param("alpha", 1.35, "promotion factor applied on a mistake on a positive example",
              low=1.0, low_open=True),
        Param("beta", 0.8, "demotion factor applied on a mistake on a negative example",
              low=0.0, high=1.0, low_open=True, high_open=True),
        theta_param(4.0),
        Param("initial_weight", None, "initial weight; None means theta / rho (SNoW's: 3 "
              "theta / rho)",
              low=0.0, low_open=True),
        Param("floor", 0.0, "Winnow-R: no weight falls below this value (0: plain Winnow)",
              low=0.0),
        Param("threshold_relative", False, "SNoW -t +: scale the factor by theta / activation",
              type=bool),
    ) + thickness_params(default=1.0),
    summary="multiplicative promotion/demotion of active weights (attribute-efficient)",
    reference="Littlestone 1988; Auer and Warmuth 1998 (the floor); SNoW -W",
    nonnegative=True,
)


@hookimpl
def snowpy_update_rules() -> list[RuleSpec]:
    """Winnow (and Winnow-R through its floor)."""
    return [WINNOW]
