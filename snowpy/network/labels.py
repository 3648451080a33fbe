"""Labels to target nodes: one target per label, grown as labels appear.

A label is a string, an integer, a bool or a finite float (numpy scalars are
taken as the Python value). Targets are numbered in order of first
appearance and never renumbered, so a model can keep learning with new
labels (``partial_fit``) without a ``classes=`` argument up front.

Labels arrive either one per example (single-label) or as a collection per
example (multi-label: a list, tuple, set or frozenset, possibly empty).
Both are encoded as CSR arrays ``(indptr, targets)`` that the engine reads.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from snowpy._validation import EMPTY_LABEL
from snowpy.exceptions import ConfigurationError, DataConversionWarning

__all__ = [
    "COLLECTIONS",
    "LabelIndex",
    "check_y",
    "encode_labels",
    "is_multilabel",
    "label_array",
    "label_index",
    "labels_of",
    "normalise_label",
    "positive_matrix",
    "refuse_label_kind",
    "sorted_labels",
]

#: What a multi-label example's label is: a collection of labels.
COLLECTIONS = (list, tuple, set, frozenset)


def normalise_label(label: Any) -> Any:
    """Return ``label`` as a plain hashable Python value, or raise.

    >>> normalise_label(np.int64(3)), normalise_label("spam")
    (3, 'spam')
    >>> normalise_label(" ")
    Traceback (most recent call last):
    snowpy.exceptions.ConfigurationError: empty label: a label needs a character other than white space
    """
    if isinstance(label, np.generic):
        label = label.item()
    if isinstance(label, str):
        if not label.strip():
            raise ConfigurationError(EMPTY_LABEL)
        return label
    if isinstance(label, int):  # bool is an int
        return label
    if isinstance(label, float) and math.isfinite(label):
        return label
    raise ConfigurationError(
        f"a label must be a string, an integer or a finite number, got {label!r}"
    )


def check_y(y: Any, n_rows: int, owner: str) -> tuple[Any, int | None]:
    """``y`` as training takes it, and the width of a label-indicator matrix (None when
    ``y`` is not one).

    Accepts one label per example (a list, or any array-like), one collection of labels
    per example, a column vector (n, 1) (with a :class:`DataConversionWarning`), or a
    0/1 indicator matrix (n, labels) as a 2-D numpy array or sparse matrix,
    scikit-learn's multi-label form, whose labels are its column numbers (a list of
    lists stays what snowpy takes it for: each example's collection of labels). Refuses
    ``None``, a continuous target and a length that is not ``n_rows``.

    >>> check_y(np.array([[1, 0, 1], [0, 1, 0]]), 2, "Network")
    ([(0, 2), (1,)], 3)
    """
    if y is None:
        raise ConfigurationError(f"{owner} requires y to be passed, but the target y is None")
    if isinstance(y, str):
        raise ConfigurationError("y is a string; give one label per example")
    if hasattr(y, "toarray") and getattr(y, "ndim", 1) == 2:  # a sparse indicator matrix
        y = y.toarray()
    if not isinstance(y, (list, tuple, np.ndarray)) and hasattr(y, "__array__"):
        y = np.asarray(y)
    elif not hasattr(y, "__len__"):
        y = list(y)
    if isinstance(y, list) and y and all(isinstance(row, np.ndarray) and row.ndim == 1
                                         for row in y):
        y = np.vstack(y)  # rows of an indicator matrix
    width = None
    if isinstance(y, np.ndarray) and y.ndim == 2:
        if y.shape[1] == 1:
            _warn_always("A column-vector y was passed when a 1d array was expected; "
                         "snowpy took it as one label per example", DataConversionWarning)
            y = y.ravel()
        elif y.dtype.kind in "biuf" and np.isin(y, (0, 1)).all():
            width = int(y.shape[1])
            y = [tuple(np.flatnonzero(row).tolist()) for row in y]
        else:
            raise ConfigurationError(
                "y is a 2-D array but not a 0/1 label-indicator matrix; give one label per "
                "example, or one collection of labels per example for multi-label training")
    if len(y) != n_rows:
        raise ConfigurationError(f"X has {n_rows} rows but y has {len(y)} entries")
    if width is None and _continuous(y):
        raise ConfigurationError(
            "Unknown label type: continuous. A classifier takes labels (strings, integers, "
            "or numbers that are whole); round a numeric target into classes first")
    return y, width


def _warn_always(message: str, category: type[Warning]) -> None:
    """Warn at the caller's caller, every time (not once per place, as ``warnings.warn``
    does: a conversion each call should be said each call)."""
    frame = sys._getframe(3)
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__"), registry=None)


def _continuous(y: Any) -> bool:
    """Whether ``y`` holds floats that are not all whole numbers (a regression target)."""
    values = y if isinstance(y, np.ndarray) else None
    if values is None:
        if not y or not all(isinstance(v, (float, np.floating)) for v in y[:1000]):
            return False
        values = np.asarray([v for v in y if isinstance(v, (float, np.floating))])
    if values.dtype.kind != "f" or values.ndim != 1:
        return False
    finite = values[np.isfinite(values)]
    return bool(finite.size and np.any(finite != np.round(finite)))


def is_multilabel(y: Sequence[Any]) -> bool:
    """True when the labels are given as one collection per example.

    >>> is_multilabel([["earn"], ["acq", "earn"], []]), is_multilabel(["a", "b"])
    (True, False)
    """
    if isinstance(y, np.ndarray) and y.dtype.kind in "iuUSbf" and y.ndim == 1:
        return False
    if isinstance(y, np.ndarray) and y.ndim == 2:
        raise ConfigurationError(
            "y is a 2-D array; give one label per example, or one collection of labels "
            "per example for multi-label training"
        )
    kinds = {issubclass(kind, COLLECTIONS) for kind in set(map(type, y))}
    if len(kinds) > 1:
        raise ConfigurationError(
            "y mixes single labels and collections of labels; use collections for every "
            "example (multi-label) or single labels for every example"
        )
    return kinds == {True}


class LabelIndex:
    """The labels a network knows, in target order.

    Examples
    --------
    >>> index = LabelIndex()
    >>> index.encode(["spam", "ham", "spam"], multilabel=False)
    (array([0, 1, 2, 3]), array([0, 1, 0], dtype=int32))
    >>> index.labels
    ['spam', 'ham']
    """

    def __init__(self, labels: Iterable[Any] = ()) -> None:
        self.labels: list[Any] = []
        self._index: dict[Any, int] = {}
        for label in labels:
            self.add(label)

    def __len__(self) -> int:
        return len(self.labels)

    def add(self, label: Any) -> int:
        """The target of ``label``, creating it when new."""
        label = normalise_label(label)
        target = self._index.get(label)
        if target is None:
            target = self._index[label] = len(self.labels)
            self.labels.append(label)
        return target

    def remove(self, label: Any) -> int:
        """Forget ``label``; its target (the labels after it move down one). A label the
        index does not know is refused, naming the ones it knows.

        >>> index = LabelIndex(["spam", "ham", "eggs"])
        >>> index.remove("ham"), index.labels, index.find("eggs")
        (1, ['spam', 'eggs'], 1)
        """
        target = self._known(label)
        del self.labels[target]
        self._index = {known: t for t, known in enumerate(self.labels)}
        return target

    def target_of(self, label: Any) -> int | None:
        """The target of a label exactly as stored (a ``str``, say), or None: the
        one-example path's look-up, without normalising."""
        return self._index.get(label)

    def find(self, label: Any) -> int | None:
        """The target of a known label, or None."""
        try:
            return self._index.get(normalise_label(label))
        except ConfigurationError:
            return None

    def encode(
        self, y: Sequence[Any], *, multilabel: bool, grow: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """Encode labels as CSR ``(indptr int64, targets int32)``.

        With ``grow=False`` an unknown label raises ``ConfigurationError``.
        """
        lookup = self.add if grow else self._known
        indptr = np.zeros(len(y) + 1, dtype=np.int64)
        targets: list[int] = []
        for i, item in enumerate(y):
            if multilabel:
                found = {lookup(label) for label in item}
                targets.extend(sorted(found))
            else:
                targets.append(lookup(item))
            indptr[i + 1] = len(targets)
        return indptr, np.asarray(targets, dtype=np.int32)

    def _known(self, label: Any) -> int:
        target = self.find(label)
        if target is None:
            raise ConfigurationError(f"unknown label {label!r}; the model knows {self.labels}")
        return target

    def as_array(self) -> np.ndarray:
        """The labels as a numpy array (``classes_``): str, int64 or object dtype."""
        labels = self.labels
        if labels and all(isinstance(x, str) for x in labels):
            return np.array(labels, dtype=str)
        if labels and all(isinstance(x, int) and not isinstance(x, bool) for x in labels):
            return np.array(labels, dtype=np.int64)
        out = np.empty(len(labels), dtype=object)
        out[:] = labels
        return out


def label_array(y: Sequence[Any]) -> Any:
    """Single labels all str or all int as a numpy array (vectorised handling), else ``y``.

    >>> label_array(["b", "a"]).dtype.kind, label_array([1, "a"])
    ('U', [1, 'a'])
    """
    if isinstance(y, np.ndarray) or not isinstance(y, (list, tuple)) or not y:
        return y
    kinds = set(map(type, y))
    if all(issubclass(kind, str) for kind in kinds):
        return np.array(y, dtype=str)
    if all(issubclass(kind, (int, np.integer)) and not issubclass(kind, (bool, np.bool_))
           for kind in kinds):
        return np.array(y, dtype=np.int64)
    return y


def label_index(y: Sequence[Any], multilabel: bool, width: int | None = None) -> LabelIndex:
    """The targets a fit on labels ``y`` makes: one per label, sorted (a ``width`` of an
    indicator matrix: its columns), with a warning when a single-label ``y`` holds one
    class only (every prediction will be it).

    >>> label_index(["b", "a", "b"], False).labels
    ['a', 'b']
    """
    labels = LabelIndex(list(range(width)) if width is not None
                        else sorted_labels(y, multilabel))
    if len(labels) < 2 and not multilabel:
        warnings.warn(
            f"y holds one class only ({', '.join(map(repr, labels.labels[:1]))}): every "
            "prediction will be it until partial_fit meets another", UserWarning,
            stacklevel=3)
    return labels


def sorted_labels(y: Sequence[Any], multilabel: bool) -> list[Any]:
    """The distinct labels of ``y``, sorted when they can be (scikit-learn's order).

    >>> sorted_labels(["b", "a", "b"], False), sorted_labels([["x"], [], ["a", "x"]], True)
    (['a', 'b'], ['a', 'x'])
    """
    if not multilabel and isinstance(y, np.ndarray) and y.dtype.kind in "iuUSb":
        return np.unique(y).tolist()
    index = LabelIndex()
    for item in y:
        for label in item if multilabel else (item,):
            index.add(label)
    try:
        return sorted(index.labels)
    except TypeError:
        return index.labels


def positive_matrix(y_indptr: np.ndarray, y_targets: np.ndarray, n_targets: int,
                    order: np.ndarray | None = None) -> np.ndarray:
    """``bool[examples, n_targets]``: which targets each encoded example (each of
    ``order``, when given) is positive for.

    >>> positive_matrix(np.array([0, 1, 3]), np.array([1, 0, 2]), 3).astype(int).tolist()
    [[0, 1, 0], [1, 0, 1]]
    """
    order = np.arange(y_indptr.shape[0] - 1) if order is None else order
    examples, at = labels_of(y_indptr, order)
    positives = np.zeros((order.size, n_targets), dtype=bool)
    positives[examples, y_targets[at]] = True
    return positives


def labels_of(indptr: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each label of the examples of ``order`` (their labels ``indptr[i]`` to
    ``indptr[i + 1]`` of a label array): its example's place in ``order``, and its place
    in the label array."""
    starts = indptr[order]
    counts = indptr[order + 1] - starts
    at = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) \
        + np.repeat(starts, counts)
    return np.repeat(np.arange(order.size), counts), at


def encode_labels(index: LabelIndex, y: Sequence[Any], multilabel: bool
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``index.encode(y)``, vectorised for a numpy array of single labels."""
    if not multilabel and isinstance(y, np.ndarray) and y.dtype.kind in "iuUSb":
        uniques, inverse = np.unique(y, return_inverse=True)
        mapping = np.array([index.add(label) for label in uniques.tolist()], dtype=np.int32)
        return np.arange(len(y) + 1, dtype=np.int64), mapping[inverse.reshape(-1)]
    return index.encode(y, multilabel=multilabel)


def refuse_label_kind(multilabel: bool, given: bool) -> None:
    """Refuse labels that are sets (``given``) where a network learned single labels, or
    the reverse (``multilabel``: it learned sets)."""
    if given != multilabel:
        kind = "multi-label" if multilabel else "single-label"
        raise ConfigurationError(f"this network was trained {kind}; y must be {kind} too")
