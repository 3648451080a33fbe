"""The kernel (dual) Perceptron for snowpy (seed 003), as a third party would write it."""

from __future__ import annotations

from snowpy_kernel_perceptron.plugin import KERNEL_PERCEPTRON, similarity

__all__ = ["KERNEL_PERCEPTRON", "similarity"]
