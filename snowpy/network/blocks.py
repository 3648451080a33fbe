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

*Dense rows.* A row linked to many targets is laid out by target
(``dense[r]`` set): slot ``t`` of its block holds target ``t``'s link, or a
*hole* (target ``-1``, the absent weight, no averaging sum) where there is
none, for ``t < cap[r]``. Scoring reads a dense block as a plain vector (no
target lookup, vectorised): a hole adds nothing, since it weighs what a
missing link weighs. :func:`densify` lays a row out so once it links half the
targets; a dense row grows its block when a target beyond its room appears.

``meta`` holds the pool's bookkeeping: ``meta[USED]`` the end of the part of
the pool ever handed out, ``meta[FREE + c]`` the first free block of room
``2**c`` (``-1``: none; a free block's ``target`` holds the next one), and
``meta[IDLE]`` the slots sitting in free blocks.

These functions are called from the training engine; the pool is grown by
the caller (Python) between calls, so none of them allocates memory, and
they are compiled as :func:`leaf` functions.
"""

from __future__ import annotations

import numpy as np

from snowpy._jit import interpreted, jit

__all__ = [
    "DENSE_SHARE",
    "FREE",
    "HOLE",
    "IDLE",
    "META_SIZE",
    "USED",
    "append_link",
    "densify",
    "find_link",
    "new_meta",
    "room_class",
]

#: The target of a slot of a dense row that holds no link.
HOLE = -1

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
    if interpreted():
        return function
    import numba

    try:
        return numba.njit(nogil=True, cache=True, _nrt=False)(function)
    except TypeError:  # pragma: no cover - depends on numba's version
        return jit(function)


def new_meta() -> np.ndarray:
    """Bookkeeping of an empty pool."""
    meta = np.zeros(META_SIZE, dtype=np.int64)
    meta[FREE:] = -1
    return meta


@jit(inline="always")
def room_class(room):  # pragma: no cover - compiled
    """Size class ``c`` of a block of ``room`` slots: the largest ``2**c <= room``."""
    c = 0
    while (2 << c) <= room:
        c += 1
    return c


@leaf
def find_link(target, first, size, cap, dense, t):  # pragma: no cover - compiled
    """Position of target ``t``'s link in a row's block, or -1."""
    if dense:
        if t < cap and target[first + t] == t:
            return first + t
        return -1
    for j in range(first, first + size):
        if target[j] == t:
            return j
    return -1


#: A row is laid out densely once it links this share of the targets.
DENSE_SHARE = 0.5


@leaf
def _allocate(room, meta, target):  # pragma: no cover - compiled
    """First slot of a block of ``room`` slots: a free one of that size class or larger
    (class ``c`` holds blocks of ``2**c`` to ``2**(c + 1) - 1`` slots), or a new one."""
    c = 0
    while (1 << c) < room:
        c += 1
    first = meta[FREE + c]
    if first >= 0:
        meta[FREE + c] = target[first]
        meta[IDLE] -= room
    else:
        first = meta[USED]
        meta[USED] = first + room
    return first


@leaf
def _release(first, room, meta, target):  # pragma: no cover - compiled
    """Put a block on the free list of its size class (the largest ``2**c <= room``)."""
    if room <= 0:
        return
    c = 0
    while (2 << c) <= room:
        c += 1
    target[first] = meta[FREE + c]
    meta[FREE + c] = first
    meta[IDLE] += room


@leaf
def _move(src, dest, target, W, U, lcount):  # pragma: no cover - compiled
    target[dest] = target[src]
    for p in range(W.shape[1]):
        W[dest, p] = W[src, p]
    if U.shape[0] > 0:
        for p in range(U.shape[1]):
            U[dest, p] = U[src, p]
    if lcount.shape[0] > 0:
        lcount[dest] = lcount[src]


@leaf
def _hole(j, target, W, U, lcount, absent_w):  # pragma: no cover - compiled
    target[j] = HOLE
    for p in range(W.shape[1]):
        W[j, p] = absent_w[p]
    if U.shape[0] > 0:
        for p in range(U.shape[1]):
            U[j, p] = 0.0
    if lcount.shape[0] > 0:
        lcount[j] = 0


@leaf
def _set(j, t, target, W, U, lcount, init_w, init_u):  # pragma: no cover - compiled
    target[j] = t
    for p in range(W.shape[1]):
        W[j, p] = init_w[p]
    if U.shape[0] > 0:
        for p in range(U.shape[1]):
            U[j, p] = init_u[p]
    if lcount.shape[0] > 0:
        lcount[j] = 0


@leaf
def _dense_block(r, room, start, cap, target, W, U, lcount, meta,
                 absent_w):  # pragma: no cover - compiled
    """Move dense row ``r`` to a block of ``room`` slots, new slots holes."""
    first = start[r]
    old = cap[r]
    moved = _allocate(room, meta, target)
    for q in range(room):
        if q < old:
            _move(first + q, moved + q, target, W, U, lcount)
        else:
            _hole(moved + q, target, W, U, lcount, absent_w)
    _release(first, old, meta, target)
    start[r] = moved
    cap[r] = room


@leaf
def append_link(r, t, start, size, cap, dense, target, W, U, lcount, meta, init_w, init_u,
                absent_w):  # pragma: no cover - compiled
    """Link row ``r`` to target ``t``; returns the link's position.

    The new link gets the weights ``init_w`` and averaging sums ``init_u``
    (one per plane) and a count of 0. A sparse row appends it, moving its
    block to one of twice the room when full (the offsets of its other links
    do not change); a dense row fills slot ``t``, growing its block first when
    ``t`` is beyond its room. The caller guarantees the pool has room.
    """
    if dense[r]:
        if t >= cap[r]:  # a target beyond the room: half as much room again, at least t + 1
            _dense_block(r, max(t + 1, cap[r] + cap[r] // 2), start, cap, target, W, U, lcount,
                         meta, absent_w)
        j = start[r] + t
        _set(j, t, target, W, U, lcount, init_w, init_u)
        size[r] += 1
        return j
    first = start[r]
    n = size[r]
    if n == cap[r]:
        room = 1
        while room < n + 1:
            room <<= 1
        moved = _allocate(room, meta, target)
        for q in range(n):
            _move(first + q, moved + q, target, W, U, lcount)
        _release(first, cap[r], meta, target)
        start[r] = moved
        cap[r] = room
        first = moved
    j = first + n
    _set(j, t, target, W, U, lcount, init_w, init_u)
    size[r] = n + 1
    return j


@leaf
def densify(r, n_targets, start, size, cap, dense, target, W, U, lcount, meta,
            absent_w):  # pragma: no cover - compiled
    """Lay row ``r`` out by target: slot ``t`` for target ``t``, holes elsewhere.

    Needs a block of ``n_targets`` slots (the caller checks the pool's room).
    Only when no list of offsets into the row's block is in use.
    """
    room = n_targets
    first = start[r]
    moved = _allocate(room, meta, target)
    for q in range(room):
        _hole(moved + q, target, W, U, lcount, absent_w)
    for q in range(size[r]):
        _move(first + q, moved + target[first + q], target, W, U, lcount)
    _release(first, cap[r], meta, target)
    start[r] = moved
    cap[r] = room
    dense[r] = 1
