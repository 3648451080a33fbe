"""Balanced Winnow: two weight planes whose difference is the weight.

Littlestone 1989; Dagan, Karov and Roth 1997: keep ``w+`` and ``w-`` per feature; the
effective weight is ``w+ - w-``, so negative weights and non-monotone
targets can be learned. On a mistake on a positive example the active
``w+`` are promoted (times ``alpha``) and the active ``w-`` demoted (times
``beta``); on a negative example the reverse. Dagan, Karov and Roth (1997)
used it for text categorization, the setting snowpy targets.

When the initial weights are left at ``None`` they are ``2 theta / rho`` for
``w+`` and ``theta / rho`` for ``w-``, so an average example starts at the
threshold (Dagan, Karov and Roth's choice).
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
from snowpy.rules.winnow import auto_initial_weight

__all__ = ["BALANCED_WINNOW", "balanced_winnow_update"]


def balanced_winnow_update(w, S, t, y, activation, vals, m, sqnorm,
                           params):
    """Promote one plane and demote the other; ``params = [alpha, beta]``."""
    up = params[0] if y > 0 else params[1]
    down = params[1] if y > 0 else params[0]
    log_up = math.log(up)
    log_down = math.log(down)
    for k in range(m):
        v = vals[k]
        if v == 1.0:
            w[k, 0] *= up
            w[k, 1] *= down
        else:
            w[k, 0] *= math.exp(v * log_up)
            w[k, 1] *= math.exp(v * log_down)


def _build(params: dict, context: BuildContext) -> RuleKernel:
    resolved = {}
    positive, negative = params["initial_weight"], params["negative_initial_weight"]
    if positive is None:
        positive = resolved["initial_weight"] = auto_initial_weight(2.0, params["theta"], context)
    if negative is None:
        negative = resolved["negative_initial_weight"] = auto_initial_weight(
            1.0, params["theta"], context
        )
    return RuleKernel(
        update=UpdateKernel.builtin("balanced-winnow"),
        reference=balanced_winnow_update,
        params=[params["alpha"], params["beta"]],
        initial_weights=(positive, negative),
        planes=(1.0, -1.0),
        resolved=resolved,
        multiplicative=True,
    )


BALANCED_WINNOW = RuleSpec(
    name="balanced-winnow",
    build=_build,
    params=(
        Param("alpha", 1.5, "promotion factor", low=1.0, low_open=True),
        Param("beta", 0.5, "demotion factor", low=0.0, high=1.0, low_open=True, high_open=True),
        theta_param(1.0),
        Param("initial_weight", None, "initial w+; None means 2 * theta / rho",
              low=0.0, low_open=True),
        Param("negative_initial_weight", None, "initial w-; None means theta / rho",
              low=0.0, low_open=True),
    ) + thickness_params(default=1.0),
    summary="Winnow over two planes w+ and w-, effective weight w+ - w-",
    reference="Littlestone 1989; Dagan, Karov and Roth 1997",
)


@hookimpl
def snowpy_update_rules() -> list[RuleSpec]:
    """Balanced Winnow."""
    return [BALANCED_WINNOW]
