"""Rules, similarities and extractors written with numba, for plugin authors.

``pip install '.[numba]' in snowpy's source folder``. snowpy itself never imports numba: its engine and
front end are compiled ahead of time. A plugin author who wants Python syntax at
native speed writes the rule's step with numba, in either form:

* a ``@numba.cfunc(snowpy.numba_kernels.UPDATE)`` function of the C ABI itself
  (pointers and lengths, see ``docs/plugins.md``), the way scipy's
  ``LowLevelCallable`` takes user code; numba caches it on disk (``cache=True``);
* a ``@numba.njit`` function of the array contract (``update(w, S, t, y, activation,
  vals, m, sqnorm, params)``), which :func:`array_cfunc` wraps in such a cfunc the
  first time a network uses it (some tenths of a second, each process).

Import this module, and numba, only where the rule is built (in the rule's ``build``
function, not at the plugin module's top): a process that never trains or loads that
rule then never imports numba.

The helpers at the end (:func:`murmur_bytes`, :func:`hash_span`...) are for a numba
feature extractor: the same hash as snowpy's compiled front end.
"""

from __future__ import annotations

import functools

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba import carray, types

from snowpy._core.rules import SimilarityKernel, UpdateKernel
from snowpy.exceptions import PluginError

__all__ = ["SIMILARITY", "UPDATE", "array_cfunc", "char_starts", "checked_cfunc",
           "hash_span", "murmur_bytes", "record", "room"]

_double_p = types.CPointer(types.float64)
_id_p = types.CPointer(types.int64)

#: The update ABI as a numba signature: ``int32(w, m, n_planes, state, n_targets,
#: state_size, target, y, activation, vals, sqnorm, params, n_params, user_data)``.
UPDATE = types.int32(_double_p, types.int64, types.int64, _double_p, types.int64, types.int64,
                     types.int64, types.float64, types.float64, _double_p, types.float64,
                     _double_p, types.int64, types.voidptr)

#: The similarity ABI: ``float64(a_ids, a_vals, a_n, b_ids, b_vals, b_n, params,
#: n_params, user_data)``.
SIMILARITY = types.float64(_id_p, _double_p, types.int64, _id_p, _double_p, types.int64,
                           _double_p, types.int64, types.voidptr)

_SIGNATURES = {"update": UPDATE, "similarity": SIMILARITY}


def checked_cfunc(cfunc: Any, abi: str) -> None:
    """Refuse a cfunc whose signature is not the ABI's (``"update"``, ``"similarity"``): a
    mismatched signature would read the wrong registers."""
    expected = _SIGNATURES[abi]
    signature = getattr(cfunc, "_sig", None)
    if signature != expected:
        raise PluginError(f"a numba cfunc {abi} must have the signature "
                          f"snowpy.numba_kernels.{abi.upper()} ({expected}), got {signature}")


@functools.cache
def array_cfunc(function: Callable[..., Any], abi: str) -> Any:
    """A ``@numba.njit`` function of an ABI's array form as a cfunc of the ABI: an update
    ``(w, S, t, y, activation, vals, m, sqnorm, params)``, a similarity ``(a_ids, a_vals,
    b_ids, b_vals, params)``."""
    inner = function

    def update(w, m, n_planes, state, n_targets, state_size, t, y, activation, vals,
               sqnorm, params, n_params, user_data):  # pragma: no cover - compiled
        inner(carray(w, (m, n_planes)), carray(state, (n_targets, state_size)), t, y,
              activation, carray(vals, (m,)), m, sqnorm, carray(params, (n_params,)))
        return 0

    def similarity(a_ids, a_vals, a_n, b_ids, b_vals, b_n, params, n_params,
                   user_data):  # pragma: no cover - compiled
        return inner(carray(a_ids, (a_n,)), carray(a_vals, (a_n,)), carray(b_ids, (b_n,)),
                     carray(b_vals, (b_n,)), carray(params, (n_params,)))

    try:
        return numba.cfunc(_SIGNATURES[abi], error_model="numpy")(
            update if abi == "update" else similarity)
    except Exception as exc:  # the plugin's: name it
        first = str(exc).strip().splitlines()[0]
        kernel = UpdateKernel if abi == "update" else SimilarityKernel
        raise PluginError(f"the {kernel.noun} {getattr(function, '__name__', function)!r} "
                          f"does not compile against the kernel contract (see "
                          f"{kernel.contract}): {first}") from exc


# ------------------------------------------------- helpers for numba extractors
@numba.njit(inline="always")
def _rotl(x, r):  # pragma: no cover - compiled
    return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF


@numba.njit(cache=True)
def murmur_bytes(data, start, end, seed):  # pragma: no cover - compiled
    """MurmurHash3 x86_32 of ``data[start:end]`` (uint8 array), as snowpy hashes."""
    h = int(seed) & 0xFFFFFFFF
    length = int(end) - int(start)
    stop = start + (length // 4) * 4
    i = start
    while i < stop:
        k = (int(data[i]) | (int(data[i + 1]) << 8) | (int(data[i + 2]) << 16)
             | (int(data[i + 3]) << 24))
        k = (k * 0xCC9E2D51) & 0xFFFFFFFF
        k = _rotl(k, 15)
        k = (k * 0x1B873593) & 0xFFFFFFFF
        h ^= k
        h = _rotl(h, 13)
        h = (h * 5 + 0xE6546B64) & 0xFFFFFFFF
        i += 4
    tail = length & 3
    k = 0
    if tail == 3:
        k ^= int(data[stop + 2]) << 16
    if tail >= 2:
        k ^= int(data[stop + 1]) << 8
    if tail >= 1:
        k ^= int(data[stop])
    k = (k * 0xCC9E2D51) & 0xFFFFFFFF
    k = _rotl(k, 15)
    k = (k * 0x1B873593) & 0xFFFFFFFF
    h ^= k
    h ^= length
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h


@numba.njit(cache=True)
def hash_span(buffer, start, end, seed, mask):  # pragma: no cover - compiled
    """The feature id of ``buffer[start:end]``."""
    return np.int32(murmur_bytes(buffer, start, end, seed) & mask)


@numba.njit(cache=True)
def room(out_ids, spans, names, count, needed):  # pragma: no cover - compiled
    """True when ``needed`` more ids (and spans, with names) fit after ``count``."""
    if count + needed > out_ids.shape[0]:
        return False
    return not names or count + needed <= spans.shape[0]


@numba.njit(cache=True)
def record(buffer, start, end, arena, spans, count, used):  # pragma: no cover - compiled
    """Copy the bytes of feature ``count`` to the arena; the new fill, or -2 when full."""
    length = end - start
    if used + length > arena.shape[0]:
        return -2
    for q in range(length):
        arena[used + q] = buffer[start + q]
    spans[count, 0] = used
    spans[count, 1] = used + length
    return used + length


@numba.njit(cache=True)
def char_starts(buffer, start, end, out):  # pragma: no cover - compiled
    """Byte offsets of the code points of ``buffer[start:end]`` into ``out``, plus
    ``end``; returns the number of code points."""
    n = 0
    for i in range(start, end):
        if (buffer[i] & 0xC0) != 0x80:
            out[n] = i
            n += 1
    out[n] = end
    return n


