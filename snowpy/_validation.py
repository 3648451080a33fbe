"""Checks on the inputs of estimators: feature matrices and their labels."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from snowpy.exceptions import ConfigurationError

__all__ = ["as_csr", "check_length"]


def as_csr(X: Any, *, name: str = "X") -> sp.csr_matrix:
    """Return ``X`` as a canonical CSR matrix of float64 strengths.

    Canonical means sorted column indices without duplicates (a duplicate
    would be updated twice). The input is copied only when it must change.

    Raises
    ------
    ConfigurationError
        ``X`` is not a 2-D numeric matrix or holds NaN or infinity.

    Examples
    --------
    >>> as_csr([[0, 1.5], [2, 0]]).toarray()
    array([[0. , 1.5],
           [2. , 0. ]])
    """
    if sp.issparse(X):
        if X.ndim != 2:
            raise ConfigurationError(f"{name} must be 2-D, got {X.ndim}-D")
        if not isinstance(X, sp.csr_matrix):  # a CSR matrix keeps its cached canonical flag
            X = sp.csr_matrix(X)
    else:
        try:
            array = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            raise ConfigurationError(
                f"{name} must be a scipy sparse matrix or a 2-D array of numbers; "
                f"got {type(X).__name__} (for raw text use snowpy.SnowClassifier)"
            ) from None
        if array.ndim != 2:
            raise ConfigurationError(f"{name} must be 2-D, got shape {array.shape}")
        X = sp.csr_matrix(array)
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if not np.all(np.isfinite(X.data)):
        bad = int(np.flatnonzero(~np.isfinite(X.data))[0])
        row = int(np.searchsorted(X.indptr, bad, side="right") - 1)
        raise ConfigurationError(f"{name} holds NaN or infinity (first in row {row})")
    return X


def check_length(n_rows: int, values: Any, name: str) -> None:
    """Raise when ``values`` does not have one entry per row of X."""
    try:
        length = len(values)
    except TypeError:
        raise ConfigurationError(f"{name} must be a sequence with one entry per row of X") from None
    if length != n_rows:
        raise ConfigurationError(f"X has {n_rows} rows but {name} has {length} entries")
