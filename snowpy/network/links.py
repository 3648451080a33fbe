"""The links of a network: SNoW's sparse network, stored feature by feature.

A *link* joins a feature to a target node and carries that target's weight
for the feature: one number per weight plane of the rule, the averaging sums
when averaging, and (only when ``-e percent`` eligibility needs it) a count.
Nothing else is stored per link, so memory, model files and the cost of
scoring an example grow with the links, not with features x targets.

Rows and the pool
-----------------
Each feature seen in training gets a *row* (row 0 is the bias, SNoW's fixed
feature); a hash map (:class:`snowpy.hashmap.FeatureMap`) gives
the row of a feature id, so the width of the feature space does not matter.
A row's links sit in one run of the pool, sorted by target: scoring an example
reads one short run of memory per active feature, and finding a target's link in
it is a short scan or a bisection.

The pool is parallel arrays: ``target[j]`` (``int32``), ``W[j, p]`` (the weight
planes), ``U[j, p]`` (the averaging sums, when averaging) and ``lcount[j]`` (the
link's count, when kept). Row ``r`` owns the slots ``start[r]`` to ``start[r] +
size[r]``, with room for ``cap[r]`` links (one 16-byte record per row, :data:`ROW`,
read whole). Links are appended to their row's run, never moved within it while an
example is being learned, so a link's *offset* in its run is stable; a full run
moves, whole, to one of twice the room, and the old one goes on a free list of its
size class, from which later runs are taken first (a pool with :data:`FRAGMENTED` of
its slots in free runs is closed up before it grows). A row linked to half the targets
or more is laid out *dense*: slot ``t`` of its run holds target ``t``'s link, or a
hole (target ``-1``, the absent weight, no averaging sum) where there is none, and
scoring reads it as a plain vector. ``meta`` holds the bookkeeping: ``meta[USED]``
the end of the part of the pool ever handed out, ``meta[FREE + c]`` the first free
run of room ``2**c`` (``-1``: none; a free run's ``target`` holds the next one), and
``meta[IDLE]`` the slots sitting in free runs. The operations on the pool (find,
append, allocate, free, densify) are compiled into the training engine
(``snowpy/_core/pool.pxd``, the same constants); the pool is grown by the caller
(Python) between calls, so none of them allocates memory.

Missing links
-------------
A target that has no link to a feature gets the *absent* weight from it: 0
with the ``"positive"`` policy (SNoW's sparse mode: the feature is not part
of the target's concept), the rule's initial weight with ``"touched"`` and
``"all"`` (so both predict exactly like a full table).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from snowpy._core import links as _compiled
from snowpy._core.block import Block
from snowpy._core.engine import POLICIES, Links
from snowpy._core.scoring import effective_weights, moved_by_target
from snowpy._lazy import lazy_module
from snowpy._validation import on_threads
from snowpy.hashmap import FeatureMap
from snowpy.rules.spec import RuleKernel

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp
else:
    sp = lazy_module("scipy.sparse")

__all__ = ["ALL", "LINK_POLICIES", "exact_layout", "ONLINE_WIDTH", "POSITIVE", "PRECISIONS", "ROW", "SIGNED",
           "TOUCHED", "USED", "LinkStore", "new_meta"]

#: Storage precision of the weights: name -> (dtype, smallest and largest magnitude kept).
PRECISIONS = {"float64": (np.float64, 1e-100, 1e100), "float32": (np.float32, 1e-30, 1e30)}
LINK_POLICIES = tuple(POLICIES)
#: The link policies (``links=`` of :class:`snowpy.Network`), as the engine numbers them.
POSITIVE, TOUCHED, ALL, SIGNED = (POLICIES[name] for name in ("positive", "touched", "all",
                                                               "signed"))
_MAX_ROWS = 2**31 - 2
#: ``meta``'s entries (``snowpy/_core/pool.pxd``): the end of the slots handed out, the
#: slots in free runs, the first free run of each of the 32 size classes.
USED, IDLE, FREE = 0, 1, 2
META_SIZE = FREE + 32
#: The feature space of a network started one example at a time with no width:
#: any id below it.
ONLINE_WIDTH = 2**31
_MAX_LINKS = 2**31 - 1
#: The share of a pool's slots in free runs beyond which the pool is defragmented
#: (:meth:`LinkStore.defragment`) before it grows. One epoch of 160,000 synthetic
#: documents of 10,000 classes left a quarter of the pool in runs that few later rows
#: fit (rows that grew to half the targets and were laid out dense): the command peaked
#: at 2,645 MB, at 2,442 closed up at a quarter, 2,382 at a tenth; the same model file.
FRAGMENTED = 0.25
#: The most rows :meth:`LinkStore.file_rows` reads from a file (a read each): beyond
#: them the mapping's pages are read.
FILE_ROWS = 1 << 14
#: A row's bookkeeping, one record of 16 bytes (``row_t`` of ``snowpy/_core/pool.pxd``):
#: the first slot of its block, the links in it, the block's slots, and whether the
#: row is dense. The engine reads it for every active feature, in an order no
#: prefetcher foresees: one cache line, not four arrays' lines.
ROW = np.dtype([("start", np.int32), ("size", np.int32), ("cap", np.int32),
                ("dense", np.int32)])


def _resized(holder: Any, name: str, length: int, fill: float | None = 0) -> None:
    """``holder.name`` grown or cut to ``length`` rows, any new ones set to ``fill`` (left
    as they come when ``None``: a pool slot is written before it is read).

    The pool's arrays are views of a :class:`~snowpy._core.block.Block`, which grows with
    ``realloc``: the kernel moves the pages of a large block instead of copying them, the
    old and new arrays are never held at once, and the room added is not touched (numpy's
    ``resize`` writes zeros over it, bringing all of it into memory: room the longest
    example might need, seldom used). The block moves only when nothing but ``holder``
    refers to the array and nothing but the array to the block (the references are
    counted: the attribute is taken off its holder first); otherwise (a view is held, or
    the array is a model file's mapping, or a plain array) it is copied into a new block.
    """
    array = getattr(holder, name)
    setattr(holder, name, None)
    old = array.shape[0]
    shape = (length,) + array.shape[1:]
    dtype = array.dtype
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    block = array.base if isinstance(array.base, Block) else None
    alone = block is not None and array.nbytes == block.nbytes \
        and array.__array_interface__["data"][0] == block.address \
        and sys.getrefcount(array) <= 2 and sys.getrefcount(block) <= 3
    # (this frame's names and getrefcount's own; the block's: the array's base too)
    memory: Any = block if alone else Block(max(nbytes, 1))  # (numpy's stubs: no Block)
    if alone:
        del array
        memory.resize(max(nbytes, 1))
        resized = np.ndarray(shape, dtype, buffer=memory)
    else:
        resized = np.ndarray(shape, dtype, buffer=memory)
        kept = min(old, length)
        resized[:kept] = array[:kept]
        del array
    if fill is not None and length > old:
        resized[old:] = fill
    setattr(holder, name, resized)


def new_meta() -> np.ndarray:
    """The bookkeeping of an empty pool."""
    meta = np.zeros(META_SIZE, dtype=np.int64)
    meta[FREE:] = -1
    return meta


def exact_layout(stores: list[LinkStore], n_rows: int, n_targets: int, threads: int = 1,
                 *, slots: bool = True, order: np.ndarray | None = None
                 ) -> dict[str, np.ndarray]:
    """The exact layout (:meth:`LinkStore.exact`) of one store, or of the stores of a
    network learned in ``k`` parts (store ``p`` holds targets ``p, p + k, ...`` as ``0, 1,
    ...``): rows ``0 .. n_rows`` in order (``order``: row ``order[i]`` in place ``i``),
    each row's links by target, compiled, the rows shared among ``threads`` (``slots``:
    each link's slot in its own store, or with ``slots=False`` an empty array: parts put
    together need none)."""
    first = stores[0]
    planes, dtype = first.W.shape[1], np.dtype(first.dtype)
    width = planes * dtype.itemsize
    averaging = any(store.U.shape[0] for store in stores)
    counted = any(store.lcount.shape[0] for store in stores)

    def as_bytes(array: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(array).view(np.uint8).reshape(array.shape[0], width)

    pools = [(store.rows, store.target, as_bytes(store.W),
              as_bytes(store.U) if store.U.shape[0] else np.zeros((0, width), np.uint8),
              store.lcount) for store in stores]
    gathering = _compiled.Gathering(pools, n_rows, n_targets, width, width if averaging else 0,
                                    order)
    ranges = [(n_rows * t // threads, n_rows * (t + 1) // threads) for t in range(threads)]
    sizes = np.zeros(n_rows, np.int32)
    on_threads(lambda span: gathering.count(span[0], span[1], sizes), ranges, threads)
    starts = [int(sizes[:span[0]].sum(dtype=np.int64)) for span in ranges]
    total = int(sizes.sum(dtype=np.int64))
    target = np.empty(total, np.int32)
    W = np.empty((total, width), np.uint8)
    U = np.empty((total if averaging else 0, width), np.uint8)
    lcount = np.empty(total if counted else 0, np.int32)
    where = np.empty(total if slots else 0, np.int64)
    on_threads(lambda at: gathering.fill(ranges[at][0], ranges[at][1], starts[at], target, W,
                                         U, lcount, where), range(threads), threads)
    return {"sizes": sizes, "target": target, "W": W.view(dtype).reshape(-1, planes),
            "U": U.view(dtype).reshape(-1, planes) if averaging else
            np.zeros((0, planes), dtype), "lcount": lcount, "slots": where}


class LinkStore:
    """Rows, links, per-target state and the averaging clock of one network.

    Parameters
    ----------
    kernel : RuleKernel
        The rule made ready for the engine (planes, initial weights, state).
    n_features : int
        Width of the feature space (columns of ``X``).
    policy : {"positive", "touched", "all"}
        When links are created (see :class:`snowpy.Network`'s ``links``).
    average : bool
        Keep averaging sums.
    precision : {"float32", "float64"}
        Storage type of the weights (the engine computes in float64).
    min_count : int
        Eligibility: rows count their activity when ``min_count > 1``.
    link_counts : bool
        Keep a count per link (for ``eligibility="percent:p"``).
    """

    #: the links' weights and sums as a mapped model file holds them, read from the
    #: file for a few examples (:meth:`file_rows`) until the pool is first written
    _file: tuple[Any, Any] | None = None

    def __init__(self, kernel: RuleKernel, n_features: int, *, policy: str = "positive",
                 average: bool = True, precision: str = "float64", min_count: int = 1,
                 link_counts: bool = False) -> None:
        self.kernel = kernel
        self.policy = policy
        self.policy_code = POLICIES[policy]
        self.n_features = n_features
        # a rule whose scoring planes are derived (Naive Bayes' log-probabilities from
        # counts) is not averaged: the derivation is the model
        self.average = average and kernel.refresh is None
        self.precision = precision
        self.dtype, self.min_magnitude, self.max_magnitude = PRECISIONS[precision]
        self.min_count = int(min_count)
        self.n_planes = len(kernel.planes)
        #: True for a store loaded from an inference-only model file: one plane
        #: holding the effective (averaged) weights, no training state
        self.frozen = False
        self._frozen_absent = 0.0  # a frozen (inference-only) store's missing-link weight
        #: counts the times an array was replaced (see :meth:`replaced`)
        self.generation = 0
        self._map = FeatureMap(narrow=n_features <= 2**31, width=n_features)
        self.n_rows = 1
        rows = 1024
        self.rows = np.zeros(rows, ROW)
        self.count = np.zeros(rows if self.min_count > 1 else 0, np.int32)
        links = 4096
        self.target = np.zeros(links, np.int32)
        self.W = np.zeros((links, self.n_planes), self.dtype)
        self.U = np.zeros((links if self.average else 0, self.n_planes), self.dtype)
        self.link_counts = bool(link_counts)
        self.lcount = np.zeros(links if link_counts else 0, np.int32)
        self.meta = new_meta()
        self.S = np.zeros((0, len(kernel.initial_state)), np.float64)
        self.seen = 0
        self._bound: tuple[int, Links] | None = None

    # ------------------------------------------------------------------ shape
    @property
    def n_targets(self) -> int:
        return self.S.shape[0]

    @property
    def n_links(self) -> int:
        """Links held."""
        return int(self.size[: self.n_rows].sum(dtype=np.int64))

    @property
    def planes(self) -> tuple[float, ...]:
        """Coefficient of each stored plane in the effective weight."""
        return (1.0,) if self.frozen else self.kernel.planes

    @property
    def initial_weights(self) -> np.ndarray:
        """The rule's initial weight of each plane, as stored (rounded to the precision)."""
        return np.asarray(self.kernel.initial_weights, dtype=self.dtype).astype(np.float64)

    @property
    def absent_planes(self) -> np.ndarray:
        """Plane values of a missing link."""
        if self.policy_code in (POSITIVE, SIGNED) and not self.kernel.absent_initial:
            return np.zeros(self.n_planes, np.float64)
        return self.initial_weights

    @property
    def absent(self) -> float:
        """Effective weight of a missing link (and of a feature never seen)."""
        if self.frozen:
            return self._frozen_absent
        return float(np.dot(self.kernel.planes, self.absent_planes))

    @property
    def feature_ids(self) -> np.ndarray:
        """Column of ``X`` held by each row from 1 on."""
        return self._map.row_ids.astype(np.int64, copy=False)

    @property
    def start(self) -> np.ndarray:
        """Each row's first slot (a view of :attr:`rows`)."""
        return self.rows["start"]

    @property
    def size(self) -> np.ndarray:
        """The links of each row (a view of :attr:`rows`)."""
        return self.rows["size"]

    @property
    def cap(self) -> np.ndarray:
        """The slots of each row's block (a view of :attr:`rows`)."""
        return self.rows["cap"]

    @property
    def dense(self) -> np.ndarray:
        """1 for a row laid out by target, slot t for target t (a view of :attr:`rows`)."""
        return self.rows["dense"]

    @property
    def pool(self) -> tuple[np.ndarray, ...]:
        return self.target, self.W, self.U, self.lcount, self.meta

    def nbytes(self) -> int:
        """Bytes allocated for rows, links, state and the feature map."""
        arrays = (self.rows, self.count, self.target,
                  self.W, self.U, self.lcount, self.S)
        return sum(a.nbytes for a in arrays) + self._map.nbytes

    # ----------------------------------------------------------------- growth
    def replaced(self) -> None:
        """Record that an array was replaced: compiled callers that hold the arrays
        (:meth:`links`, the one-example path) take the new ones. Every method that
        assigns an array calls it."""
        self.generation += 1

    def written(self) -> None:
        """Record that the links are written in place: they are no longer the model
        file's (:meth:`file_rows`). Every method that writes them calls it."""
        self._file = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the engine's binding of the arrays (bound again on use)."""
        state = self.__dict__.copy()
        state["_bound"] = state["_file"] = None
        return state

    def links(self) -> Links:
        """The pool as the engine reads and writes it (bound once per generation)."""
        self.written()  # (the engine writes the arrays it is handed)
        bound = self._bound
        if bound is None or bound[0] != self.generation:
            bound = self._bound = (self.generation, Links(
                self.rows, self.count, self.target, self.W, self.U, self.lcount, self.meta))
        return bound[1]

    def add_targets(self, count: int) -> None:
        """Add ``count`` target nodes (they start with no links)."""
        if count <= 0:
            return
        self._bound = None
        state = np.empty((count, len(self.kernel.initial_state)), np.float64)
        state[:] = np.asarray(self.kernel.initial_state, dtype=np.float64)
        self.S = np.concatenate([self.S, state], axis=0)
        self.replaced()

    def freeze(self, absent: float) -> None:
        """Hold only the effective weights from now on (an inference-only model), a
        missing link weighing ``absent``."""
        self.frozen = True
        self._frozen_absent = float(absent)

    @property
    def feature_map(self) -> FeatureMap:
        """The map from feature ids (columns of ``X``) to rows."""
        return self._map

    def reserve_rows(self, n_rows: int, *, exact: bool = False) -> None:
        """Make room for ``n_rows`` rows (half as much again, unless ``exact``)."""
        capacity = self.rows.shape[0]
        if n_rows <= capacity:
            return
        if n_rows > _MAX_ROWS:
            raise ValueError("the network cannot hold more than 2**31 - 2 features")
        self._bound = None  # (the engine's binding holds the arrays: they could not grow
        #                    in place)
        new = n_rows if exact else min(max(n_rows, capacity + capacity // 2), _MAX_ROWS)
        _resized(self, "rows", new)
        if self.count.shape[0]:
            _resized(self, "count", new)
        self.replaced()

    def release_rows(self) -> None:
        """Give back the rows' records, none holding a link (the parts a network learns in
        hold their own until :meth:`adopt` takes them put together): 16 bytes a feature."""
        if self.n_links:
            raise ValueError("the rows of a store that holds links are kept")
        self._bound = None
        self.rows = np.zeros(1024, ROW)
        self.replaced()

    def release_links(self) -> None:
        """Give back the links and the rows' records, the per-target state and the counts
        kept: a part's, once its links are put together in the network's store (before
        that store's records are made: 20 Newsgroups' two parts held 69 MB)."""
        self._bound = None
        self.written()
        self.rows = np.zeros(1024, ROW)
        for name in ("target", "W", "U", "lcount"):
            setattr(self, name, getattr(self, name)[:0].copy())
        self.meta = new_meta()
        self.replaced()

    def reserve_links(self, room: int) -> None:
        """Make sure ``room`` more slots can be handed out from the end of the pool."""
        used = int(self.meta[USED])
        capacity = self.target.shape[0]
        if used + room <= capacity:
            return
        if 0 < int(self.meta[IDLE]) >= FRAGMENTED * used:  # (runs that rows left growing)
            used = self.defragment()
            if used + room <= capacity:
                return
        new = max(capacity + capacity // 4, used + room)  # 1.25x: little idle room at the peak
        self._bound = None  # (the engine's binding holds the arrays: they grow in place)
        if new > _MAX_LINKS:
            if used + room > _MAX_LINKS:
                raise MemoryError("the network cannot hold more than 2**31 - 1 links")
            new = _MAX_LINKS
        _resized(self, "target", new, None)
        _resized(self, "W", new, None)
        if self.U.shape[0] or (self.average and not self.frozen):
            # (an averaged pool compacted to no links has no rows of sums left to grow)
            _resized(self, "U", new, None)
        if self.link_counts:
            _resized(self, "lcount", new, None)
        self.replaced()

    def defragment(self) -> int:
        """Close the pool's free runs, the blocks moved down whole as they lie
        (:func:`snowpy._core.links.defragment`: the same links, row by row, in the same
        order); returns the slots used (:data:`FRAGMENTED` says when)."""
        self.written()
        return _compiled.defragment(self.rows, self.n_rows, self.target, self.W, self.U,
                                    self.lcount, self.meta)

    # ------------------------------------------------------------- row lookup
    def training_rows(self, X: sp.csr_matrix, *, room: bool = True, copy: bool = True
                      ) -> np.ndarray:
        """Rows of ``X.indices``, creating rows for features not seen yet (with ``room``
        False, numbered only: the rows of a network learning in parts are laid out in
        the parts' stores, and in this one when they are put together); ``copy=False``:
        written over ``X.indices`` when they are ``int32`` (no second array of 4 bytes an entry;
        a calibration fold's rows, made for its network, 12.8 MB of 20 Newsgroups')."""
        indices = X.indices
        rows = self._map.rows(indices, insert=True, out=indices if not copy
                              and indices.dtype == np.int32 else None)
        if room:
            self.reserve_rows(self._map.next_row)
        self.n_rows = self._map.next_row
        return rows

    def prediction_rows(self, X: sp.csr_matrix) -> np.ndarray:
        """Rows of ``X.indices``; ``-1`` for features never seen in training."""
        return self._map.rows(X.indices, insert=False, unseen=-1)

    @property
    def reads_file(self) -> bool:
        """Whether a few examples' links are read from the model file (:meth:`file_rows`)."""
        return self._file is not None

    def file_rows(self, rows: np.ndarray, averaging: bool) -> tuple[np.ndarray, ...] | None:
        """The pool rows ``rows`` name (-1: none), their links read from the model file
        the store was loaded from, mapped (:class:`snowpy.model_file.FileRows`): ``(rows,
        records, target, W, U)`` renumbered, the bias row first, for the compiled scoring
        of a few examples, which then brings none of the mapped file into memory. None
        when the pool is not the file's as mapped (it learned, was pruned, is in memory)
        or the rows are many."""
        file = self._file  # (once: a thread may write the pool meanwhile)
        if file is None:
            return None
        used = np.union1d(np.zeros(1, np.int32), rows[rows >= 0])
        if used.size > FILE_ROWS:
            return None
        records = self.rows[used]
        starts = records["start"].astype(np.int64)
        counts = np.where(records["dense"] != 0, records["cap"], records["size"]).astype(
            np.int64)
        firsts = np.cumsum(counts) - counts
        slots = np.repeat(starts - firsts, counts) + np.arange(int(counts.sum()))
        records["start"] = firsts
        read_W, read_U = file
        W = read_W.take(starts, counts)
        U = read_U.take(starts, counts) if averaging else W[:0]
        found = np.searchsorted(used, rows).astype(np.int32)
        return (np.where(rows >= 0, found, -1).astype(np.int32), records, self.target[slots],
                W, U)

    # -------------------------------------------------------------- weights
    def effective(self, *, averaged: bool, threads: int = 1) -> np.ndarray:
        """Per pool slot, the link's effective weight minus the absent weight.

        ``sum_p planes[p] * W[:, p]`` from the averaged weights when asked and
        kept, rounded to the storage precision (so that an inference-only
        file, which stores these numbers, predicts bit for bit alike); slots
        holding no link are harmless (never read through a row). ``threads``: the
        slots shared among that many (each slot's number the same).
        """
        used = int(self.meta[USED])
        result = np.empty(used, dtype=np.float64)
        # (slots no row reads, spare room of a block, hold whatever memory held: their
        # values are computed and never used)
        W, U, seen, planes, averaging, round32, absent = self.weighing(averaged=averaged)
        cuts = [used * t // threads for t in range(threads + 1)]
        on_threads(lambda t: effective_weights(
            W[cuts[t]:cuts[t + 1]], U[cuts[t]:cuts[t + 1]], cuts[t + 1] - cuts[t], seen,
            planes, averaging, round32, absent, result[cuts[t]:cuts[t + 1]]),
            range(threads), threads)
        return result

    def weighing(self, *, averaged: bool) -> tuple[Any, ...]:
        """How a link's effective weight is computed, as the compiled scoring takes it:
        ``(W, U, seen, planes, averaging, round32, absent)`` (see :meth:`effective`)."""
        averaging = bool(averaged and self.U.shape[0] and self.seen > 0)
        return (self.W, self.U if averaging else self.W[:0], float(max(self.seen, 1)),
                np.asarray(self.planes, dtype=np.float64), averaging,
                self.dtype != np.float64 and not self.frozen, self.absent)

    def exact(self, *, slots: bool = True, threads: int = 1,
              order: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The links in row order without gaps, each row's by target: ``sizes``,
        ``target``, ``W``, ``U``, ``lcount``, and ``slots``, the pool slot of each (empty
        with ``slots=False``); the rows shared among ``threads``, in the ``order`` given
        (:meth:`by_id`: the order of their features' ids).

        One network has one exact layout, however its pool lies (links created in
        another order, rows laid out densely or not, targets learned apart on several
        threads: :func:`exact_layout`); by id, whatever order its features came in (one
        process, a cluster's shards, a file loaded and learned on): its model file's
        arrays.
        """
        return exact_layout([self], self.n_rows, self.n_targets, threads, slots=slots,
                            order=order)

    def by_id(self) -> np.ndarray:
        """The rows, the bias row first and then in the order of their features' ids."""
        return np.concatenate([np.zeros(1, np.int64), self._map.numbers_by_key()])

    def empty_like(self) -> LinkStore:
        """A store with no rows and no targets, and this one's rule and settings."""
        return LinkStore(self.kernel, self.n_features, policy=self.policy,
                         average=self.average, precision=self.precision,
                         min_count=self.min_count, link_counts=self.link_counts)

    def adopt(self, layout: dict[str, np.ndarray], *, copy: bool = False) -> None:
        """Take an exact layout (from :meth:`exact`, a model file or a mixing) as the pool:
        its arrays as they are, or with ``copy`` a copy of them in this store's own arrays
        (grown where they are short: a store given a network again and again, a shard's
        copy every epoch, faults no new memory in)."""
        sizes = np.ascontiguousarray(layout["sizes"], dtype=np.int32)
        n_rows, n = sizes.shape[0], int(layout["target"].shape[0])
        self.meta = new_meta()
        self.written()
        if copy:
            self.reserve_links(n)
            self.target[:n] = layout["target"]
            self.W[:n] = layout["W"]
            if self.U.shape[0]:
                self.U[:n] = layout["U"]
            if self.lcount.shape[0]:
                self.lcount[:n] = layout["lcount"]
        else:
            self.target = layout["target"]
            self.W = layout["W"]
            self.U = layout["U"] if self.average and not self.frozen else \
                np.zeros((0, self.W.shape[1]), self.dtype)
            self.lcount = layout["lcount"]
            read = getattr(self.W, "rows_read", None)
            if read is not None and (self.U.shape[0] == 0 or hasattr(self.U, "rows_read")):
                self._file = (read, getattr(self.U, "rows_read", None))
        self.replaced()
        self.meta[USED] = n
        self.reserve_rows(n_rows)
        self.rows[n_rows:] = 0
        self.n_rows = n_rows
        # (a row linked to every target, in target order, is a dense row as it lies)
        _compiled.lay_out(self.rows, sizes, self.target, self.n_targets)

    def restart_averaging(self) -> None:
        """The averaged weights become the weights, and the averaging clock starts again
        at 0: from here on every link's average runs from now, so that a target added
        now is averaged over its own lifetime, as the averaged perceptron averages over
        the examples its weights lived through (Freund and Schapire 1999; Collins
        2002), not over examples it was never there for."""
        if not (self.average and self.U.shape[0] and self.seen > 0) or self.frozen:
            return
        self.written()
        live = self.live_slots()
        self.W[live] = (self.W[live].astype(np.float64)
                        - self.U[live].astype(np.float64) / self.seen).astype(self.dtype)
        self.U[live] = 0
        self.seen = 0
        self.replaced()

    def link_bias(self, target: int, planes: np.ndarray) -> None:
        """Give ``target`` the bias link ``planes`` (its weight planes), as if it had
        always been there (no averaging sum): where a target added to a network that has
        learned starts (:meth:`~snowpy.network.engine.Engine.add_targets`)."""
        layout = self.exact(slots=False)
        end = int(layout["sizes"][0])
        at = int(np.searchsorted(layout["target"][:end], target))
        weights = np.asarray(planes, dtype=self.dtype).reshape(1, -1)
        if at < end and layout["target"][at] == target:
            layout["W"][at] = weights
            if layout["U"].shape[0]:
                layout["U"][at] = 0
        else:
            layout["target"] = np.insert(layout["target"], at, np.int32(target))
            layout["W"] = np.insert(layout["W"], at, weights, axis=0)
            for name in ("U", "lcount"):
                if layout[name].shape[0]:
                    layout[name] = np.insert(layout[name], at, 0, axis=0)
            layout["sizes"][0] += 1
        self.adopt(layout)

    def drop_target(self, target: int) -> None:
        """Drop ``target``'s links and state; the targets after it move down one."""
        layout = self.exact(slots=False)
        sizes = layout["sizes"]
        targets = layout["target"]
        keep = targets != target
        rows = np.repeat(np.arange(sizes.shape[0]), sizes)
        layout["sizes"] = np.bincount(rows[keep], minlength=sizes.shape[0]).astype(np.int32)
        targets = targets[keep]
        targets[targets > target] -= 1
        layout["target"] = targets
        for name in ("W", "U", "lcount"):
            if layout[name].shape[0]:
                layout[name] = np.ascontiguousarray(layout[name][keep])
        self.S = np.delete(self.S, target, axis=0)
        self.adopt(layout)

    def moved(self, *, averaged: bool) -> tuple[np.ndarray, np.ndarray]:
        """Per target, the sum of ``|weight - absent|`` over its links that moved from a
        missing link's weight, and how many moved (weights as :meth:`links_csr` gives
        them): sums that do not depend on the pool's order, nor on how the targets are
        split in parts (:func:`snowpy._core.scoring.moved_by_target`)."""
        W, U, seen, planes, averaging, round32, absent = self.weighing(averaged=averaged)
        return moved_by_target(self.rows, self.target, self.n_rows, self.n_targets, W, U,
                               seen, planes, averaging, round32, absent)

    def links_csr(self, *, averaged: bool) -> sp.csr_matrix:
        """The effective weight of every link, ``[rows, targets]`` (missing links: absent)."""
        positions = self.live_slots()
        weights = self.effective(averaged=averaged)[positions] + self.absent
        indptr = np.zeros(self.n_rows + 1, np.int64)
        np.cumsum(self.size[: self.n_rows], out=indptr[1:])
        return sp.csr_matrix((weights, self.target[positions], indptr),
                             shape=(self.n_rows, self.n_targets))

    def positions(self, columns: np.ndarray, target: int) -> np.ndarray:
        """Pool position of the link from each feature (column of ``X``) to ``target``.

        ``-1`` where the feature was never seen or has no link to the target.
        Column ``-1`` stands for the bias.
        """
        columns = np.asarray(columns, dtype=np.int64)
        rows = np.zeros(columns.shape, dtype=np.int64)
        features = columns >= 0
        rows[features] = self._map.rows(columns[features], insert=False, unseen=-1)
        return _compiled.positions(self.rows, self.target, rows, int(target))

    def planes_of(self, columns: np.ndarray, target: int) -> np.ndarray:
        """Raw weight planes ``[len(columns), planes]`` of ``target`` on those features;
        a missing link shows the planes it would have (the absent planes)."""
        where = self.positions(columns, target)
        out = np.tile(self.absent_planes, (where.size, 1))
        found = where >= 0
        out[found] = self.W[where[found]]
        return out

    # --------------------------------------------------------------- pruning
    def prune(self, keep: np.ndarray | None = None, *, threshold: float = 0.0,
              averaged: bool = False) -> int:
        """Drop links in place; returns how many.

        ``keep`` (a flag per pool slot) names the links to keep; without it, a link
        stays when its prediction weight (averaged when ``averaged``) differs from a
        missing link's by ``threshold`` or more, and the bias's links always stay.

        The links move down the pool in one pass, block by block as they lie in it
        (:func:`snowpy._core.links.compact_in_place`), every row left a tight block, and
        the arrays shrink to the links kept: no second copy of the pool at the end of a
        large training, when memory peaks.
        """
        before = self.n_links
        W, _, seen, planes, averaging, round32, absent = self.weighing(averaged=averaged)
        del _  # (the sums: their array shrinks in place only when nothing else refers to it)
        flags = np.zeros(0, np.uint8) if keep is None else keep.view(np.uint8)
        self.written()
        used = _compiled.compact_in_place(  # (the sums move with their links: all of U)
            self.rows, self.n_rows, int(self.meta[USED]), self.target, W, self.U,
            self.lcount, flags, float(threshold), averaging, seen, planes, absent, round32)
        self._bound = None  # (the engine's binding holds the arrays: they shrink)
        del W  # (the arrays shrink in place only when nothing else refers to them)
        for name in ("target", "W", "U", "lcount"):
            if getattr(self, name).shape[0]:
                _resized(self, name, used, None)
        self.meta = new_meta()
        self.meta[USED] = used
        self.replaced()
        _compiled.dense_flags(self.rows, self.target, self.n_rows, self.n_targets)
        return before - self.n_links

    def live_slots(self) -> np.ndarray:
        """Pool positions that hold a link, in row order."""
        return _compiled.link_positions(self.rows, self.target, self.n_rows)

    # ------------------------------------------------------------ conversion
    def full_table(self, *, averaged: bool) -> np.ndarray:
        """Effective weights ``float64[rows, targets]``, missing links at the absent weight."""
        table = np.full((self.n_rows, self.n_targets), self.absent)
        csr = self.links_csr(averaged=averaged)
        rows = np.repeat(np.arange(self.n_rows), np.diff(csr.indptr))
        table[rows, csr.indices] = csr.data
        return table
