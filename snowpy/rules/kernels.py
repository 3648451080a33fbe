"""A rule's compiled step as the engine takes it: one C ABI for every implementation.

The training engine calls a rule's update through a pointer to a plain C function
(the ABI is written out in ``docs/plugins.md`` and in :mod:`snowpy.rules.spec`).
:func:`update_kernel` turns what a rule provides into that function, held by a
:class:`~snowpy._core.rules.UpdateKernel`:

* an :class:`UpdateKernel` already (the built-in rules: ``UpdateKernel.builtin(name)``);
* a ``PyCapsule`` named :data:`UPDATE_SIGNATURE`, holding a C function pointer (a
  plugin's own C or Cython module; scipy's ``LowLevelCallable`` takes user code the
  same way);
* a numba ``@cfunc`` of the ABI's signature (``snowpy.numba_kernels.UPDATE``), or a
  ``@numba.njit`` function of the array contract, compiled to such a cfunc on first
  use (:mod:`snowpy.numba_kernels`; numba is imported then, and only then);
* a plain Python function of the array contract: run through a trampoline, slow (the
  GIL and a few microseconds per update), for prototyping; ``snowpy plugins`` shows it.

:func:`similarity_kernel` does the same for a dual rule's similarity.
"""

from __future__ import annotations

from typing import Any

from snowpy._core.rules import (
    SIMILARITY_SIGNATURE,
    UPDATE_SIGNATURE,
    SimilarityKernel,
    UpdateKernel,
)
from snowpy.exceptions import PluginError

__all__ = ["SIMILARITY_SIGNATURE", "UPDATE_SIGNATURE", "SimilarityKernel", "UpdateKernel",
           "implementation_of", "similarity_kernel", "update_kernel"]


def _is_capsule(obj: Any) -> bool:
    return type(obj).__name__ == "PyCapsule"


def _is_numba_dispatcher(obj: Any) -> bool:
    return type(obj).__module__.startswith("numba") and hasattr(obj, "py_func")


def _is_numba_cfunc(obj: Any) -> bool:
    return type(obj).__module__.startswith("numba") and hasattr(obj, "address") \
        and hasattr(obj, "native_name")


def implementation_of(function: Any) -> str:
    """What a rule's step is written in: ``"builtin"``, ``"c"`` (a capsule), ``"numba"``
    or ``"python"`` (slow: a trampoline per update)."""
    if isinstance(function, (UpdateKernel, SimilarityKernel)):
        return str(function.implementation)
    if _is_capsule(function):
        return "c"
    if _is_numba_dispatcher(function) or _is_numba_cfunc(function):
        return "numba"
    return "python"


def update_kernel(update: Any, name: str = "") -> UpdateKernel:
    """The :class:`UpdateKernel` of what a rule gives as its update (see the module).

    Raises
    ------
    PluginError
        It is none of those, or does not compile against the ABI.
    """
    if isinstance(update, UpdateKernel):
        return update
    try:
        if _is_capsule(update):
            return UpdateKernel.from_capsule(update, name)
        if _is_numba_cfunc(update):
            from snowpy.numba_kernels import checked_cfunc

            checked_cfunc(update, "update")
            return UpdateKernel.from_address(update.address, name, "numba", update)
        if _is_numba_dispatcher(update):
            from snowpy.numba_kernels import update_cfunc

            cfunc = update_cfunc(update)
            return UpdateKernel.from_address(cfunc.address, name, "numba", cfunc)
        if callable(update):
            return UpdateKernel.from_python(update, name)
    except PluginError:
        raise
    except Exception as exc:  # a plugin's mistake: name it in one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PluginError(f"the update kernel {name or update!r} does not fit the update "
                          f"ABI (see snowpy.rules.spec): {first}") from exc
    raise PluginError(f"the update kernel of rule {name!r} must be a compiled kernel, a "
                      f"capsule, a numba function or a Python function, got "
                      f"{type(update).__name__}")


def similarity_kernel(similarity: Any, name: str = "") -> SimilarityKernel:
    """The :class:`SimilarityKernel` of a dual rule's similarity (as
    :func:`update_kernel`)."""
    if isinstance(similarity, SimilarityKernel):
        return similarity
    try:
        if _is_capsule(similarity):
            return SimilarityKernel.from_capsule(similarity, name)
        if _is_numba_cfunc(similarity):
            from snowpy.numba_kernels import checked_cfunc

            checked_cfunc(similarity, "similarity")
            return SimilarityKernel.from_address(similarity.address, name, "numba", similarity)
        if _is_numba_dispatcher(similarity):
            from snowpy.numba_kernels import similarity_cfunc

            cfunc = similarity_cfunc(similarity)
            return SimilarityKernel.from_address(cfunc.address, name, "numba", cfunc)
        if callable(similarity):
            return SimilarityKernel.from_python(similarity, name)
    except PluginError:
        raise
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PluginError(f"the similarity {name or similarity!r} does not fit the "
                          f"similarity ABI (see snowpy.rules.dual): {first}") from exc
    raise PluginError(f"the similarity of rule {name!r} must be a compiled kernel, a "
                      f"capsule, a numba function or a Python function, got "
                      f"{type(similarity).__name__}")
