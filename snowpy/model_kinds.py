"""The kinds of model a file holds, each mapped to the class that describes and restores it.

A model class registers itself with :func:`model_kind`; it describes a trained
model as a header and named arrays (``to_state``) and builds one again from them
(the class method ``from_state``). :func:`snowpy.load` asks this registry which
class a file's ``kind`` names; nothing else tells the kinds apart.

>>> import snowpy.classifier
>>> {"network", "cloud", "classifier"} <= set(kinds())
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from snowpy.exceptions import ModelFileError

__all__ = ["kind_of", "kinds", "model_kind", "restore"]

_KINDS: dict[str, type] = {}
_T = TypeVar("_T", bound=type)


def model_kind(name: str) -> Callable[[_T], _T]:
    """Register a model class as the one that saves and loads the kind ``name``."""
    def register(cls: _T) -> _T:
        _KINDS[name] = cls
        return cls
    return register


def kinds() -> dict[str, type]:
    """Every registered kind and its class."""
    return dict(_KINDS)


def kind_of(model: Any) -> str:
    """The kind a model is saved as; a ``ConfigurationError`` for an object no kind
    describes."""
    from snowpy.exceptions import ConfigurationError

    for cls in type(model).__mro__:  # (a subclass is saved as the kind it extends)
        for kind, registered in _KINDS.items():
            if registered is cls:
                return kind
    names = ", ".join(cls.__name__ for cls in _KINDS.values())
    raise ConfigurationError(f"cannot save a {type(model).__name__}; save one of: {names}")


def restore(header: dict[str, Any], arrays: dict[str, np.ndarray], where: str) -> Any:
    """The model a header of a registered kind describes."""
    kind = header.get("kind")
    cls = _KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ModelFileError(f"{where}: unknown model kind {kind!r}")
    return cls.from_state(header, arrays, where)  # type: ignore[attr-defined]
