"""Compiled operations on the link pool: find, insert, allocate and free a block.

A network's links live in one *pool* of parallel arrays (:mod:`snowpy.network.links`):
``target[j]`` (``int32``), ``W[j, p]`` (the weight planes), ``U[j, p]`` (the
averaging sums, when averaging) and ``lcount[j]`` (the link's count, when
kept). Each feature row ``r`` owns one *block* of the pool, ``start[r]`` to
``start[r] + size[r]``, with room for ``cap[r]`` links, its links sorted by
target. A full block moves to a block of twice the room; the old one goes on
a free list of its size class, from which later blocks are taken first.

``meta`` holds the pool's bookkeeping: ``meta[USED]`` the end of the part of
the pool ever handed out, ``meta[FREE + c]`` the first free block of room
``2**c`` (``-1``: none; a free block's ``target`` holds the next one), and
``meta[IDLE]`` the slots sitting in free blocks or lost to rounding.

These functions are called from the training engine; the pool is grown by
the caller (Python) between calls, so none of them allocates memory.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["USED", "FREE", "IDLE", "META_SIZE", "new_meta", "find_link", "insert_link",
           "room_class", "LINEAR_SCAN"]

USED = 0
IDLE = 1
FREE = 2
N_CLASSES = 32
META_SIZE = FREE + N_CLASSES
#: Blocks up to this size are scanned; larger ones are searched by bisection.
LINEAR_SCAN = 8


def new_meta() -> np.ndarray:
    """Bookkeeping of an empty pool."""
    meta = np.zeros(META_SIZE, dtype=np.int64)
    meta[FREE:] = -1
    return meta


@numba.njit(nogil=True, cache=True, inline="always")
def room_class(room):  # pragma: no cover - compiled
    """Size class ``c`` of a block of ``room`` slots: the largest ``2**c <= room``."""
    c = 0
    while (2 << c) <= room:
        c += 1
    return c


@numba.njit(nogil=True, cache=True)
def find_link(target, first, size, t):  # pragma: no cover - compiled
    """Position of target ``t`` in the block ``first .. first + size``.

    Returns the position ``j >= 0`` when the link exists, else ``-1 - p``
    where ``p`` is where it would be inserted to keep the block sorted.
    """
    if size <= LINEAR_SCAN:
        stop = first + size
        for j in range(first, stop):
            current = target[j]
            if current == t:
                return j
            if current > t:
                return -1 - j
        return -1 - stop
    lo = first
    hi = first + size
    while lo < hi:
        mid = (lo + hi) >> 1
        if target[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    if lo < first + size and target[lo] == t:
        return lo
    return -1 - lo


@numba.njit(nogil=True, cache=True)
def _allocate(room, meta, target):  # pragma: no cover - compiled
    """First slot of a free block of exactly ``room`` slots (a power of two)."""
    c = room_class(room)
    head = meta[FREE + c]
    if head >= 0:
        meta[FREE + c] = target[head]
        meta[IDLE] -= room
        return head
    first = meta[USED]
    meta[USED] = first + room
    return first


@numba.njit(nogil=True, cache=True)
def _release(first, room, meta, target):  # pragma: no cover - compiled
    """Put the block ``first .. first + room`` on the free list of its size class."""
    if room <= 0:
        return
    c = room_class(room)
    target[first] = meta[FREE + c]
    meta[FREE + c] = first
    meta[IDLE] += room


@numba.njit(nogil=True, cache=True)
def insert_link(r, t, where, start, size, cap, target, W, U, lcount, meta,
                init_w, init_u):  # pragma: no cover - compiled
    """Insert target ``t`` into row ``r``'s block at position ``where`` (from
    :func:`find_link`); returns the new link's position.

    The new link gets the weights ``init_w`` and averaging sums ``init_u``
    (one per plane) and a count of 0. When the block is full it moves to a
    block of twice the room (the caller guarantees the pool has room).
    """
    first = start[r]
    n = size[r]
    offset = where - first
    planes = W.shape[1]
    averaging = U.shape[0] > 0
    counting = lcount.shape[0] > 0
    if n == cap[r]:
        room = 1
        while room < n + 1:
            room <<= 1
        moved = _allocate(room, meta, target)
        for q in range(n):
            dest = moved + q + (1 if q >= offset else 0)
            src = first + q
            target[dest] = target[src]
            for p in range(planes):
                W[dest, p] = W[src, p]
            if averaging:
                for p in range(planes):
                    U[dest, p] = U[src, p]
            if counting:
                lcount[dest] = lcount[src]
        _release(first, cap[r], meta, target)
        start[r] = moved
        cap[r] = room
        j = moved + offset
    else:
        for q in range(first + n, where, -1):
            target[q] = target[q - 1]
            for p in range(planes):
                W[q, p] = W[q - 1, p]
            if averaging:
                for p in range(planes):
                    U[q, p] = U[q - 1, p]
            if counting:
                lcount[q] = lcount[q - 1]
        j = where
    target[j] = t
    for p in range(planes):
        W[j, p] = init_w[p]
    if averaging:
        for p in range(planes):
            U[j, p] = init_u[p]
    if counting:
        lcount[j] = 0
    size[r] = n + 1
    return j
