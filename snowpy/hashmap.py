"""A map from 64-bit keys to dense numbers 1, 2, 3..., probed by compiled code.

A shared building block: the network gives a row to each feature id seen in
training (:mod:`snowpy.network.links`), and the front end keeps the (feature
id, string fingerprint) pairs it has named (:mod:`snowpy.text.names`). One
probe sequence per key: linear probing over a power-of-two table of ``int64``
(key, number) pairs (key ``-1`` marks an empty slot), so that a probe reads one
cache line, kept between a quarter and half full, with Fibonacci hashing. It
holds 40 to 80 bytes per key (slots and the number-to-key list), whatever the
range of the keys. A map of a key space no wider than :data:`DIRECT_WIDTH` hashes
its keys until it holds one key in :data:`DIRECT_SHARE` of the space, then becomes
a direct table (a number per key of the space, one memory access): a small corpus
never pays for a table of the whole space.
"""

from __future__ import annotations

import threading

import numpy as np

from snowpy._core.featuremap import direct_lookup, direct_probe, lookup, probe

__all__ = ["DIRECT_SHARE", "DIRECT_WIDTH", "FEW", "FeatureMap"]

_EMPTY = -1

#: The widest key space looked up in a direct table (16 MB of int32): 2**22, the
#: command line's default hash width.
DIRECT_WIDTH = 1 << 22
#: A map of a key space up to :data:`DIRECT_WIDTH` becomes a direct table when it
#: holds more keys than the space over this (65,536 keys of 2**22).
DIRECT_SHARE = 64
#: Held while a map of adopted keys is made (:meth:`FeatureMap._made`).
_MAKING = threading.Lock()
#: A map of adopted keys (:meth:`FeatureMap.adopt`) looks a block of fewer than one key
#: in this many of them up by bisection; a larger block makes the table first.
FEW = 16


class FeatureMap:
    """Numbers 1, 2, ... for keys in order of first appearance (0 is left free: the
    network's bias row).

    Examples
    --------
    >>> fmap = FeatureMap()
    >>> fmap.rows(np.array([7, 2**40, 7]), insert=True).tolist()
    [1, 2, 1]
    >>> fmap.rows(np.array([5, 2**40]), insert=False, unseen=99).tolist()
    [99, 2]
    >>> fmap.row_ids.tolist()
    [7, 1099511627776]
    """

    def __init__(self, capacity: int = 1024, *, narrow: bool = False,
                 width: int | None = None, direct: bool = False) -> None:
        #: keys below 2**31: (key, number) pairs of int32, half the memory
        self.narrow = narrow or (width is not None and width <= DIRECT_WIDTH)
        self._dtype = np.int32 if self.narrow else np.int64
        size = 1 << max(4, int(np.ceil(np.log2(max(capacity, 2) * 2))))
        #: counts the times the arrays were replaced (compiled callers holding them
        #: compare it to know when to take the new ones)
        self.generation = 0
        #: keys below ``width`` (at most :data:`DIRECT_WIDTH`) are looked up, once the map
        #: holds many (:data:`DIRECT_SHARE`) or from the start when ``direct`` (for
        #: compiled code that reads a table), in a table of a number per key, one memory
        #: access, no probing; until then, and in other maps, they are hashed
        self.width = width
        self.direct = direct and width is not None and width <= DIRECT_WIDTH
        if self.direct:  # (calloc: pages of the table are zero until a key lands there)
            self._slots = np.zeros(int(width or 0), dtype=np.int32)
        else:
            self._slots = self._empty_slots(size)
        self._row_ids = np.zeros(size // 2, dtype=self._dtype)
        self.next_row = 1
        #: keys adopted whole (:meth:`adopt`), sorted, and the number of each less one
        #: (None: their places), until a key is inserted, a large block looked up or the
        #: arrays asked for
        self._sorted: tuple[np.ndarray, np.ndarray | None] | None = None

    def adopt(self, ids: np.ndarray) -> bool:
        """Numbers 1, 2, ... for ``ids`` in their order (an empty map's; a model file's
        features); whether they were distinct. Until a key is inserted, a block of
        more than one key in :data:`FEW` of them looked up, or the arrays asked for,
        the keys are found by bisection among them sorted (4 to 8 bytes a key): a model
        that predicts a few lines makes no table (a model file's keys come in order: no
        more than the keys)."""
        if self.next_row != 1:
            raise ValueError("only an empty map adopts keys")
        ids = np.ascontiguousarray(ids)
        order: np.ndarray | None = None  # (keys given in order: the model file's)
        ordered = ids
        if ids.size > 1 and not bool(np.all(ids[1:] > ids[:-1])):
            order = np.argsort(ids, kind="stable").astype(np.int32)
            ordered = ids[order]
        if ordered.size and (int(ordered[0]) < 0 or (self.width is not None and
                                                     int(ordered[-1]) >= self.width)):
            bad = ordered[0] if ordered[0] < 0 else ordered[-1]
            raise ValueError(f"feature id {bad} is beyond the map's {self.width}")
        if ordered.size > 1 and not bool(np.all(ordered[1:] > ordered[:-1])):
            return False
        self._sorted = (ordered, order)
        self.next_row = ordered.size + 1
        return True

    def pack(self) -> None:
        """Hold the keys alone, as :meth:`adopt` holds a model file's (sorted, with the
        number of each: 8 bytes a key of up to 31 bits), the same numbers, the table or
        hash made again when next needed: what a network holds while its rows learn,
        which look no key up (20 Newsgroups' final network: 8 MB where a table of
        2**22 ids and the list of its keys took 20)."""
        if self._sorted is not None or self.next_row == 1:
            return
        ids = self.row_ids
        order: np.ndarray | None = None
        if not bool(np.all(ids[1:] > ids[:-1])):
            order = np.argsort(ids, kind="stable").astype(np.int32)
            ids = ids[order]
        else:
            ids = ids.copy()  # (not a view of the list let go)
        self._sorted = (ids, order)
        self._slots, self._row_ids = self._slots[:0].copy(), self._row_ids[:0].copy()
        self.generation += 1

    def _made(self) -> None:
        """The table or hash of the adopted keys, made the first time it is needed: in a
        map of its own, taken whole before the sorted keys are let go (threads that
        predict at once from a loaded model each find every key)."""
        with _MAKING:
            if self._sorted is None:  # (another thread made it)
                return
            made = FeatureMap(narrow=self.narrow, width=self.width, direct=self.direct)
            made.rows(self.row_ids, insert=True)  # (any integer type: cast as rows casts)
            (self._slots, self._row_ids), self.direct = made.arrays, made.direct
            self.next_row = made.next_row
            self.generation += 1
            self._sorted = None

    def _empty_slots(self, size: int) -> np.ndarray:
        slots = np.empty(2 * size, dtype=self._dtype)
        slots[0::2] = _EMPTY
        return slots

    def __len__(self) -> int:
        return self.next_row - 1

    @property
    def row_ids(self) -> np.ndarray:
        """Feature id of each row from 1 on."""
        adopted = self._sorted
        if adopted is not None:
            ordered, order = adopted
            if order is None:
                return ordered
            ids = np.empty_like(ordered)
            ids[order] = ordered
            return ids
        return self._row_ids[: len(self)]

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The table of (key, number) pairs and the number-to-key list, for compiled
        code that probes the map in place (it inserts as :meth:`rows` does, and the
        caller then sets :attr:`next_row`)."""
        if self._sorted is not None:
            self._made()
        return self._slots, self._row_ids

    @property
    def nbytes(self) -> int:
        adopted = self._sorted
        if adopted is not None:
            return sum(a.nbytes for a in adopted if a is not None)
        return self._slots.nbytes + self._row_ids.nbytes

    def rows(self, ids: np.ndarray, *, insert: bool, unseen: int = 0,
             checked: bool = False, out: np.ndarray | None = None) -> np.ndarray:
        """Row of each id; new ids get new rows when ``insert``, else ``unseen``.

        ``checked``: the caller knows the ids are contiguous ``int32``/``int64``
        keys the map can hold (the one-example path skips the checks). ``out``: an
        ``int32`` array the rows are written to (``ids`` itself: each id is read before
        its row is written over it).
        """
        if not checked:
            if ids.dtype not in (np.int32, np.int64):  # CSR indices are int32/int64 already
                ids = ids.astype(np.int64)
            ids = np.ascontiguousarray(ids)
            if self.narrow and ids.dtype == np.int64 and ids.size \
                    and (ids.max() >= 2**31 or ids.min() < 0):
                raise ValueError("a narrow map holds keys from 0 to 2**31 - 1")
            if self.width is not None and not self.direct and ids.size \
                    and (ids.min() < 0 or ids.max() >= self.width):
                outside = (ids < 0) | (ids >= self.width)
                if insert:  # (as a table refuses it)
                    raise ValueError(f"feature id {ids[outside][0]} is beyond the map's "
                                     f"{self.width}")
                found = np.full(ids.size, unseen, np.int32)  # (as a table answers it)
                found[~outside] = self.rows(ids[~outside], insert=False, unseen=unseen)
                return found
        adopted = self._sorted
        if adopted is not None:
            if not insert and FEW * ids.size < adopted[0].size:
                return _bisect(adopted, ids, unseen)
            self._made()
        out = np.empty(ids.size, dtype=np.int32) if out is None else out
        if not insert:
            (direct_lookup if self.direct else lookup)(self._slots, ids, out, unseen)
            return out
        start, before = 0, self.next_row
        while True:
            step = direct_probe if self.direct else probe
            start, self.next_row = step(self._slots, self._row_ids, ids, out, start,
                                        self.next_row)
            if start == ids.size:
                return out
            if self.direct:
                self.grow(self.next_row + (ids.size - start))
                continue
            # as many new keys to come as the part read so far had, up to four times the
            # room (each doubling inserts every key again: a batch of 14 million ids
            # grew the map twelve times); new keys only get rarer, so this overshoots
            coming = (self.next_row - before) * (ids.size - start) // max(start, 1)
            self.grow(min(self.next_row + coming, self._slots.size))  # (room: size / 4)

    def numbers_by_key(self) -> np.ndarray:
        """The numbers (int64) in the order of their keys: of keys held alone (adopted
        or packed), as they are held; of keys numbered in their order (a table made of
        keys adopted in order), in place; of a table holding many, read off it in key
        order (no sort); else sorted."""
        adopted = self._sorted
        if adopted is not None:  # (the key of each place in order, and its number less one)
            return np.arange(1, adopted[0].size + 1, dtype=np.int64) if adopted[1] is None \
                else adopted[1].astype(np.int64) + 1
        keys = self.row_ids
        if bool(np.all(keys[1:] > keys[:-1])):  # (numbered in key order: adopted so)
            return np.arange(1, keys.size + 1, dtype=np.int64)
        if self.direct and len(self) > (self.width or 0) // DIRECT_SHARE:
            # (a number past the last a step kept is not the map's)
            numbers = self._slots[np.flatnonzero(self._slots)].astype(np.int64)
            return numbers[numbers < self.next_row]
        return 1 + np.argsort(self.row_ids, kind="stable").astype(np.int64)

    def grow(self, rows: int = 0) -> None:
        """Twice the slots, or enough to hold ``rows`` rows at most half full (a direct
        map: room for ``rows`` rows in its number-to-key list)."""
        if self._sorted is not None:
            self._made()
        if self.direct:  # (at most a number per key, and 0: a map of few keys starts full)
            size = self._row_ids.size
            room = min(max(2 * size, rows + 1, size + size // 2), self._slots.size + 1)
            if room > size:
                grown = np.zeros(room, dtype=self._dtype)
                grown[:size] = self._row_ids
                self._row_ids = grown
                self.generation += 1
            return
        used = self.row_ids.copy()
        self.generation += 1
        if self.width is not None and self.width <= DIRECT_WIDTH and \
                max(rows, len(self)) > self.width // DIRECT_SHARE:  # many keys: a table
            self.direct = True
            self._slots = np.zeros(self.width, dtype=np.int32)  # (calloc: zero until used)
            self._slots[used] = np.arange(1, used.size + 1, dtype=np.int32)
            self._row_ids = np.zeros(max(rows, used.size) + 1, dtype=self._dtype)
            self._row_ids[:used.size] = used
            return
        size = self._slots.size  # twice the slots: between a quarter and half full
        while size < 2 * rows:  # (rows fill at most half the slots)
            size *= 2
        self._slots = self._empty_slots(size)
        self._row_ids = np.zeros(size // 2, dtype=self._dtype)
        self.next_row = 1
        self.rows(used, insert=True)  # same order: rows keep their numbers


def _bisect(adopted: tuple[np.ndarray, np.ndarray | None], ids: np.ndarray, unseen: int
            ) -> np.ndarray:
    """The numbers of ``ids`` among keys adopted whole (``(sorted keys, the number of
    each less one, or None: their places)``); ``unseen`` for the others."""
    ordered, order = adopted
    where = np.searchsorted(ordered, ids)
    out = np.full(ids.size, unseen, np.int32)
    found = where < ordered.size
    found[found] = ordered[where[found]] == ids[found]
    out[found] = (where[found] if order is None else order[where[found]]) + 1
    return out
