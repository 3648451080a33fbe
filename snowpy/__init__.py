"""snowpy: sparse, online, mistake-driven text classification in the style of SNoW.

Importing snowpy is cheap: it loads no plugin, and its compiled core was compiled
when snowpy was installed. The estimators are imported on first use.

>>> import snowpy
>>> snowpy.Network.__name__
'Network'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from snowpy._version import __version__
from snowpy.hookspecs import hookimpl

if TYPE_CHECKING:  # pragma: no cover
    from snowpy.classifier import SnowClassifier
    from snowpy.model_file import ModelFileError
    from snowpy.network import Cloud, Network, NumericalWarning
    from snowpy.persistence import load, save
    from snowpy.progress import Progress
    from snowpy.text import Featurizer

__all__ = [
    "Cloud",
    "Featurizer",
    "ModelFileError",
    "Network",
    "NumericalWarning",
    "Progress",
    "SnowClassifier",
    "__version__",
    "hookimpl",
    "load",
    "save",
]

_LAZY = {
    "Cloud": "snowpy.network",
    "Network": "snowpy.network",
    "NumericalWarning": "snowpy.network",
    "SnowClassifier": "snowpy.classifier",
    "Featurizer": "snowpy.text",
    "save": "snowpy.persistence",
    "load": "snowpy.persistence",
    "ModelFileError": "snowpy.model_file",
    "Progress": "snowpy.progress",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'snowpy' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
