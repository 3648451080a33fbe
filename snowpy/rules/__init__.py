"""Update rules: the records a rule plugin provides, and the built-in rules.

The built-in rules live in one module each (:mod:`snowpy.rules.perceptron`,
:mod:`~snowpy.rules.winnow`, :mod:`~snowpy.rules.balanced_winnow`,
:mod:`~snowpy.rules.aggressive`) and register through the same
``snowpy_update_rules`` hook as any third-party plugin.
"""

from __future__ import annotations

from snowpy.rules.spec import (
    UNIVERSAL_PARAMS,
    BuildContext,
    Param,
    RuleKernel,
    RuleSpec,
    theta_param,
    thickness_params,
)

__all__ = [
    "Param",
    "RuleSpec",
    "RuleKernel",
    "BuildContext",
    "theta_param",
    "thickness_params",
    "UNIVERSAL_PARAMS",
]
