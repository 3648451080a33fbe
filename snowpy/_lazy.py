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


class lazy_module:
    """Module ``name``, imported when one of its attributes is first read: it stands for
    the module until then, and forwards to it after."""

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
