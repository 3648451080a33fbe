"""Compiled helpers shared by extractor kernels (and usable by plugins).

A kernel checks its output capacity once per document (``room``), hashes
each feature with :func:`hash_span` and, only when names are kept, copies
the hashed bytes with :func:`record`.
"""

from __future__ import annotations

import numpy as np

from snowpy._jit import jit
from snowpy.text.hashing import murmur_bytes

__all__ = ["char_starts", "hash_span", "max_token_bytes", "record", "room"]


@jit(inline="always")
def hash_span(buffer, start, end, seed, mask):  # pragma: no cover - compiled
    """The feature id of ``buffer[start:end]``."""
    return np.int32(murmur_bytes(buffer, start, end, seed) & mask)


@jit
def room(out_ids, spans, names, count, needed):  # pragma: no cover - compiled
    """True when ``needed`` more ids (and spans, with names) fit after ``count``."""
    if count + needed > out_ids.shape[0]:
        return False
    return not names or count + needed <= spans.shape[0]


@jit
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


@jit
def char_starts(buffer, start, end, out):  # pragma: no cover - compiled
    """Byte offsets of the code points of ``buffer[start:end]`` into ``out``, plus ``end``.

    Returns the number of code points.
    """
    n = 0
    for i in range(start, end):
        if (buffer[i] & 0xC0) != 0x80:
            out[n] = i
            n += 1
    out[n] = end
    return n


@jit
def max_token_bytes(starts, ends):  # pragma: no cover - compiled
    """The longest token, in bytes."""
    longest = 0
    for k in range(starts.shape[0]):
        longest = max(longest, ends[k] - starts[k])
    return longest
