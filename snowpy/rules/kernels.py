"""A rule's compiled step, or a similarity, as the engine takes it: one C ABI for every
implementation.

The training engine calls a rule's update through a pointer to a plain C function
(the ABI is written out in ``docs/plugins.md`` and in :mod:`snowpy.rules.spec`), and a
rule's learner may call a similarity the same way (the kernel Perceptron's
support vectors, ``plugins/snowpy-kernel-perceptron``). :func:`kernel_of`
turns what a rule provides into that function, held by a
:class:`~snowpy._core.rules.Kernel` of the ABI's class (:class:`UpdateKernel`,
:class:`SimilarityKernel`):

* such a kernel already (the built-in rules: ``UpdateKernel.builtin(name)``);
* a ``PyCapsule`` named by the ABI's signature (:data:`UPDATE_SIGNATURE`,
  :data:`SIMILARITY_SIGNATURE`), holding a C function pointer (a plugin's own C or
  Cython module; scipy's ``LowLevelCallable`` takes user code the same way);
* a numba ``@cfunc`` of the ABI's signature (``snowpy.numba_kernels.UPDATE``,
  ``SIMILARITY``), or a ``@numba.njit`` function of the array form, compiled to such a
  cfunc on first use (:mod:`snowpy.numba_kernels`; numba is imported then, and only
  then);
* a plain Python function of the array form: run through a trampoline, slow (the GIL
  and a few microseconds per call), for prototyping; ``snowpy plugins`` shows it.
"""

from __future__ import annotations

from typing import Any, TypeVar

from snowpy._core.rules import (
    SIMILARITY_SIGNATURE,
    UPDATE_SIGNATURE,
    Kernel,
    SimilarityKernel,
    UpdateKernel,
)
from snowpy.exceptions import PluginError

__all__ = ["SIMILARITY_SIGNATURE", "UPDATE_SIGNATURE", "Kernel", "SimilarityKernel",
           "UpdateKernel", "implementation_of", "kernel_of"]

_K = TypeVar("_K", bound=Kernel)


def _is_capsule(obj: Any) -> bool:
    return type(obj).__name__ == "PyCapsule"


def _is_numba_dispatcher(obj: Any) -> bool:
    return type(obj).__module__.startswith("numba") and hasattr(obj, "py_func")


def _is_numba_cfunc(obj: Any) -> bool:
    return type(obj).__module__.startswith("numba") and hasattr(obj, "address") \
        and hasattr(obj, "native_name")


def implementation_of(function: Any) -> str:
    """What a rule's step (or similarity) is written in: ``"builtin"``, ``"c"`` (a
    capsule), ``"numba"`` or ``"python"`` (slow: a trampoline per call)."""
    if isinstance(function, Kernel):
        return str(function.implementation)
    if _is_capsule(function):
        return "c"
    if _is_numba_dispatcher(function) or _is_numba_cfunc(function):
        return "numba"
    return "python"


def kernel_of(given: Any, abi: type[_K], name: str = "") -> _K:
    """The kernel of the ``abi`` (:class:`UpdateKernel`, :class:`SimilarityKernel`) that
    what a rule gives as its step or similarity makes (see the module).

    Raises
    ------
    PluginError
        It is none of those, or does not compile against the ABI.
    """
    if isinstance(given, abi):
        return given
    try:
        if _is_capsule(given):
            return abi.from_capsule(given, name)
        if _is_numba_cfunc(given):
            from snowpy.numba_kernels import checked_cfunc

            checked_cfunc(given, abi.abi)
            return abi.from_address(given.address, name, "numba", given)
        if _is_numba_dispatcher(given):
            from snowpy.numba_kernels import array_cfunc

            cfunc = array_cfunc(given, abi.abi)
            return abi.from_address(cfunc.address, name, "numba", cfunc)
        if callable(given):
            return abi.from_python(given, name)
    except PluginError:
        raise
    except Exception as exc:  # a plugin's mistake: name it in one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PluginError(f"the {abi.noun} {name or given!r} does not fit the {abi.abi} ABI "
                          f"(see {abi.contract}): {first}") from exc
    raise PluginError(f"the {abi.noun} of rule {name!r} must be a compiled kernel, a capsule, "
                      f"a numba function or a Python function, got {type(given).__name__}")
