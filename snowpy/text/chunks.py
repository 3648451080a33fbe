"""Chunks of documents, and the buffers featurising them reuses.

The front end works chunk by chunk (about ``chunk_bytes`` of text each), so
memory stays bounded and hot in cache: :class:`SequenceChunks` cuts a list of
documents into chunks by their encoded size, :class:`Workspace` keeps each
thread's buffers from one chunk to the next, and :class:`Inline` stands for
a thread pool when one thread does all the work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["Inline", "SequenceChunks", "Workspace", "approximate_size", "grown", "trimmed"]


class Workspace:
    """Buffers reused from chunk to chunk, grown when too small."""

    def __init__(self, buffers: dict[str, np.ndarray] | None = None, prefix: str = ""
                 ) -> None:
        self._buffers: dict[str, np.ndarray] = {} if buffers is None else buffers
        self._prefix = prefix

    @property
    def nbytes(self) -> int:
        """The bytes its buffers hold."""
        return sum(buffer.nbytes for buffer in self._buffers.values())

    def view(self, prefix: str) -> Workspace:
        """The same workspace with buffer names under ``prefix`` (one per field)."""
        return Workspace(self._buffers, self._prefix + prefix)

    def get(self, name: str, shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
        """A buffer of ``shape`` (its contents are whatever the last chunk left).

        Called several times per chunk, and per document on the one-document
        path: plain Python arithmetic, no numpy call but the slice.
        """
        if isinstance(shape, tuple):
            size = 1
            for extent in shape:
                size *= int(extent)
        else:
            size = int(shape)
        key = self._prefix + name
        buffer = self._buffers.get(key)
        if buffer is None or buffer.size < size or buffer.dtype != dtype:
            buffer = np.empty(max(size, 1) + size // 2, dtype=dtype)
            self._buffers[key] = buffer
        return buffer[:size] if not isinstance(shape, tuple) else \
            buffer[:size].reshape(shape)


class Inline:
    """A stand-in for a thread pool that runs each task at once (one job)."""

    def shutdown(self) -> None:
        """Nothing to stop."""

    def submit(self, function: Any, *args: Any) -> Any:
        from concurrent.futures import Future

        future: Future = Future()
        try:
            future.set_result(function(*args))
        except BaseException as exc:  # re-raised by result(), as a pool would
            future.set_exception(exc)
        return future


class SequenceChunks:
    """Chunks of about ``chunk_bytes`` from a list of documents, without a pass of their own.

    The number of documents in a chunk is guessed from the last chunk's
    encoded size (at the start, from the first documents' lengths) and
    checked once the chunk is encoded (:meth:`encoded`): a chunk over
    ``4 * chunk_bytes`` gives its second half back, so memory stays bounded
    even when long documents follow short ones. Measuring every document
    first would cost as much as encoding them.
    """

    def __init__(self, texts: Sequence[Any], chunk_bytes: int) -> None:
        self.texts = texts
        self.chunk_bytes = chunk_bytes
        self.position = 0
        probe = texts[:256]
        size = sum(map(approximate_size, probe))
        self.step = max(1, int(len(probe) * chunk_bytes / max(size, 1)))

    def next(self) -> list[Any]:
        start = self.position
        self.position = min(start + self.step, len(self.texts))
        return list(self.texts[start:self.position])

    def encoded(self, n_docs: int, size: int) -> int:
        """Take note of a chunk's encoded size; return how many of its documents to keep."""
        if size > 4 * self.chunk_bytes and n_docs > 1:
            keep = n_docs // 2
            self.position -= n_docs - keep
            self.step = keep
            return keep
        self.step = max(1, min(2 * n_docs, int(n_docs * self.chunk_bytes / max(size, 1))))
        return n_docs


def grown(array: np.ndarray | None, capacity: int, dtype: Any, used: int) -> np.ndarray:
    """``array`` with room for ``capacity`` items, its first ``used`` kept (in place when
    nothing else refers to it: realloc moves pages instead of copying them)."""
    if array is not None and array.base is None and array.flags.owndata:
        try:
            array.resize(capacity, refcheck=True)
            return array
        except ValueError:  # referred to elsewhere
            pass
    grown = np.empty(capacity, dtype=dtype)
    if array is not None and used:
        grown[:used] = array[:used]
    return grown


def trimmed(array: np.ndarray, length: int) -> np.ndarray:
    """The first ``length`` items of ``array``, its spare room given back when it can be."""
    if array.size > length:
        try:
            array.resize(length, refcheck=True)
        except ValueError:  # referred to elsewhere: keep a view
            return array[:length]
    return array


def approximate_size(doc: Any) -> int:
    if isinstance(doc, (str, bytes)):
        return len(doc)
    if isinstance(doc, dict):
        return sum(len(v) for v in doc.values() if isinstance(v, (str, bytes)))
    if isinstance(doc, (tuple, list)):
        return sum(len(v) for v in doc if isinstance(v, (str, bytes)))
    return 64


