"""The update kernel's compiled contract: one C-callback signature for every rule.

The training loop takes a rule's update step as a first-class function of the
fixed signature :data:`KERNEL_SIGNATURE`; :func:`compile_kernel` compiles a
rule's ``@numba.njit`` function to it, once, cached on disk. The contract
itself (what each argument is) is documented in :mod:`snowpy.records.rules`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from snowpy._jit import interpreted
from snowpy.exceptions import PluginError

__all__ = ["KERNEL_SIGNATURE", "CompiledKernel", "as_kernel", "compile_kernel", "kernel_handle",  # noqa: F822
           "kernel_signature", "signature_attribute"]

@functools.cache
def kernel_signature() -> Any:
    """The numba signature of every update kernel (built on first use: interpreting
    needs no numba): ``update(w, S, t, y, activation, vals, m, sqnorm, params) -> None``."""
    import numba

    types = numba.types
    return types.void(types.float64[:, ::1], types.float64[:, ::1], types.int64,
                      types.float64, types.float64, types.float64[::1], types.int64,
                      types.float64, types.float64[::1])


def signature_attribute(module: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` giving ``KERNEL_SIGNATURE``, built when first asked for
    (the modules that export it: ``__getattr__ = signature_attribute(__name__)``)."""

    def __getattr__(name: str) -> Any:
        if name == "KERNEL_SIGNATURE":
            return kernel_signature()
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


__getattr__ = signature_attribute(__name__)

_compiled: dict[Any, Any] = {}


class CompiledKernel:
    """A compiled kernel as the training loop takes it: its C callback, typed once.

    numba types a C callback argument anew on every call of the loop (13 us,
    more than learning one example costs); this wrapper implements numba's
    wrapper-address protocol and carries its type, so a call costs what it
    does.
    """

    def __init__(self, callback: Any) -> None:
        from numba.core.types.function_type import FunctionType

        self.callback = callback
        self.numba_type = FunctionType(callback._sig)

    def __wrapper_address__(self) -> int:
        return self.callback.address

    @property
    def address(self) -> int:
        """The callback's address, which :func:`as_kernel` turns back into the kernel."""
        return self.callback.address

    def signature(self) -> Any:
        return self.callback._sig

    def __call__(self, *args: Any) -> Any:  # from Python: the callback itself
        return self.callback(*args)


def _register_type() -> None:
    if interpreted():
        return
    from numba.core.typing.typeof import typeof_impl
    from numba.experimental.function_type import WrapperAddressProtocol

    WrapperAddressProtocol.register(CompiledKernel)

    @typeof_impl.register(CompiledKernel)
    def _typeof(value: CompiledKernel, context: Any) -> Any:
        return value.numba_type


_register_type()


def compile_kernel(update: Callable[..., Any], signature: Any = None,
                   what: str = "update kernel",
                   contract: str = "kernel contract (see snowpy.records.rules)") -> Any:
    """The kernel as a C callback of :data:`KERNEL_SIGNATURE` (memoised, cached on disk);
    another ``signature`` for the other compiled contracts (a dual rule's similarity),
    ``what`` and ``contract`` naming them in errors.

    Compiled with numpy's error model: a division by zero gives an infinity
    or NaN, which the engine clamps or refuses, naming the rule (a C callback
    cannot raise). With ``NUMBA_DISABLE_JIT=1`` the Python function itself is
    returned.

    Raises
    ------
    PluginError
        The function does not compile with the kernel's argument types.
    """
    function = getattr(update, "py_func", update)
    if interpreted():
        return function
    import numba

    if signature is None:
        signature = kernel_signature()
    compiled = _compiled.get((function, signature))
    if compiled is None:
        try:
            compiled = numba.cfunc(signature, cache=True, nogil=True,
                                   error_model="numpy")(function)
        except Exception as exc:  # any failure to compile is the plugin's: name it
            first = str(exc).strip().splitlines()[0]
            raise PluginError(
                f"the {what} {function.__name__!r} does not compile against the "
                f"{contract}: {first}"
            ) from exc
        compiled = _compiled[(function, signature)] = CompiledKernel(compiled)
    return compiled


def kernel_handle(kernel: Any) -> Any:
    """What the engine takes for a compiled kernel: its address, an integer.

    Passing an integer costs the engine's caller nothing, where a function
    argument is typed anew by numba on every call (5 us, a third of learning
    one example). The compiled kernel stays alive in this module's memo, so
    the address stays valid. A plain Python function (``NUMBA_DISABLE_JIT=1``)
    is its own handle.
    """
    return kernel.address if isinstance(kernel, CompiledKernel) else kernel


def _intrinsic_as_kernel() -> Any:
    import numba
    from llvmlite import ir
    from numba.core import cgutils
    from numba.core.types.function_type import FunctionType
    from numba.extending import intrinsic

    kernel_type = FunctionType(kernel_signature())

    @intrinsic
    def as_kernel(typingctx: Any, address: Any) -> Any:
        """The kernel at ``address`` (from :func:`kernel_handle`), callable in compiled code."""
        if not isinstance(address, numba.types.Integer):
            return None

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            kernel = cgutils.create_struct_proxy(kernel_type)(context, builder)
            # the C callback's address; no Python object, no jit entry: calls go
            # straight to the callback (numba's first-class function model)
            kernel.c_addr = builder.inttoptr(args[0], ir.IntType(8).as_pointer())
            return kernel._getvalue()

        return kernel_type(address), codegen

    return as_kernel


def _identity(handle: Any) -> Any:
    return handle


#: Compiled code's way back from :func:`kernel_handle` to a callable kernel.
as_kernel = _identity if interpreted() else _intrinsic_as_kernel()
