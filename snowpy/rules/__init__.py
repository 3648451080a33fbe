"""Update rules: the built-in rules, and the records a rule plugin needs.

The built-in rules live in one module each (:mod:`snowpy.rules.perceptron`,
:mod:`~snowpy.rules.winnow`, :mod:`~snowpy.rules.balanced_winnow`,
:mod:`~snowpy.rules.aggressive`) and register through the same
``snowpy_update_rules`` hook as any third-party plugin. The records they
return live on the plugin host's floor (:mod:`snowpy.rules.spec`); they are
re-exported here, where a rule's author looks for them.
"""

from __future__ import annotations

from snowpy.params import Param
from snowpy.rules.spec import (
    UNIVERSAL_PARAMS,
    UPDATE_SIGNATURE,
    BuildContext,
    Examples,
    Learner,
    RuleKernel,
    RuleSpec,
    UpdateKernel,
    theta_param,
    thickness_params,
)

__all__ = [
    "UNIVERSAL_PARAMS",
    "UPDATE_SIGNATURE",
    "BuildContext",
    "Examples",
    "Learner",
    "Param",
    "RuleKernel",
    "RuleSpec",
    "UpdateKernel",
    "theta_param",
    "thickness_params",
]

