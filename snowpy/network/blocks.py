"""Compiled operations on the link pool: find, append, allocate and free a block.

A network's links live in one *pool* of parallel arrays (:mod:`snowpy.network.links`):
``target[j]`` (``int32``), ``W[j, p]`` (the weight planes), ``U[j, p]`` (the
averaging sums, when averaging) and ``lcount[j]`` (the link's count, when
kept). Each feature row ``r`` owns one *block* of the pool, ``start[r]`` to
``start[r] + size[r]``, with room for ``cap[r]`` links. Links are appended to
their block, never moved within it while an example is being learned, so a
link's *offset* in its block is stable; a full block moves, whole, to a block
of twice the room, and the old one goes on a free list of its size class,
from which later blocks are taken first.

*Dense rows.* ``ordered[r]`` is set while the block holds targets ``0, 1,
2...`` in that order. A row linked to every target and ordered is a dense
row: target ``t``'s link is at offset ``t``, and scoring reads the block as a
plain vector (no target lookup, vectorised). A block that becomes complete
out of order is sorted (:func:`order_block`) once the example is learned.

``meta`` holds the pool's bookkeeping: ``meta[USED]`` the end of the part of
the pool ever handed out, ``meta[FREE + c]`` the first free block of room
``2**c`` (``-1``: none; a free block's ``target`` holds the next one), and
``meta[IDLE]`` the slots sitting in free blocks.

These functions are called from the training engine; the pool is grown by
the caller (Python) between calls, so none of them allocates memory, and
they are compiled as :func:`leaf` functions.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["USED", "FREE", "IDLE", "META_SIZE", "new_meta", "find_link", "append_link",
           "order_block", "room_class"]

USED = 0
IDLE = 1
FREE = 2
N_CLASSES = 32
META_SIZE = FREE + N_CLASSES


def leaf(function):
    """Compile a hot helper that takes arrays and allocates nothing.

    Numba counts references to every array argument of a call, atomically, on
    entry and exit: 13 arrays made :func:`append_link` cost 130 ns a call,
    40 times its work. A function that allocates nothing needs no reference
    counting (numba's ``_nrt=False``); if a numba version no longer takes
    that option, the plain compiled function is used.
    """
    try:
        return numba.njit(nogil=True, cache=True, _nrt=False)(function)
    except TypeError:  # pragma: no cover - depends on numba's version
        return numba.njit(nogil=True, cache=True)(function)


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


@leaf
def find_link(target, first, size, t):  # pragma: no cover - compiled
    """Position of target ``t``'s link in the block ``first .. first + size``, or -1."""
    for j in range(first, first + size):
        if target[j] == t:
            return j
    return -1


@leaf
def append_link(r, t, start, size, cap, ordered, target, W, U, lcount, meta, init_w,
                init_u):  # pragma: no cover - compiled
    """Append a link from row ``r`` to target ``t``; returns its position.

    The new link gets the weights ``init_w`` and averaging sums ``init_u``
    (one per plane) and a count of 0. When the block is full it moves to a
    block of twice the room (the caller guarantees the pool has room); the
    offsets of the row's other links do not change. ``ordered[r]`` stays set
    only while the block holds targets ``0, 1, 2...`` in that order.
    """
    first = start[r]
    n = size[r]
    planes = W.shape[1]
    averaging = U.shape[0] > 0
    counting = lcount.shape[0] > 0
    if n == cap[r]:  # move to a block of twice the room (written out: no nested calls,
        room = 1     # so numba drops the reference counting of this hot function)
        while room < n + 1:
            room <<= 1
        c = 0
        while (2 << c) <= room:
            c += 1
        moved = meta[FREE + c]
        if moved >= 0:
            meta[FREE + c] = target[moved]
            meta[IDLE] -= room
        else:
            moved = meta[USED]
            meta[USED] = moved + room
        for q in range(n):
            target[moved + q] = target[first + q]
            for p in range(planes):
                W[moved + q, p] = W[first + q, p]
            if averaging:
                for p in range(planes):
                    U[moved + q, p] = U[first + q, p]
            if counting:
                lcount[moved + q] = lcount[first + q]
        old_room = cap[r]
        if old_room > 0:  # the old block goes on the free list of its size class
            c = 0
            while (2 << c) <= old_room:
                c += 1
            target[first] = meta[FREE + c]
            meta[FREE + c] = first
            meta[IDLE] += old_room
        start[r] = moved
        cap[r] = room
        first = moved
    j = first + n
    if t != n:
        ordered[r] = 0
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


@leaf
def order_block(r, start, size, ordered, target, W, U, lcount):  # pragma: no cover
    """Sort row ``r``'s links by target (insertion sort: blocks are short), and
    mark the row ordered if it then holds targets ``0, 1, 2...``.

    Only when no list of offsets into the block is in use.
    """
    first = start[r]
    n = size[r]
    planes = W.shape[1]
    averaging = U.shape[0] > 0
    counting = lcount.shape[0] > 0
    for a in range(first + 1, first + n):
        b = a
        while b > first and target[b - 1] > target[b]:
            swap = target[b - 1]
            target[b - 1] = target[b]
            target[b] = swap
            for p in range(planes):
                w = W[b - 1, p]
                W[b - 1, p] = W[b, p]
                W[b, p] = w
                if averaging:
                    u = U[b - 1, p]
                    U[b - 1, p] = U[b, p]
                    U[b, p] = u
            if counting:
                c = lcount[b - 1]
                lcount[b - 1] = lcount[b]
                lcount[b] = c
            b -= 1
    is_ordered = 1
    for q in range(n):
        if target[first + q] != q:
            is_ordered = 0
            break
    ordered[r] = is_ordered
