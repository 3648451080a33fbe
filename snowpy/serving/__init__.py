"""Serving a model that keeps learning (``pip install '.[serve]' in snowpy's source folder``):
:class:`Service` (the model, its journal and snapshots) and :func:`make_app` (its HTTP
routes, on Starlette under uvicorn). ``snowpy serve MODEL --port 8080`` runs both."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from snowpy.serving.app import make_app
    from snowpy.serving.service import Service

__all__ = ["Service", "make_app"]


_LAZY = {"Service": "snowpy.serving.service", "make_app": "snowpy.serving.app"}


def __getattr__(name: str) -> Any:  # (starlette is imported only when the app is made)
    if name not in _LAZY:
        raise AttributeError(f"module 'snowpy.serving' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)
