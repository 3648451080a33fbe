"""Many arrays as one argument of a compiled function.

numba unboxes each array argument of a call from Python on its own, about
75 ns apiece: a function of thirty arrays costs two microseconds to call
before it does anything, more than a one-example step's work. A *bundle*
(a numba ``StructRef``) carries any number of arrays in one argument: from
Python it is built once and passed by reference; compiled code reads its
fields as plain attributes. With ``NUMBA_DISABLE_JIT=1`` it is a plain
object with the same attributes, so the same code runs as Python.

Examples
--------
>>> import numpy as np
>>> Pair = bundle("Pair", ("left", "right"), __name__)
>>> pair = Pair(np.zeros(2), np.ones(3))
>>> pair.right.tolist()
[1.0, 1.0, 1.0]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from snowpy._jit import interpreted

__all__ = ["bundle"]


def bundle(name: str, fields: Sequence[str], module: str) -> type:
    """A class of bundles holding ``fields``, positional in that order.

    ``module`` is the caller's ``__name__``: the numba type (``name + "Type"``)
    is placed in that module, where numba's disk cache finds it again by its
    import path (a type it cannot import makes every process compile anew).
    Fields are read-only from Python; to change one, build a new bundle.
    """
    names = tuple(fields)
    if interpreted():
        def __init__(self: Any, *values: Any) -> None:
            if len(values) != len(names):
                raise TypeError(f"{name} takes {len(names)} fields, got {len(values)}")
            for field, value in zip(names, values):
                setattr(self, field, value)

        return type(name, (), {"__init__": __init__, "__module__": module,
                               "__qualname__": name, "__slots__": names})

    import numba
    from numba.core import types as numba_types
    from numba.experimental import structref

    types: Any = numba_types  # (numba's modules are not typed)

    def preprocess_fields(self: Any, fields: Any) -> Any:
        return tuple((field, types.unliteral(kind)) for field, kind in fields)

    kind = type(f"{name}Type", (types.StructRef,), {
        "preprocess_fields": preprocess_fields, "__module__": module,
        "__qualname__": f"{name}Type"})
    structref.register(kind)
    setattr(sys.modules[module], f"{name}Type", kind)
    namespace: dict[str, Any] = {"__module__": module, "__qualname__": name}
    for field in names:  # read from Python through a compiled getter (compiled on first use)
        getter: dict[str, Any] = {}
        exec(f"def get(self):\n    return self.{field}\n", getter)  # noqa: S102 - a field name
        namespace[field] = property(_python_getter(numba.njit(getter["get"])))
    proxy = type(name, (structref.StructRefProxy,), namespace)
    structref.define_proxy(proxy, kind, list(names))
    return proxy


def _python_getter(compiled: Any) -> Any:
    def get(self: Any) -> Any:
        return compiled(self)

    return get
