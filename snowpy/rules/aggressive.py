"""Threshold-relative ("aggressive") updates and passive-aggressive rules.

``aggressive`` (SNoW's threshold-relative update, ``-t +`` for Perceptron): on a
mistake the step is sized so that the example would now be classified
correctly, ``r = (theta + y * margin - w.x) / (x.x)``; after the update the
activation is exactly ``theta + y * margin``. The plain rule's ``margin = 0``
lands a positive example on the threshold (correct) but leaves a negative
one on it (still wrong), hence the default margin of 1.

``passive-aggressive`` (Crammer et al. 2006) takes the step ``loss / x.x`` on the
hinge loss ``1 - y (w.x - theta)``; PA-I caps it at ``C``; PA-II uses
``loss / (x.x + 1/(2C))``. A positive example is learned whenever its loss is
positive (thickness 1); a negative one when its activation is above
``theta - 0.75`` (negative thickness 0.75). One against all, an example is
negative for every target but its own: at a negative thickness of 1 each step
lands a target exactly on the edge of the separator, and the next example
anywhere near it is learned again (with many labels, most of them: docs/rules.md
gives what 0.75 saves).
"""

from __future__ import annotations

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

__all__ = ["AGGRESSIVE", "PASSIVE_AGGRESSIVE", "aggressive_update", "passive_aggressive_update"]

_VARIANTS = ("pa", "pa-i", "pa-ii")


def aggressive_update(w, S, t, y, activation, vals, m, sqnorm, params):
    """Step to ``theta + y * margin``; ``params = [theta, margin]``."""
    if sqnorm <= 0.0:
        return
    step = (params[0] + y * params[1] - activation) / sqnorm
    for k in range(m):
        w[k, 0] += step * vals[k]


def passive_aggressive_update(w, S, t, y, activation, vals, m, sqnorm,
                              params):
    """PA / PA-I / PA-II step; ``params = [theta, C, variant]`` (variant 0, 1, 2)."""
    loss = 1.0 - y * (activation - params[0])
    if loss <= 0.0 or sqnorm <= 0.0:
        return
    c = params[1]
    if params[2] == 0.0:
        tau = loss / sqnorm
    elif params[2] == 1.0:
        tau = min(c, loss / sqnorm)
    else:
        tau = loss / (sqnorm + 0.5 / c)
    step = tau * y
    for k in range(m):
        w[k, 0] += step * vals[k]


def _build_aggressive(params: dict, context: BuildContext) -> RuleKernel:
    return RuleKernel(
        update=UpdateKernel.builtin("aggressive"),
        reference=aggressive_update,
        params=[params["theta"], params["margin"]],
        initial_weights=(params["initial_weight"],),
    )


def _build_pa(params: dict, context: BuildContext) -> RuleKernel:
    return RuleKernel(
        update=UpdateKernel.builtin("passive-aggressive"),
        reference=passive_aggressive_update,
        params=[params["theta"], params["C"], float(_VARIANTS.index(params["variant"]))],
        initial_weights=(0.0,),
    )


AGGRESSIVE = RuleSpec(
    name="aggressive",
    build=_build_aggressive,
    params=(
        theta_param(0.0),
        Param("margin", 1.0, "after an update the activation is theta + y * margin", low=0.0),
        Param("initial_weight", 0.0, "initial weight of every feature"),
    ),
    summary="Perceptron whose step corrects the mistaken example (threshold-relative)",
    reference="SNoW -t + (Carlson, Cumby, Rosen and Roth 1999, the SNoW users' manual)",
)

PASSIVE_AGGRESSIVE = RuleSpec(
    name="passive-aggressive",
    build=_build_pa,
    params=(
        theta_param(0.0),
        Param("C", 1.0, "aggressiveness cap (PA-I) or regularisation (PA-II)",
              low=0.0, low_open=True),
        Param("variant", "pa-i", "which passive-aggressive step", type=str, choices=_VARIANTS),
    )
    + thickness_params(default=1.0, negative=0.75),
    summary="passive-aggressive PA, PA-I and PA-II (hinge-loss steps)",
    reference="Crammer, Dekel, Keshet, Shalev-Shwartz and Singer 2006; LBJava PassiveAggressive",
)


@hookimpl
def snowpy_update_rules() -> list[RuleSpec]:
    """The aggressive Perceptron and the passive-aggressive family."""
    return [AGGRESSIVE, PASSIVE_AGGRESSIVE]
