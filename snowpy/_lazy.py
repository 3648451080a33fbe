"""Modules imported on first use, for the imports only some paths need.

scipy.sparse costs 0.1 s to import (its array-API layer loads numpy.testing and
numpy.f2py); the one-example path and a one-line ``snowpy predict`` never touch
it. Modules that build sparse matrices name it through :func:`lazy_module`, so
the import happens at the first attribute used.

Examples
--------
>>> sp = lazy_module("scipy.sparse")
>>> sp.csr_matrix((1, 3)).shape
(1, 3)
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["lazy_module"]


class _LazyModule:
    """Stands for module ``name`` until an attribute is read, then forwards to it."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"


def lazy_module(name: str) -> Any:
    """Module ``name``, imported when one of its attributes is first read."""
    return _LazyModule(name)
