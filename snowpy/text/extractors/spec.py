"""The records a feature-extractor plugin returns, and the kernel contract.

The front end tokenises a chunk of documents once (:mod:`snowpy.text.tokenize`)
and then calls each configured extractor's kernel on the chunk's token
stream. The kernel writes hashed feature ids, document by document.

The kernel contract
-------------------
``extract(text, starts, ends, doc_ptr, params, seed, mask, out_ids, out_ptr,
names, arena, spans) -> int``

``text``, ``starts``, ``ends``, ``doc_ptr``
    The token stream (:class:`snowpy.text.tokenize.TokenStream`): token ``k``
    is ``text[starts[k]:ends[k]]`` (normalised UTF-8); document ``d`` has the
    tokens ``doc_ptr[d]:doc_ptr[d + 1]``, written with single spaces between
    them, so ``text[starts[a]:ends[b]]`` is the word n-gram from ``a`` to
    ``b``.
``params``
    ``float64[:]``, the extractor's numbers as its ``build`` packed them.
``seed``, ``mask``
    Hash every feature with ``murmur_bytes(bytes, start, end, seed) & mask``
    (:func:`snowpy.text.hashing.murmur_bytes`); the seed separates
    extractors and namespaces.
``out_ids``, ``out_ptr``
    Write the ids of document ``d`` to ``out_ids[out_ptr[d]:out_ptr[d + 1]]``,
    documents in order, in any order and with repeats within a document; set
    every ``out_ptr[d]`` and the last one.
``names``, ``arena``, ``spans``
    When ``names`` is true, also copy the exact bytes hashed for feature
    ``j`` into ``arena`` and record their span as ``spans[j, 0:2]`` (used for
    the inverse feature map). Otherwise ignore them.

Return the number of ids written, ``-1`` when ``out_ids`` (or ``spans``) is
too small, ``-2`` when ``arena`` is; the front end then enlarges the buffer
and calls again.

The front end calls an extractor once per chunk of documents (about a megabyte of
text), from Python: the built-in extractors are compiled into snowpy
(:mod:`snowpy._core.extract`); a plugin's may be a Cython function, a ``@numba.njit``
function (the helpers of :mod:`snowpy.numba_kernels` hash as snowpy does), or plain
Python (slow: a loop per token in Python).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from snowpy.exceptions import ConfigurationError, PluginError
from snowpy.params import Param, check_record, validate_declared

__all__ = ["ExtractorKernel", "ExtractorSpec", "lengths"]


def lengths(name: str, params: Mapping[str, Any], low: str, high: str) -> int:
    """How many lengths ``params[low]`` to ``params[high]`` are (an extractor's n-grams,
    affixes); ``low`` above ``high`` is refused, naming the extractor ``name``."""
    if params[low] > params[high]:
        raise ConfigurationError(
            f"{name}: {low} ({params[low]}) must not exceed {high} ({params[high]})"
        )
    return params[high] - params[low] + 1


@dataclass(frozen=True)
class ExtractorKernel:
    """An extractor made ready for the front end.

    Parameters
    ----------
    extract : callable
        The function of the kernel contract (compiled: Cython or numba; or Python).
    params : sequence of float
        The numbers the kernel reads.
    kind : str
        Tag hashed into the seed, so that this extractor's features do not
        collide by construction with another's (``"words"``, ``"chars"``).
    per_token, per_byte : float
        Upper bound of features per token and per byte of text, used to size
        ``out_ids`` (the kernel may still return -1 to ask for more).
    label : callable, optional
        ``label(raw) -> str``: how a feature's hashed text is shown in the
        inverse map (default: as is).
    """

    extract: Callable[..., int]
    params: Any
    kind: str
    per_token: float = 1.0
    per_byte: float = 0.0
    label: Callable[[str], str] | None = None

    def __post_init__(self) -> None:
        if not callable(self.extract):
            raise PluginError(f"extractor kernel {self.extract!r} must be a function")
        packed = np.ascontiguousarray(np.asarray(self.params, dtype=np.float64).reshape(-1))
        object.__setattr__(self, "params", packed)
        if self.per_token < 0 or self.per_byte < 0:
            raise PluginError("per_token and per_byte must be non-negative")

    def show(self, raw: str) -> str:
        """The inverse map's name of a feature whose hashed text is ``raw``."""
        return self.label(raw) if self.label is not None else raw

    def capacity(self, n_tokens: int, n_bytes: int) -> int:
        """Number of ids to allocate for a chunk."""
        return int(self.per_token * n_tokens + self.per_byte * n_bytes) + 16


@dataclass(frozen=True)
class ExtractorSpec:
    """A feature extractor as a plugin declares it.

    Parameters
    ----------
    name : str
        Lower-case name (``"words"``, ``"chars"``).
    build : callable
        ``build(params) -> ExtractorKernel`` on validated parameter values.
    params : tuple of Param
        Declared parameters (typically integers with bounds).
    summary : str
        One line for listings.
    """

    name: str
    build: Callable[[dict[str, Any]], ExtractorKernel]
    params: tuple[Param, ...]
    summary: str

    def __post_init__(self) -> None:
        check_record("extractor", self.name, self.build, self.params)

    def validate(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Check values and fill in defaults (``ConfigurationError`` names the problem)."""
        return validate_declared(self.params, values, kind="extractor", name=self.name)

    def make_kernel(self, values: Mapping[str, Any]) -> ExtractorKernel:
        """Validate ``values`` and build the kernel."""
        params = self.validate(values)
        try:
            kernel = self.build(params)
        except (ConfigurationError, PluginError):
            raise
        except Exception as exc:
            raise PluginError(f"extractor {self.name!r}: build failed: {exc!r}") from exc
        if not isinstance(kernel, ExtractorKernel):
            raise PluginError(f"extractor {self.name!r}: build must return an ExtractorKernel")
        return kernel
