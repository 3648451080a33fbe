"""The link pool's layout: rows, blocks, dense rows and the bookkeeping.

A network's links live in one *pool* of parallel arrays (:mod:`snowpy.network.links`):
``target[j]`` (``int32``), ``W[j, p]`` (the weight planes), ``U[j, p]`` (the
averaging sums, when averaging) and ``lcount[j]`` (the link's count, when
kept). Each feature row ``r`` owns one *block* of the pool, ``start[r]`` to
``start[r] + size[r]``, with room for ``cap[r]`` links (one 16-byte record per row,
:data:`snowpy.network.links.ROW`, read whole). Links are appended to
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

The block operations (find, append, allocate, free, densify) are compiled into the
training engine (``snowpy/_core/pool.pxd``); the pool is grown by the caller
(Python) between calls, so none of them allocates memory.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DENSE_SHARE", "FREE", "HOLE", "IDLE", "META_SIZE", "USED", "new_meta"]

#: The target of a slot of a dense row that holds no link.
HOLE = -1

USED = 0
IDLE = 1
FREE = 2
N_CLASSES = 32
META_SIZE = FREE + N_CLASSES

#: A row is laid out densely once it links this share of the targets.
DENSE_SHARE = 0.5


def new_meta() -> np.ndarray:
    """Bookkeeping of an empty pool."""
    meta = np.zeros(META_SIZE, dtype=np.int64)
    meta[FREE:] = -1
    return meta
