"""The compiled loops of a dual network: scoring and learning with support vectors.

Support vectors live in slots of fixed ``width`` (the most features an
example has): slot ``s`` holds ``sv_len[s]`` feature ids and strengths at
``sv_ids[s * width:]`` and ``sv_vals[s * width:]``, and ``alpha[s, t]`` its
coefficient for target ``t``. ``state`` holds the slots in use and, once a
budget is full, the ring position of the oldest one (the next to be replaced).
The similarity is the rule's C function (:mod:`snowpy.rules.dual`), called through
a pointer: one compiled loop (:mod:`snowpy._core.dual`) serves every dual rule.
"""

from __future__ import annotations

from snowpy._core.dual import dual_epoch, dual_scores

__all__ = ["MIN_WIDTH", "OLDEST", "USED", "dual_epoch", "dual_scores"]

#: ``state[USED]``: slots holding a support vector; ``state[OLDEST]``: the next replaced.
USED = 0
OLDEST = 1

#: The narrowest slots (features per support vector) a network starts with.
MIN_WIDTH = 16
