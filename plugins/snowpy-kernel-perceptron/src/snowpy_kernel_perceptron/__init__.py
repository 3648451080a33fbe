"""The kernel (dual) Perceptron for snowpy (seed 003), as a third party would write it:
the rule, and the network of support vectors it learns in."""

from __future__ import annotations

from snowpy_kernel_perceptron.kernel import DualKernel
from snowpy_kernel_perceptron.network import DualNetwork
from snowpy_kernel_perceptron.plugin import KERNEL_PERCEPTRON, similarity

__all__ = ["KERNEL_PERCEPTRON", "DualKernel", "DualNetwork", "similarity"]
