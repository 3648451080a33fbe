"""The compiled loops of :mod:`snowpy.distributed.mixing`: a network's links as sorted
keys, what one round changed, and the linear merges of sorted tables
(:mod:`snowpy._core.merging`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy._core import merging
from snowpy._core.merging import changes, merge

__all__ = ["changes", "merge", "table"]


def table(features: np.ndarray, sizes: np.ndarray, targets: np.ndarray, W: np.ndarray,
          U: np.ndarray, averaging: bool, reference: np.ndarray, geometric: bool,
          n_targets: int) -> Any:
    """Keys ``(feature + 1) * n_targets + target`` in increasing order; per key
    ``f(w) - f(reference)`` of each weight plane (``f`` the logarithm when
    ``geometric``), the averaging sums (``U``, when ``averaging``) and the link each
    came from. ``features[0]`` is the bias (-1); a row's links lie in the order made."""
    features = np.ascontiguousarray(features, dtype=np.int64)
    order = np.argsort(features, kind="stable").astype(np.int64)
    if not averaging or U.shape[0] == 0:  # (read only for links, which it then has)
        U = W[:0]
    return merging.table(features, order, np.ascontiguousarray(sizes, dtype=np.int32),
                         np.ascontiguousarray(targets, dtype=np.int32),
                         np.ascontiguousarray(W), np.ascontiguousarray(U, dtype=W.dtype),
                         bool(averaging), np.asarray(reference, np.float64),
                         bool(geometric), int(n_targets))
