"""The kernel (dual) Perceptron for snowpy, as a third party would write it: the rule,
and the learner of support vectors it builds (a :class:`snowpy.rules.Learner`)."""

from __future__ import annotations

from snowpy_kernel_perceptron.learner import SupportVectors
from snowpy_kernel_perceptron.plugin import KERNEL_PERCEPTRON, similarity

__all__ = ["KERNEL_PERCEPTRON", "SupportVectors", "similarity"]
