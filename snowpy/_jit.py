"""Compiled or interpreted: one switch for every kernel of the process.

snowpy's hot loops (training epochs, tokenising, hashing, the link tables) are
written once, as Python that numba compiles. A process runs them in one of two
modes, fixed when the first kernel module is imported:

* **compiled** (the default): each kernel is ``numba.njit(nogil=True,
  cache=True)``; the machine code is cached on disk, so only a machine's first
  run pays the compilation (some 15-20 s for the training loop);
* **interpreted**: the same functions run as Python and numba is not imported
  at all. ``NUMBA_DISABLE_JIT=1`` selects it (numba's own switch, for
  debugging); so does :func:`interpret`, called before the kernel modules are
  imported. The command line calls it for jobs too small to repay loading or
  compiling the kernels (one line to predict, a first training run on a few
  hundred documents); see :mod:`snowpy.cli.tiering`.

Both modes compute the same numbers (``tests/test_numerics.py`` and
``tests/test_text.py`` compare them bit for bit).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["interpret", "interpreted", "is_kernel", "jit"]

F = TypeVar("F", bound=Callable[..., Any])

#: "compiled" or "interpreted" once a kernel module has asked; None before.
_mode: str | None = None


def _disabled_by_environment() -> bool:
    value = os.environ.get("NUMBA_DISABLE_JIT", "0").strip() or "0"
    try:
        return bool(int(value))  # as numba reads it
    except ValueError:
        return False


def interpreted() -> bool:
    """Whether this process runs its kernels as Python (fixed at the first call)."""
    global _mode
    if _mode is None:
        _mode = "interpreted" if _disabled_by_environment() else "compiled"
    return _mode == "interpreted"


def interpret() -> bool:
    """Run this process's kernels as Python, if it is not too late.

    Too late once a kernel module was imported in compiled mode, or numba was
    imported with its JIT on. When it takes effect, ``NUMBA_DISABLE_JIT=1`` is
    also set, so that numba, should a plugin import it, agrees (and child
    processes inherit the mode).

    Returns
    -------
    bool
        Whether the process now interprets.
    """
    global _mode
    if _mode == "interpreted":
        return True
    numba = sys.modules.get("numba")
    if _mode == "compiled" or (numba is not None and not numba.config.DISABLE_JIT):
        return False
    _mode = "interpreted"
    os.environ["NUMBA_DISABLE_JIT"] = "1"
    return True


def jit(function: F | None = None, *, inline: str = "never", nogil: bool = True) -> Any:
    """``numba.njit(nogil=True, cache=True)``, or the function itself when interpreting.

    Parameters
    ----------
    function : callable, optional
        The kernel (``@jit``), or nothing (``@jit(inline="always")``).
    inline : {"never", "always"}
        numba's inlining of the kernel into its compiled callers.
    nogil : bool
        Release the GIL while the compiled kernel runs.
    """

    def decorate(f: F) -> F:
        if interpreted():
            return f
        import numba

        compiled: F = numba.njit(nogil=nogil, cache=True, inline=inline)(f)
        return compiled

    return decorate(function) if function is not None else decorate


def is_kernel(function: Any) -> bool:
    """Whether ``function`` is a kernel in this mode: a numba dispatcher when
    compiling, any callable when interpreting.

    Examples
    --------
    >>> from snowpy.rules.winnow import winnow_update
    >>> is_kernel(winnow_update), is_kernel(winnow_update.__name__)
    (True, False)
    """
    if interpreted():
        return callable(function)
    import numba

    return isinstance(function, numba.core.dispatcher.Dispatcher)
