"""The weight table of a network: rows x planes x targets, feature-major.

Row 0 is the bias (SNoW's fixed feature). The table is feature-major, so the
weights of one feature for every target are contiguous and scoring an
example reads one short run of memory per active feature.

Two storages
------------
``"dense"``
    One row per column of ``X`` (row = column + 1). Memory is ``8 * planes
    * targets * (n_features + 1)`` bytes, the same as scikit-learn's
    ``coef_`` for one plane.
``"compact"`` (default)
    A row only for the features actually seen in training, allocated as they
    arrive (SNoW's "infinite attribute domain"). Memory is proportional to
    the features seen, whatever the width of ``X`` (``2**32`` hashed ids are
    fine). A feature never seen in training contributes its initial
    effective weight at prediction, exactly as in the dense table, so both
    storages predict the same.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from snowpy.network.feature_map import FeatureMap
from snowpy.rules.spec import RuleKernel

__all__ = ["WeightTable", "STORAGES"]

STORAGES = ("compact", "dense")
_MAX_ROWS = 2**31 - 2


class WeightTable:
    """Weights, averaging sums and per-target state of one network."""

    def __init__(
        self, kernel: RuleKernel, n_targets: int, n_features: int, *, storage: str, average: bool
    ) -> None:
        self.kernel = kernel
        self.storage = storage
        self.n_features = n_features
        self.average = average
        self.n_rows = 1 if storage == "compact" else n_features + 1
        if self.n_rows > _MAX_ROWS:
            raise ValueError(
                "a dense table holds at most 2**31 - 2 features; use storage='compact'"
            )
        capacity = max(self.n_rows, 1024) if storage == "compact" else self.n_rows
        self._W = self._fresh_weights(capacity, n_targets)
        self._U = np.zeros_like(self._W) if average else None
        self.S = self._fresh_state(n_targets)
        self.seen = 0
        #: True for a table loaded from an inference-only model file: one plane
        #: holding the effective (averaged) weights, no training state
        self.frozen = False
        self._map = FeatureMap() if storage == "compact" else None

    # ------------------------------------------------------------------ shape
    @property
    def n_targets(self) -> int:
        return self._W.shape[2]

    @property
    def W(self) -> np.ndarray:
        """The weights in use, ``float64[rows, planes, targets]`` (a view)."""
        return self._W[: self.n_rows]

    @property
    def U(self) -> np.ndarray:
        """The averaging sums (empty when not averaging)."""
        if self._U is None:
            return np.empty((0, 0, 0))
        return self._U[: self.n_rows]

    @property
    def feature_ids(self) -> np.ndarray:
        """Column of ``X`` held by each row from 1 on."""
        if self._map is None:
            return np.arange(self.n_features, dtype=np.int64)
        return self._map.row_ids

    def nbytes(self) -> int:
        """Bytes allocated for weights, averaging sums, state and the feature map."""
        total = self._W.nbytes + self.S.nbytes + (self._map.nbytes if self._map else 0)
        return total + (self._U.nbytes if self._U is not None else 0)

    def _fresh_weights(self, n_rows: int, n_targets: int) -> np.ndarray:
        init = np.asarray(self.kernel.initial_weights, dtype=np.float64)
        table = np.empty((n_rows, init.size, n_targets), dtype=np.float64)
        table[...] = init[None, :, None]
        return table

    def _fresh_state(self, n_targets: int) -> np.ndarray:
        state = np.zeros((n_targets, self.kernel.state_size), dtype=np.float64)
        if self.kernel.initial_state:
            state[:] = np.asarray(self.kernel.initial_state, dtype=np.float64)
        return state

    # ----------------------------------------------------------------- growth
    def add_targets(self, count: int) -> None:
        """Append ``count`` target columns at their initial weights."""
        if count <= 0:
            return
        capacity = self._W.shape[0]
        extra = self._fresh_weights(capacity, count)
        self._W = np.ascontiguousarray(np.concatenate([self._W, extra], axis=2))
        if self._U is not None:
            self._U = np.ascontiguousarray(
                np.concatenate([self._U, np.zeros_like(extra)], axis=2)
            )
        self.S = np.concatenate([self.S, self._fresh_state(count)], axis=0)

    def _reserve_rows(self, n_rows: int) -> None:
        capacity = self._W.shape[0]
        if n_rows <= capacity:
            return
        if n_rows > _MAX_ROWS:
            raise ValueError("the network cannot hold more than 2**31 - 2 features")
        new_capacity = min(max(n_rows, 2 * capacity), _MAX_ROWS)
        init = np.asarray(self.kernel.initial_weights, dtype=np.float64)
        self._grow("_W", new_capacity)
        self._W[capacity:] = init[None, :, None]
        if self._U is not None:
            self._grow("_U", new_capacity)  # new rows are zero

    def _grow(self, name: str, n_rows: int) -> None:
        """Give table ``name`` ``n_rows`` rows, the new ones zero.

        In place when nothing else refers to it (``realloc``: the kernel moves
        the pages of a large block instead of copying them, and the old pages
        need not be faulted in again); otherwise (a view is held, or the table
        is memory-mapped from a model file) by a copy.
        """
        array = getattr(self, name)
        setattr(self, name, None)  # this frame's reference is the only one
        shape = (n_rows,) + array.shape[1:]
        if array.base is None and array.flags.c_contiguous:
            try:
                array.resize(shape, refcheck=True)
            except ValueError:  # referred to elsewhere
                pass
        if array.shape != shape:
            grown = np.zeros(shape, dtype=array.dtype)
            grown[:array.shape[0]] = array
            array = grown
        setattr(self, name, array)

    # ------------------------------------------------------------- row lookup
    def training_rows(self, X: sp.csr_matrix) -> np.ndarray:
        """Rows of ``X.indices``, allocating rows for features not seen yet."""
        if self._map is None:
            return (X.indices + 1).astype(np.int32)
        rows = self._map.rows(X.indices, insert=True)
        self._reserve_rows(self._map.next_row)
        self.n_rows = self._map.next_row
        return rows

    def prediction_rows(self, X: sp.csr_matrix) -> np.ndarray:
        """Rows of ``X.indices``; in compact storage unseen features get row ``n_rows``.

        :meth:`effective` appends that row, holding the initial effective weight.
        """
        if self._map is None:
            return (X.indices + 1).astype(np.int32)
        return self._map.rows(X.indices, insert=False, unseen=self.n_rows)

    # -------------------------------------------------------------- weights
    def effective(self, *, averaged: bool) -> np.ndarray:
        """Effective weights ``float64[rows (+1 in compact), targets]``.

        ``sum_p planes[p] * W[:, p, :]``, from the averaged weights when asked
        and available. In compact storage a last row holds the initial
        effective weight, for features never seen in training.
        """
        weights = self.W
        if averaged and self._U is not None and self.seen > 0:
            weights = weights - self.U / self.seen
        planes = (1.0,) if self.frozen else self.kernel.planes
        result = planes[0] * weights[:, 0, :]
        for p in range(1, len(planes)):
            if planes[p] != 0.0:
                result = result + planes[p] * weights[:, p, :]
        if self.storage == "compact":
            unseen = np.full((1, self.n_targets), self.kernel.initial_effective_weight)
            result = np.vstack([result, unseen])
        return np.ascontiguousarray(result)
