"""Checks on the inputs of estimators: feature matrices and their labels; ``n_jobs`` as
threads, and work shared among them."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from snowpy._lazy import lazy_module
from snowpy._rows import Rows
from snowpy.exceptions import ConfigurationError, DataTypeError

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp
else:
    sp = lazy_module("scipy.sparse")

__all__ = ["EMPTY_LABEL", "apply_weights", "as_csr", "check_length", "require_rows",
           "threads_of"]

#: Why a label of white space only, or none, is refused, by training and by the corpus
#: readers alike: it would be a class whose name is nothing, printed as a blank answer.
EMPTY_LABEL = "empty label: a label needs a character other than white space"


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
    if isinstance(X, Rows):  # snowpy's own rows: canonical, float64, finite by making
        return X
    if isinstance(X, str) or (isinstance(X, (list, tuple)) and X and isinstance(X[0], str)):
        raise ConfigurationError(
            f"{name} holds text; a Network takes feature vectors (for raw text use "
            "snowpy.SnowClassifier, or snowpy.Featurizer first)")
    if sp.issparse(X):
        if X.ndim != 2:
            raise ConfigurationError(f"{name} must be 2-D, got {X.ndim}-D")
        if np.iscomplexobj(X.data if hasattr(X, "data") else X.toarray()):
            raise ConfigurationError("Complex data not supported")
        if not isinstance(X, sp.csr_matrix):  # a CSR matrix keeps its cached canonical flag
            X = sp.csr_matrix(X)
    else:
        array = np.asarray(X)
        if np.iscomplexobj(array):
            raise ConfigurationError("Complex data not supported")
        try:
            array = array.astype(np.float64, copy=False)
        except TypeError as exc:  # an entry that is no number: {"a": 1}, None...
            raise DataTypeError(f"{name} must hold numbers; an entry is not one: "
                                f"{exc}") from None
        except ValueError:
            raise ConfigurationError(
                f"{name} must be a scipy sparse matrix or a 2-D array of numbers; "
                f"got {type(X).__name__} (for raw text use snowpy.SnowClassifier)"
            ) from None
        if array.ndim != 2:
            hint = (" Reshape your data either using array.reshape(-1, 1) if your data has a "
                    "single feature or array.reshape(1, -1) if it contains a single sample."
                    if array.ndim == 1 else "")
            raise ConfigurationError(f"{name} must be 2-D, got shape {array.shape}.{hint}")
        X = sp.csr_matrix(array)
    if X.shape[1] == 0:
        raise ConfigurationError(f"Found array with 0 feature(s) (shape={X.shape}) while a "
                                 "minimum of 1 is required.")
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


def require_rows(X: sp.csr_matrix) -> None:
    """Refuse an empty training set (nothing to learn from is a mistake, not a model)."""
    if X.shape[0] == 0:
        raise ConfigurationError(f"Found array with 0 sample(s) (shape={X.shape}) while a "
                                 "minimum of 1 is required.")


def apply_weights(X: sp.csr_matrix, y: Any, targets: Any, sample_weight: Any,
                  keys: np.ndarray | None = None
                  ) -> tuple[sp.csr_matrix, Any, Any, np.ndarray | None]:
    """Examples repeated as many times as their weight says (whole numbers only: a
    mistake-driven learner sees an example or does not), in their order.

    >>> X, y, _, _ = apply_weights(sp.csr_matrix(np.eye(3)), ["a", "b", "c"], None, [2, 0, 1])
    >>> X.toarray().tolist(), y
    ([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], ['a', 'a', 'c'])
    """
    if sample_weight is None:
        return X, y, targets, keys
    weights = np.asarray(sample_weight, dtype=np.float64)
    if weights.ndim == 0:
        weights = np.full(X.shape[0], float(weights))
    if weights.shape != (X.shape[0],):
        raise ConfigurationError(f"sample_weight.shape == {weights.shape}, expected "
                                 f"({X.shape[0]},): one weight per row of X")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0) \
            or np.any(weights != np.round(weights)):
        raise ConfigurationError(
            "sample_weight must hold whole numbers >= 0: how many times each example is "
            "learned (a mistake-driven update has no fractional form)")
    counts = weights.astype(np.int64)
    if np.all(counts == 1):
        return X, y, targets, keys
    if not counts.any():
        raise ConfigurationError("sample_weight is zero for every example: nothing to learn")
    order = np.repeat(np.arange(X.shape[0]), counts)
    pick = [y[i] for i in order] if not isinstance(y, np.ndarray) else y[order]
    picked_targets = None if targets is None else [targets[i] for i in order]
    return X[order], pick, picked_targets, None if keys is None else keys[order]


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the system tells it)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # pragma: no cover - macOS and Windows
        return os.cpu_count() or 1


def threads_of(n_jobs: Any) -> int:
    """scikit-learn's ``n_jobs`` as a number of threads: None is 1, -1 every core the
    process may use, -2 all but one...

    >>> threads_of(None), threads_of(3), threads_of(-1) == usable_cores()
    (1, 3, True)
    """
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ConfigurationError(f"n_jobs must be a positive integer, -1 (every core) or "
                                 f"None (one), got {n_jobs!r}")
    return int(n_jobs) if n_jobs > 0 else max(1, usable_cores() + 1 + int(n_jobs))


def on_threads(work: Callable[[Any], Any], items: Iterable[Any], threads: int) -> list[Any]:
    """``work(item)`` for each item, in order, on up to ``threads`` threads (work that
    releases the GIL: compiled loops, hashing); on the calling thread for one.

    >>> on_threads(abs, [-1, 2, -3], 2)
    [1, 2, 3]
    """
    items = list(items)
    if threads <= 1 or len(items) < 2:
        return [work(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(threads, len(items))) as pool:
        return list(pool.map(work, items))
