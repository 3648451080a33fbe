"""What every training loop shares: the order of an epoch, progress chunks, and the
exceptions of rules' compiled steps.

An epoch's order depends on what the examples are, not on where they stand
(:func:`example_keys`, :func:`shuffled`); :func:`chunks` cuts a pass where progress is
reported. A network's driver (:class:`snowpy.network.driver.Driver`) and a plugin's
network (the kernel Perceptron's) use them.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from snowpy._core import hashing

__all__ = ["KERNEL_ERRORS", "NumericalWarning", "checking_kernels", "chunks", "example_keys",
           "keyed_order", "mixed_keys", "refresh_points", "shuffled"]


class NumericalWarning(RuntimeWarning):
    """Weights reached the largest magnitude kept and were clamped."""


def chunks(n: int, chunked: bool, every: int | None = None) -> list[tuple[int, int]]:
    """Example ranges of one epoch: whole, or cut at 1, 2, 4, 8... and every 16,384, and
    at every multiple of ``every`` (a progress reporter that tests every k examples,
    SNoW's ``-c k``).

    >>> chunks(10, True)
    [(0, 1), (1, 2), (2, 4), (4, 8), (8, 10)]
    >>> chunks(10, True, every=3)
    [(0, 1), (1, 2), (2, 3), (3, 4), (4, 6), (6, 8), (8, 9), (9, 10)]
    """
    if not chunked:
        return [(0, n)]
    bounds = [0]
    mark = 1
    while bounds[-1] < n:
        step = min(mark, bounds[-1] + 16384)
        bounds.append(min(n, max(step, bounds[-1] + 1)))
        if bounds[-1] >= mark:
            mark *= 2
    if every:
        bounds = sorted(set(bounds) | set(range(every, n, every)))
    return list(zip(bounds[:-1], bounds[1:]))


def example_keys(X: Any, y_indptr: np.ndarray, y_targets: np.ndarray) -> np.ndarray:
    """A 64-bit key per example, from its features, strengths and labels only: equal
    examples get equal keys wherever they stand in the data (the sum of splitmix64 of
    each feature, strength and label)."""
    keys = np.empty(X.shape[0], dtype=np.uint64)
    data_bits = np.ascontiguousarray(X.data, dtype=np.float64).view(np.uint64)
    hashing.example_keys(np.asarray(X.indptr), np.asarray(X.indices), data_bits,
                         np.asarray(y_indptr, dtype=np.int64),
                         np.asarray(y_targets, dtype=np.int32), keys)
    return keys


def shuffled(keys: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One epoch's order: the examples sorted by their keys mixed with a salt drawn from
    ``rng``. The order depends on the examples, never on where they stand in the data:
    training is invariant to the order of its input (and an example given weight 2 is
    learned exactly as two copies of it are)."""
    return keyed_order(keys, int(rng.integers(0, 2**63 - 1, dtype=np.int64)))


def mixed_keys(keys: np.ndarray, salt: int) -> np.ndarray:
    """``splitmix64(keys ^ salt)``: keys spread uniformly, a salt apart.

    >>> mixed = mixed_keys(np.array([1, 1, 2], dtype=np.uint64), 7)
    >>> bool(mixed[0] == mixed[1]), bool(mixed[0] == mixed[2])
    (True, False)
    """
    mixed = np.empty(keys.shape[0], dtype=np.uint64)
    hashing.mix_keys(np.ascontiguousarray(keys, dtype=np.uint64),
                     np.uint64(int(salt) & 0xFFFFFFFFFFFFFFFF), mixed)
    return mixed


def keyed_order(keys: np.ndarray, salt: int) -> np.ndarray:
    """The examples sorted by their keys mixed with ``salt`` (a seeded shuffle that
    depends on what the examples are, not on their positions)."""
    return np.argsort(mixed_keys(keys, salt), kind="stable")


class _KernelErrors:
    """Exceptions raised inside a rule's compiled kernel. A C callback cannot raise:
    numba hands them to ``sys.unraisablehook`` and training went on (the command exited
    0). While training, they are collected here, and the training stops with a
    PluginError naming the rule (checked after every run of the engine)."""

    def __init__(self) -> None:
        self.caught: list[BaseException] = []
        self.depth = 0
        self.previous: Any = None
        self.persistent = False

    def __enter__(self) -> _KernelErrors:
        if self.depth == 0:  # (a training starts with none collected)
            self.caught = []
            if sys.unraisablehook != self._hook:  # (a bound method: never `is` it)
                self.previous = sys.unraisablehook
                sys.unraisablehook = self._hook
        self.depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.depth -= 1
        if self.depth == 0 and not self.persistent and sys.unraisablehook == self._hook:
            sys.unraisablehook = self.previous

    def watch(self) -> None:
        """Collect from now on (the one-example paths, which check after each example:
        a hook set and reset per example would cost more than the check)."""
        if sys.unraisablehook != self._hook:
            self.previous = sys.unraisablehook
            sys.unraisablehook = self._hook
        self.persistent = True

    def _hook(self, info: Any) -> None:
        if "CPUContext" in repr(getattr(info, "object", None)) and info.exc_value is not None:
            self.caught.append(info.exc_value)
        else:
            self.previous(info)

    def take(self) -> tuple[BaseException, int]:
        """The first exception collected and how many there were; clears them."""
        first, count = self.caught[0], len(self.caught)
        self.caught = []
        return first, count


#: Exceptions raised in rules' compiled steps, collected while training.
KERNEL_ERRORS = _KernelErrors()


def refresh_points(seen: int, n: int) -> list[int]:
    """Positions ``0 < p < n`` of a run of ``n`` examples where the examples seen, ``seen``
    before it, reach a power of two.

    >>> refresh_points(0, 10), refresh_points(5, 10)
    ([1, 2, 4, 8], [3])
    """
    points = []
    power = 1
    while power < seen + n:
        if power > seen:
            points.append(power - seen)
        power *= 2
    return [p for p in points if 0 < p < n]


def checking_kernels() -> bool:
    """Whether rules' steps run on guarded copies of their buffers
    (``SNOWPY_CHECK_KERNELS=1``: ``snowpy plugins --check`` and the conformance suite
    set it): a write outside its arrays stops the training and names the rule."""
    return os.environ.get("SNOWPY_CHECK_KERNELS", "") not in ("", "0")
