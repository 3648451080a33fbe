"""Interpret small jobs, compile large ones: the mode of a command's kernels.

A compiled snowpy process pays a fixed cost before its first example: importing
numba and loading the machine code of its kernels from numba's cache (about
0.4 s), or, on a machine's first run, compiling them (15-20 s). The same
kernels run as Python (:mod:`snowpy._jit`) with neither cost, at some
hundreds of kilobytes of text per second. So a command whose job is small runs
interpreted, like a tiered JIT that interprets code before it is hot:

* ``predict`` and ``evaluate``: when reading the model and scoring the input as
  Python is estimated to take less than the compiled start-up;
* ``train``: on a machine whose kernels are not compiled yet, when learning
  the corpus as Python is estimated to take a fraction of compiling them.

The choice changes no result (both modes compute the same numbers), only the
time. ``SNOWPY_JIT=always`` or ``never`` overrides it.
"""

from __future__ import annotations

import io
import os
import stat
import sys
import time
from pathlib import Path

__all__ = ["compiled_before", "for_prediction", "for_training", "input_size",
           "numba_cache_places"]

#: Python's pace at loading a model file's link tables, bytes per second.
MODEL_BYTES_PER_S = 10e6
#: Python's pace at featurising and scoring text, bytes per second.
SCORE_BYTES_PER_S = 200e3
#: Python's pace at learning, corpus bytes times epochs (and networks) per second.
LEARN_BYTES_PER_S = 1e6
#: Compiled start-up with a warm cache: importing numba, loading the kernels (s).
WARM_START_S = 0.3
#: Interpreted training is chosen over a first compilation below this estimate (s).
COLD_TRAINING_S = 6.0
#: How long standard input may take to end for its size to count as known (s).
PIPE_WAIT_S = 0.05


def _choice() -> str:
    value = os.environ.get("SNOWPY_JIT", "auto").strip().lower() or "auto"
    return value if value in ("auto", "always", "never") else "auto"


def _file_size(path: str | Path | None) -> int | None:
    """The size of a regular file (standard input when redirected from one), else None."""
    try:
        if path in (None, "-"):
            info = os.fstat(0)
        else:
            info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def input_size(source: str | None, limit: int = 256 * 1024) -> int | None:
    """Bytes of text to come from ``source`` (a path, or standard input for None or
    ``-``), or None when unknown or above ``limit``.

    A pipe that ends within :data:`PIPE_WAIT_S` (``echo ... | snowpy predict``) is
    read ahead here and replayed to the command unchanged; one still being written
    (a filter on a live stream) is left alone, as its size is unknown. Typed input
    (a terminal) counts as small.
    """
    size = _file_size(source)
    if size is not None or source not in (None, "-"):
        return size
    try:
        if os.isatty(0):
            return 0
        import select

        chunks: list[bytes] = []
        total, deadline = 0, time.monotonic() + PIPE_WAIT_S
        ended = False
        while total <= limit:
            ready, _, _ = select.select([0], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            data = os.read(0, limit + 1 - total)
            if not data:
                ended = True
                break
            chunks.append(data)
            total += len(data)
    except (OSError, ValueError):  # no select on this kind of input (Windows pipes)
        return None
    if chunks:
        sys.stdin = io.TextIOWrapper(io.BufferedReader(_Replay(b"".join(chunks))),
                                     encoding=sys.stdin.encoding, errors=sys.stdin.errors)
    return total if ended else None


class _Replay(io.RawIOBase):
    """Standard input with its first bytes, already read, given back first."""

    def __init__(self, prefix: bytes) -> None:
        self.prefix = memoryview(prefix)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        if self.prefix:
            n = min(len(buffer), len(self.prefix))
            buffer[:n] = self.prefix[:n]
            self.prefix = self.prefix[n:]
            return n
        data = os.read(0, len(buffer))
        buffer[:len(data)] = data
        return len(data)


def _interpret_if(small: bool) -> bool:
    choice = _choice()
    if choice == "always" or (choice == "auto" and not small):
        return False
    from snowpy._jit import interpret

    return interpret()


def for_prediction(model: str | Path, input_bytes: int | None) -> bool:
    """Interpret this process if scoring ``input_bytes`` of text (None: unknown) with
    ``model`` costs less as Python than the compiled start-up. Returns whether it does."""
    model_bytes = _file_size(model)
    if model_bytes is None or input_bytes is None:
        return _interpret_if(False)
    seconds = model_bytes / MODEL_BYTES_PER_S + input_bytes / SCORE_BYTES_PER_S
    return _interpret_if(seconds < WARM_START_S)


def for_training(corpus: str, epochs: int, networks: int) -> bool:
    """Interpret this process if it has nothing compiled yet and learning ``corpus``
    (a file) ``epochs`` times in ``networks`` networks as Python costs less than
    compiling. Returns whether it does."""
    size = _file_size(corpus) if corpus != "-" else None
    if size is None or compiled_before():
        return _interpret_if(False)
    return _interpret_if(size * epochs * networks / LEARN_BYTES_PER_S < COLD_TRAINING_S)


def numba_cache_places() -> list[Path]:
    """Where numba caches snowpy's kernels: under ``NUMBA_CACHE_DIR`` alone when it is
    set, else beside the sources or in the user's cache folder."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return [Path(os.environ["NUMBA_CACHE_DIR"])]
    package = Path(__file__).resolve().parent.parent
    return [package / "network" / "__pycache__",
            Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "numba"]


def compiled_before() -> bool:
    """Whether numba's cache holds snowpy's training loop already (else the first
    compiled training compiles it: some 20 seconds, once)."""
    return any(place.is_dir() and next(place.rglob("engine.epoch_loop-*.nbi"), None)
               is not None for place in numba_cache_places())
