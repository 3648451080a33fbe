"""How a network learns: the driver of its epochs, on threads.

:class:`Driver` runs the epochs of a :class:`~snowpy.network.engine.Engine` (what a
network has learned) over examples that come as one :class:`~snowpy.network.engine.
Block` (rows in memory, a cluster's shard, a stream's block) or as
:class:`~snowpy.network.engine.Blocks` (a feature cache), as a :class:`Plan` says: the
epochs, the shuffle, the early stop, the threads and the discard at the end. It owns
the threads: under one-vs-all the targets are learned in parts, a part on a thread
(:class:`Part`), and a driver keeps its parts and their threads from one block to the
next (a stream's, ``partial_fit`` after ``partial_fit``) until :meth:`Driver.join`
puts them together in the network's store; when the targets cannot share the threads,
each epoch's examples are learned in shards that are mixed at its end
(:class:`Shards`). The engine itself holds no thread and never joins one. The engine
of a rule whose state is no weight table (a learner's, the kernel Perceptron's support
vectors) is driven by the same loop, its learner one part on the calling thread
(:class:`LearnerPart`).

Per epoch the compiled loop (:func:`snowpy._core.engine.run`) learns each part's
targets from the examples in the epoch's order (see :mod:`snowpy.network.engine` for
what it does to one example).
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from snowpy._core import hashing
from snowpy._core.engine import Options, Outcome, run
from snowpy._core.merging import Mixing
from snowpy.exceptions import CalibrationWarning, NumericalError, PluginError
from snowpy.network.engine import KERNEL_ERRORS, Block, Blocks, NumericalWarning
from snowpy.network.labels import (
    LabelIndex,
    encode_labels,
    label_array,
    label_index,
    labels_of,
    positive_matrix,
)
from snowpy.network.links import TOUCHED, USED, LinkStore, exact_layout
from snowpy.network.options import calibrating
from snowpy.progress import Progress, as_progress, phase

if TYPE_CHECKING:  # pragma: no cover
    from snowpy.network.engine import Engine

__all__ = ["Driver", "Part", "Plan", "Shards", "chunks", "example_keys", "folds",
           "held_out_scores", "keyed_order", "mixed_keys", "refresh_points"]

#: A piece of at most this many examples is learned by its parts in turn on the calling
#: thread (a mini-batch of ``partial_fit``): handing it to the threads costs more.
FEW = 32
#: Active features per feature of the network below which a fit's examples are not
#: learned in shards (:meth:`Driver.shards`): copying and mixing cost what the links
#: hold, learning what the examples hold. 3 epochs of constraint classification of
#: 360,000 synthetic documents on 2 threads: with 1-2 grams (9.5 active features per
#: feature) the whole command took 6.2-6.5 s in shards against 6.4-6.9 s on one thread,
#: and 1.85 GB against 1.15; with unigrams (far more) the epochs took 0.50 s in shards
#: against 0.86 s, mixing 0.03 s (docs/benchmarks.md).
REDUNDANT = 12

_NO_SCORES = np.empty((0, 0), dtype=np.float64)
_NONE_INT = np.empty(0, dtype=np.int64)
_NONE_ROWS = np.empty(0, dtype=np.int32)


@dataclass(frozen=True)
class Plan:
    """How a network learns a source, resolved once from its options: ``epochs`` passes,
    each ``shuffle``d by the examples' keys, stopping early after a pass without an
    update (``early_stop``, SNoW's), the targets shared among ``threads``, and the links
    SNoW's ``-d`` calls negligible dropped at the end (``discard``; None: none).

    >>> Plan.of({"epochs": 5, "shuffle": True, "early_stop": True, "n_jobs": 1,
    ...          "discard": 0.5})
    Plan(epochs=5, shuffle=True, early_stop=True, threads=1, discard=0.5)
    """

    epochs: int = 1
    shuffle: bool = False
    early_stop: bool = True
    threads: int = 1
    discard: float | None = None

    @classmethod
    def of(cls, options: dict[str, Any]) -> Plan:
        """The plan of a fit with a network's ``options`` (its ``get_params()``)."""
        from snowpy._validation import threads_of

        discard = options.get("discard")
        return cls(int(options["epochs"]), bool(options["shuffle"]),
                   bool(options["early_stop"]), threads_of(options.get("n_jobs")),
                   None if discard is None else float(discard))


class Driver:
    """The driver of a network's learning (see the module's description): its parts and
    their threads, kept from one block to the next."""

    def __init__(self) -> None:
        #: the parts the targets are being learned in, on threads, held from one block
        #: to the next and not put together yet (:meth:`join` puts them together), and
        #: their threads
        self.held: list[Part] | None = None
        self.pool: ThreadPoolExecutor | None = None

    def join(self, engine: Engine) -> Engine:
        """``engine`` with the parts its targets were learned in put together in its
        store (the same network as learned on one thread); their threads let go."""
        if self.held is not None:
            parts, self.held = self.held, None
            if self.pool is not None:
                self.pool.shutdown()
                self.pool = None
            _merge(engine, engine.store, parts)
        return engine

    def block(self, engine: Engine, X: Any, y: Any, targets: Any = None,
              keys: np.ndarray | None = None, *, copy: bool = True) -> Block:
        """``X`` and its labels ``y`` as a :class:`~snowpy.network.engine.Block` of
        ``engine`` (:meth:`~snowpy.network.engine.Engine.block`), rows made for features
        not seen yet in the held parts too (laid out in the engine's store when the parts
        are put together); ``copy=False``: written over ``X``'s indices, its strengths
        read first (strengths made as they are read, from the ids: a fit's rows weighed
        when read, :class:`snowpy.text.weighing.WeighedWhenRead`). A learner's engine's
        examples need no rows."""
        if getattr(engine, "learner", None) is not None:  # (every target sees each one)
            return Block(X, _NONE_ROWS, *encode_labels(engine.labels, y, engine.multilabel),
                         keys=keys)
        if not copy:
            getattr(X, "strengths", None)
        rows = engine.store.training_rows(X, room=self.held is None, copy=copy)
        for part in self.held or ():
            part.store.reserve_rows(engine.store.n_rows)
            part.store.n_rows = engine.store.n_rows
        return engine.block(X, y, targets, keys, rows=rows)

    def add_targets(self, engine: Engine) -> None:
        """A target for each label ``engine`` met beyond its targets (the parts put
        together first)."""
        if len(engine.labels) > engine.n_targets:
            self.join(engine).add_targets(len(engine.labels) - engine.n_targets)

    def fit(self, engine: Engine, data: Block | Blocks, plan: Plan, progress: Any = None,
            *, fresh: bool = True, first: bool = False) -> None:
        """Run ``plan.epochs`` passes of ``engine`` over ``data``, then drop the links
        ``plan.discard`` calls negligible (:meth:`~snowpy.network.engine.Engine.discard`;
        None: none).

        ``data`` is a :class:`Block`, or :class:`Blocks` that come one at a time (a
        feature cache): the passes are the same, example for example, and so is the
        network learned. With ``plan.shuffle``, each pass goes in the order of the examples'
        keys mixed with a salt drawn from the engine's generator
        (:func:`keyed_order`).

        ``fresh`` data is counted for eligibility in its first pass, and makes links
        before its updates there (data learned before made them then, as a fit's later
        epochs do not make them again: a cluster's later rounds). With a progressive
        window, the first pass's scores of each example (made before learning it) go to
        the window as they are made. The ``first`` fit of a fresh network
        (:meth:`~snowpy.Network.fit`) ranks the links for ``eligibility="percent:p"``
        after the first pass, may learn its examples in shards, and puts its parts
        together at the end.
        Updates the training figures; warns once about clamped overflows.

        ``plan.threads``: the targets are learned in that many parts at once, each part
        on a thread of its own (:meth:`parts`); the network learned is the same, to the
        bit, for any number. A learner's engine learns as one part, with no links to
        discard.
        """
        report = as_progress(progress)
        engine.online = False  # a later learn_one starts an entry of its own in mistakes_
        # a rule whose state is no weight table learns in its learner, one part on the
        # calling thread: no links to count, make, split, mix or discard
        links = getattr(engine, "learner", None) is None
        parts: list[Any] = [LearnerPart()]
        pool, sharding, epochs = None, None, plan.epochs
        if links:
            if not engine.kernel.mistake_driven:
                epochs = min(epochs, 1)  # a counting rule learns each example once (-B)
            store, by_percent = engine.store, engine.percent is not None
            engine.target_counts()
            # (the examples of a fit are learned in shards when its targets cannot share
            # the threads; a stream's blocks, partial_fit after partial_fit, never are)
            shards = self.shards(engine, data, plan.threads, report) if first else 1
            k = self.parts(engine, data, plan.threads, report, epochs) if shards == 1 else 1
            if self.held is not None and len(self.held) != k:
                self.join(engine)  # (the parts of other blocks put together first)
            parts, self.held = self.held or _split(engine, store, k), None
            pool, self.pool = self.pool or (
                ThreadPoolExecutor(max_workers=len(parts)) if len(parts) > 1 else None), None
            sharding = Shards(shards) if shards > 1 else None
            if first and isinstance(data, Block):  # (its rows made: no feature looked up
                store.feature_map.pack()           #  until the network scores or is saved)
        overflows = 0
        creating = fresh  # (data learned before made its links then: a cluster's rounds)
        shuffle = plan.shuffle
        keys = None
        if shuffle and isinstance(data, Block):
            keys = data.keys if data.keys is not None \
                else example_keys(data.X, data.y_indptr, data.y_targets)
        try:
            with KERNEL_ERRORS:
                try:
                    for epoch in range(epochs):  # (SNoW's early stop: a pass without update)
                        # the salt drawn whatever the data: a fit and a cache draw alike
                        salt = int(engine.rng.integers(0, 2**63 - 1, dtype=np.int64)) \
                            if shuffle else None
                        if isinstance(data, Block):
                            passes: Any = [(data, keyed_order(keys, salt)
                                            if keys is not None and salt is not None
                                            else np.arange(data.n, dtype=np.int64))]
                        else:
                            passes = ((self.block(engine, X, y),
                                       np.arange(X.shape[0], dtype=np.int64) if order is None
                                       else order.astype(np.int64, copy=False))
                                      for X, y, order in data.epoch(salt))
                        counting, recording = fresh and epoch == 0, \
                            epoch == 0 and engine.progressive is not None
                        if sharding is not None:
                            block, order = passes[0]
                            mistakes, updates, epoch_overflows = sharding.epoch(
                                engine, block, order, epoch, report, counting=counting,
                                creating=creating, recording=recording)
                        else:
                            mistakes, updates, epoch_overflows = self._epoch(
                                engine, parts, pool, passes, data.n, epoch, report,
                                counting=counting, creating=creating, recording=recording)
                        overflows += epoch_overflows
                        engine.mistakes.append(mistakes)
                        engine.updates.append(updates)
                        if links:
                            if epoch == 0 and first and by_percent:
                                for part in parts:
                                    engine.keep_top_percent(part.store)
                            # the same examples cannot call for new links again, unless
                            # eligibility let rows in during the pass (or "percent:p"
                            # dropped links)
                            creating = store.policy_code == TOUCHED or \
                                (store.min_count > 1 and not by_percent)
                        if updates == 0 and plan.early_stop:
                            break
                finally:  # an interrupted training still leaves a consistent network
                    if sharding is not None:
                        sharding.close()
                    if pool is not None:  # (put together when the links are read)
                        self.held, self.pool = parts, pool
                    if links:
                        engine.cache.invalidate()
                if not links:
                    return
                if isinstance(data, Block):  # (learned: its rows let go before the pool
                    data.rows = _NONE_ROWS     # is pruned and put together, 4 bytes an entry)
                # (by the parts, at once: fewer links to put together, the same network)
                held = None if self.held is None else [part.store for part in self.held]
                engine.discard(plan.discard, averaged=store.average, stores=held,
                               pool=self.pool)
                if first:
                    self.join(engine)  # (a fit's parts put together now)
                if overflows:
                    engine.overflows += overflows
                    warnings.warn(
                        f"{overflows} weight updates exceeded the largest magnitude kept "
                        f"({store.max_magnitude:g}) and were clamped; use milder "
                        "promotion/demotion, or a bias strength closer to the feature "
                        "strengths", NumericalWarning, stacklevel=4)
        finally:
            if links and engine.kernel.refresh is not None:
                engine.planes_stale = True  # refreshed by the next prediction, save or view

    def parts(self, engine: Engine, data: Block | Blocks, threads: int,
              progress: Any = None, epochs: int = 1) -> int:
        """How many parts ``data`` is learned in on ``threads`` threads.

        Under one-vs-all a target sees every example and changes only on its own
        mistakes: the targets are independent learners, and learned apart they learn
        what they learn together (an example's activation of a target is summed over
        its rows in the example's order, and a rule's step sees the target's weights in
        that order too, however the links lie). The parts see the same examples in the
        same order; their verdicts, put together, give the network's mistakes.

        One part (one thread) when the targets are not independent: SNoW's constraint
        classification (the true target and the winner updated together), a rule whose
        derived planes span its targets (Naive Bayes), examples shown to some targets
        only; for a plugin's rule (its step may keep state across targets); when a
        progress report tests the network every so many examples (SNoW's ``-c k``: the
        parts are put together only at the end); and when the data is small beside
        the network (its features, epochs counted, fewer than a sixteenth of the
        network's links), for splitting the links into parts and putting them together
        would cost more than the threads save. The parts a block was learned in are
        kept for the next (a stream is split once, and put together when its links are
        next read).
        """
        store = engine.store
        if _alone(engine, data, threads, progress) or store.n_targets < 2 \
                or engine.constraint:
            return 1
        if self.held is not None:
            return len(self.held)  # (a stream's blocks go on in the parts they were in)
        if 16 * epochs * data.nnz < int(store.meta[USED]):
            return 1  # (splitting and joining the links would cost more than it saves)
        return min(int(threads), store.n_targets)

    def shards(self, engine: Engine, data: Block | Blocks, threads: int,
               progress: Any = None) -> int:
        """How many shards of its examples ``data`` is learned in on ``threads`` threads,
        when its targets cannot share them (else :meth:`parts` splits the targets).

        SNoW's constraint classification updates the true target and the winner
        together, and a network of fewer targets than threads (a binary spam filter on
        many cores) leaves threads idle: then each thread learns a shard of every
        epoch's examples (consecutive runs of the epoch's order) in a copy of the
        network, and the copies are mixed at the end of the epoch (iterative parameter
        mixing, as the cluster's rounds do: :meth:`mix`). The network learned is the same
        for the same number of threads, not for any number, and not the one thread's.

        One shard when the parts are kept from a block before, for data that comes in blocks (a stream, a feature cache: mixed
        after each block, it would cost more than it saves), for the cases :meth:`parts`
        learns on one thread for other reasons than the targets (a rule that derives its
        planes, a plugin's rule, examples shown to some targets only, a progress report
        every so many examples, a frozen network), for eligibility counts (links made as
        counts pass a threshold), and when the examples hold fewer than
        :data:`REDUNDANT` active features per feature of the network: copying and mixing
        the links then costs more than the shards save.
        """
        store = engine.store
        if _alone(engine, data, threads, progress) or not isinstance(data, Block) \
                or self.held is not None or store.min_count > 1 or store.lcount.shape[0] \
                or engine.percent is not None \
                or not (engine.constraint or store.n_targets < threads):
            return 1
        if data.nnz < REDUNDANT * store.n_rows:
            return 1  # (copying and mixing the links would cost more than it saves)
        return max(1, min(int(threads), data.n // (4 * FEW)))

    def _epoch(self, engine: Engine, parts: list[Any], pool: ThreadPoolExecutor | None,
               passes: Iterable[tuple[Block, np.ndarray]], total: int, epoch: int,
               progress: Progress | None, *, counting: bool, creating: bool,
               recording: bool) -> tuple[int, int, int]:
        """One pass: each block's examples in its ``order`` (in chunks when reporting
        progress), each part on a thread of its own; with ``recording``, each example's
        scores before learning it go to the progressive window."""
        mistakes = updates = overflows = done = 0
        n_targets = engine.n_targets
        links = getattr(engine, "learner", None) is None  # (a learner's: no kernel, no links)
        # a rule that derives its scores (Naive Bayes) predicts each example from the
        # counts refreshed when the examples seen reached 1, 2, 4, 8...: log2(n)
        # refreshes of the links over a stream, however it is cut into calls
        refreshing = links and engine.kernel.refresh is not None
        options: Any = engine.options() if links else None
        for part in parts:
            part.bind(engine)
        for block, order in passes:
            for part in parts:
                part.labels_of(block)
            if refreshing and progress is None:
                cuts = refresh_points(engine.n_examples_seen, order.size)
                pieces = list(zip([0] + cuts, cuts + [order.size]))
            else:
                pieces = chunks(order.size, progress is not None,
                                None if progress is None else progress.every)
            if pool is not None:  # (the parts' activations of a piece: 32 MB at most)
                pieces = _cut(pieces, max(1, (1 << 22) // n_targets))
            for start, stop in pieces:
                seen_before = int(engine.n_examples_seen)
                piece = order[start:stop]
                scores = np.empty((stop - start, n_targets), dtype=np.float64) \
                    if recording else _NO_SCORES
                if pool is None:
                    outcomes = [parts[0].run(engine, block, piece, options, counting, creating,
                                             scores)]
                    chunk_mistakes = outcomes[0].mistakes
                else:  # (a few examples: the parts in turn, here, cost less than threads)
                    outcomes = list((map if stop - start <= FEW else pool.map)(
                        lambda part: part.run(engine, block, piece, options, counting,
                                              creating, scores, judging=True), parts))
                    chunk_mistakes = _mistakes(parts, block, piece, engine.multilabel)
                for outcome in outcomes:
                    updates += outcome.updates
                    overflows += outcome.overflows
                    if outcome.underflows:
                        engine.underflows += outcome.underflows
                engine.n_examples_seen += outcomes[0].examples
                if recording:
                    engine.record(scores, positive_matrix(block.y_indptr, block.y_targets,
                                                          n_targets, piece))
                if refreshing and \
                        int(engine.n_examples_seen).bit_length() > seen_before.bit_length():
                    engine.refresh_planes()  # (the examples seen reached a power of two)
                    parts[0].bind(engine)
                mistakes += chunk_mistakes
                if progress is not None:
                    if links:
                        engine.cache.invalidate()
                    progress(epoch, done + stop, total, chunk_mistakes)
            done += order.size
        return mistakes, updates, overflows



def chunks(n: int, chunked: bool, every: int | None = None) -> list[tuple[int, int]]:
    """Example ranges of one epoch: whole, or cut at 1, 2, 4, 8... and every 16,384, and
    at every multiple of ``every`` (a progress reporter that tests every k examples,
    SNoW's ``-c k``).

    >>> chunks(10, True)
    [(0, 1), (1, 2), (2, 4), (4, 8), (8, 10)]
    >>> chunks(10, True, every=3)
    [(0, 1), (1, 2), (2, 3), (3, 4), (4, 6), (6, 8), (8, 9), (9, 10)]
    """
    if not chunked:
        return [(0, n)]
    bounds = [0]
    mark = 1
    while bounds[-1] < n:
        step = min(mark, bounds[-1] + 16384)
        bounds.append(min(n, max(step, bounds[-1] + 1)))
        if bounds[-1] >= mark:
            mark *= 2
    if every:
        bounds = sorted(set(bounds) | set(range(every, n, every)))
    return list(zip(bounds[:-1], bounds[1:]))


def example_keys(X: Any, y_indptr: np.ndarray, y_targets: np.ndarray) -> np.ndarray:
    """A 64-bit key per example, from its features, strengths and labels only: equal
    examples get equal keys wherever they stand in the data (the sum of splitmix64 of
    each feature, strength and label)."""
    keys = np.empty(X.shape[0], dtype=np.uint64)
    data_bits = np.ascontiguousarray(X.data, dtype=np.float64).view(np.uint64)
    hashing.example_keys(np.asarray(X.indptr), np.asarray(X.indices), data_bits,
                         np.asarray(y_indptr, dtype=np.int64),
                         np.asarray(y_targets, dtype=np.int32), keys)
    return keys


def mixed_keys(keys: np.ndarray, salt: int) -> np.ndarray:
    """``splitmix64(keys ^ salt)``: keys spread uniformly, a salt apart.

    >>> mixed = mixed_keys(np.array([1, 1, 2], dtype=np.uint64), 7)
    >>> bool(mixed[0] == mixed[1]), bool(mixed[0] == mixed[2])
    (True, False)
    """
    mixed = np.empty(keys.shape[0], dtype=np.uint64)
    hashing.mix_keys(np.ascontiguousarray(keys, dtype=np.uint64),
                     np.uint64(int(salt) & 0xFFFFFFFFFFFFFFFF), mixed)
    return mixed


def keyed_order(keys: np.ndarray, salt: int) -> np.ndarray:
    """The examples sorted by their keys mixed with ``salt`` (a seeded shuffle that
    depends on what the examples are, not on their positions)."""
    return np.argsort(mixed_keys(keys, salt), kind="stable")


def refresh_points(seen: int, n: int) -> list[int]:
    """Positions ``0 < p < n`` of a run of ``n`` examples where the examples seen, ``seen``
    before it, reach a power of two.

    >>> refresh_points(0, 10), refresh_points(5, 10)
    ([1, 2, 4, 8], [3])
    """
    points = []
    power = 1
    while power < seen + n:
        if power > seen:
            points.append(power - seen)
        power *= 2
    return [p for p in points if 0 < p < n]


def folds(keys: np.ndarray, k: int, seed: int | None) -> list[np.ndarray]:
    """The ``k`` calibration folds of examples with shuffling ``keys``: the examples in the
    order of their keys mixed with ``seed`` (:func:`keyed_order`),
    cut in ``k`` runs of nearly equal size (the first ``n % k`` one longer). A fold
    depends on what its examples are, not on where they stand: the same data in another
    order, or weighted instead of repeated, is cut the same way.

    >>> [fold.tolist() for fold in folds(np.arange(5, dtype=np.uint64), 2, 0)]
    [[0, 3, 1], [4, 2]]
    """
    return np.array_split(keyed_order(keys, 0 if seed is None else int(seed)), k)


def held_out_scores(net: Any, X: Any, y: Any, targets: Any, labels: LabelIndex,
                    multilabel: bool, progress: Any = None, keys: np.ndarray | None = None,
                    refold: Any = None, *, fold: np.ndarray | None = None,
                    networks: list[Any] | None = None, lowest: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                               np.ndarray | None]:
    """Out-of-fold decision scores of ``net``'s examples, for calibration (its
    ``calibrate``: :func:`folds`, each scored by a network of ``net``'s class and
    parameters trained on the other folds, and freed before the next), their positives,
    which examples were scored (``holdout``: the first fold's), and the examples'
    shuffling keys the folds were drawn by (the final training reuses them); each fold is
    announced to ``progress`` as a phase. ``refold``: how a fold's rows are weighed, from
    its training rows and labels (``Network.fit``'s), whose function may give the
    held-out rows' Naive Bayes evidence by label too (its ``evidence(rows)``, the fold's:
    :meth:`snowpy.Featurizer.refold`), returned last in the scores' layout (None: no
    evidence).

    A cluster's shard gives each example's ``fold`` (drawn over every shard's keys) and
    the fold ``networks`` trained elsewhere (its rounds), each with how it weighs its
    rows (``(network, weigh)``; None: it learned nothing, and scores none): they score
    the examples of their folds, a label one never met is left NaN and each fold's
    lowest score is written to ``lowest``, from which the caller fills it (one process:
    the lowest score its fold saw less 1, as a label missing from the other folds
    scores)."""
    n = X.shape[0]
    y_indptr, y_targets = labels.encode(y, multilabel=multilabel, grow=False)
    positives = positive_matrix(y_indptr, y_targets, len(labels))
    if keys is None:
        keys = example_keys(X, y_indptr, y_targets)
    if networks is not None:
        cut = [np.flatnonzero(fold == f) for f in range(len(networks))]
    else:
        plan = calibrating(net.calibrate)
        cut = folds(keys, plan.folds, net.seed)[:1 if plan.method == "holdout" else None]
        params = net.get_params()
        params["calibrate"] = None
    scores = np.zeros((n, len(labels)), dtype=np.float32)  # (n x labels: half in float32)
    covered = np.zeros(n, dtype=bool)
    evidence: np.ndarray | None = None
    stops = as_progress(progress)  # (the folds' trainings stop when it asks, as Ctrl-C)
    alone: Any = None  # (the one class of a fold that learned one class only)
    for number, held in enumerate(cut, start=1):
        phase(progress, f"calibration fold {number} of {len(cut)}")
        if networks is not None:
            clone, weigh = networks[number - 1] or (None, None)
            if clone is None or held.size == 0:
                continue
        else:
            train = np.setdiff1d(np.arange(n), held)
            if train.size == 0 or held.size == 0:
                continue
            part_y = label_array([y[i] for i in train])
            part_targets = None if targets is None else [targets[i] for i in train]
            part_X, weigh = X[train], None
            if refold is not None:  # (the fold's own counts: none of the held-out labels)
                weigh = refold(part_X, part_y)
                part_X = weigh(part_X)
            clone = type(net)(**params)  # (its options are the network's, checked once)
            with warnings.catch_warnings():  # (said once, below, in calibration's words)
                warnings.filterwarnings("ignore", "y holds one class only", UserWarning)
                fold_labels = label_index(part_y, multilabel)
            if not multilabel and alone is None and len(fold_labels) < 2:
                alone = fold_labels.labels[0]
            clone._begin_fit(part_X, fold_labels, multilabel, False)
            clone._learn(part_X, part_y, part_targets, epochs=int(clone.epochs),
                         shuffle=bool(clone.shuffle), progress=None if stops is None else (
                             lambda *_: stops.check_stop()),  # (the same examples shuffle
                         keys=keys[train], fitting=True, copy=False)  # alike; rows made here)
            del part_X  # (the held-out rows are made when the fold's network is trained)
        held_X = X[held]
        evidence_of = getattr(weigh, "evidence", None)
        if evidence_of is not None:  # (the fold's evidence of its held-out examples)
            if evidence is None:
                evidence = np.zeros((n, len(labels)), dtype=np.float32)
            evidence[held] = evidence_of(held_X).by(labels.labels)
        held_X = held_X if weigh is None else weigh(held_X)
        part_scores = clone.target_scores(held_X)
        # a label missing from the other folds scores as the lowest seen (written where
        # they lie: no second matrix of the held-out scores, examples x labels)
        where = np.array([labels.find(label) for label in clone.classes_.tolist()], np.int64)
        if where.size < len(labels):
            scores[held] = part_scores.min() - 1.0 if lowest is None else np.nan
        if lowest is not None:
            lowest[number - 1] = part_scores.min()
        scores[np.ix_(held, where)] = part_scores
        covered[held] = True
        del clone, part_scores, held_X
    if alone is not None:
        warnings.warn(f"{n} documents are too few to calibrate on {len(cut)} folds: a fold "
                      f"learned from one class only ({alone!r}), and the probabilities say "
                      "little; train on more documents, or with calibrate='none'",
                      CalibrationWarning, stacklevel=4)
    return scores, positives, covered, keys, evidence


class Part:
    """The targets one thread learns: every ``step``-th target of the network from
    ``first``, in a link store of their own (the network's own store when one thread
    learns every target), with their promotions and demotions."""

    def __init__(self, store: LinkStore, first: int, step: int, counts: np.ndarray) -> None:
        self.store = store
        self.first = first
        self.step = step
        self.counts = counts
        self.rule: Any = None  # (bound by bind, once per epoch)
        self.y_indptr = self.y_targets = _NONE_INT
        self.labelled: Block | None = None
        self._raw = _NO_SCORES  # (the activations of a piece: run's judging)
        self.verdict: tuple[np.ndarray, ...] = ()

    def labels_of(self, block: Block) -> None:
        """The block's labels among this part's targets, numbered as the part numbers
        them (target ``first + step * local``)."""
        if self.labelled is block:
            return
        self.labelled = block
        if self.step == 1:
            self.y_indptr, self.y_targets = block.y_indptr, block.y_targets
            return
        mine = block.y_targets % self.step == self.first
        self.y_targets = (block.y_targets[mine] // self.step).astype(np.int32)
        kept = np.concatenate([[0], np.cumsum(mine, dtype=np.int64)])
        self.y_indptr = kept[block.y_indptr]

    def bind(self, engine: Engine) -> None:
        """Bind the rule to this part's pool (once per epoch, and after a refresh)."""
        self.rule = engine.binding(self.store)

    def run(self, engine: Engine, block: Block, order: np.ndarray, options: Options,
            counting: bool, creating: bool, scores: np.ndarray, *,
            judging: bool = False) -> Learned:
        """Learn the examples of ``order``, growing the pool whenever the compiled loop
        asks; this part's columns of ``scores`` (empty: none) receive the progressive
        scores. ``judging``: the part's own verdict on each example before learning it
        is kept in :attr:`verdict` (:func:`_mistakes` puts the parts' together)."""
        store = self.store
        apart = self.step > 1
        local = np.empty((order.size, store.n_targets)) if apart and scores.shape[0] \
            else scores
        raw = self._activations(order.size) if judging else None
        done = Learned()
        position = 0
        while position < order.size:
            outcome = run(store.links(), self.rule, options, block.indptr, block.rows,
                          block.vals, order[position:], self.y_indptr, self.y_targets,
                          block.a_indptr, block.a_targets, store.seen, self.counts,
                          block.max_active, local[position:] if local.shape[0] else local,
                          counting, creating,
                          activations=None if raw is None else raw[position:])
            done.add(outcome, store.seen)
            store.seen = outcome.seen
            if KERNEL_ERRORS.caught:
                raise engine.kernel_exception()
            if outcome.failed:
                raise engine.kernel_failure()
            if outcome.nonfinite:
                example = int(order[position + outcome.processed])
                raise NumericalError(
                    f"rule {engine.rule!r} produced NaN at example {example}; check its "
                    f"parameters {np.asarray(engine.kernel.params).tolist()}")
            position += outcome.processed
            if outcome.need_room:
                store.reserve_links(outcome.need_room)
        if apart and scores.shape[0]:
            scores[:, self.first::self.step] = local
        if raw is not None:
            self.verdict = self._judged(raw, order, engine.multilabel,
                                        float(engine.params["theta"]))
        return done

    def _activations(self, n: int) -> np.ndarray:
        """Room for ``n`` examples' activations of this part's targets, the same buffer
        from piece to piece (pieces of many targets' activations, made afresh each time,
        cost a fault of every page: on 10,000 targets, a third of the epoch's time)."""
        width = self.store.n_targets
        if self._raw.shape[0] < n or self._raw.shape[1] != width:
            self._raw = np.empty((max(n, self._raw.shape[0]), width), dtype=np.float64)
        return self._raw[:n]

    def _judged(self, raw: np.ndarray, order: np.ndarray, multilabel: bool,
                theta: float) -> tuple[np.ndarray, ...]:
        """This part's verdict on each example of ``order`` from its activations ``raw``:
        for a multi-label network, whether any of its targets claims wrongly (at or above
        ``theta`` without the label, or below it with); else its winner, the first of its
        highest activations that are numbers, by the network's number, that activation
        (-inf where none is), and whether target 0's activation is NaN (the compiled
        epoch's test, a scan from target 0 for a higher activation, keeps a NaN there and
        passes over one anywhere else)."""
        if multilabel:
            wrong = raw >= theta
            examples, at = labels_of(self.y_indptr, order)
            wrong[examples, self.y_targets[at]] ^= True
            return (np.asarray(wrong.any(axis=1), dtype=bool),)
        rows = np.arange(order.size)
        best = raw.argmax(axis=1)  # (a part holds a target at least: Driver.parts)
        value = raw[rows, best]
        nan = np.flatnonzero(np.isnan(value))  # (argmax's first NaN: rows rarely hold one)
        if nan.size:
            numbers = np.where(np.isnan(raw[nan]), -np.inf, raw[nan])
            best[nan] = numbers.argmax(axis=1)
            value[nan] = numbers[np.arange(nan.size), best[nan]]
        first_nan = np.isnan(raw[:, 0]) if self.first == 0 else np.zeros(order.size, bool)
        return self.first + self.step * best, value, first_nan


class LearnerPart:
    """The targets of a rule whose state is no weight table, learned together by its
    engine's learner on the calling thread (:meth:`~snowpy.network.learner.LearnerEngine.
    learn`): the one part such an engine learns in."""

    engine: Any = None
    examples: Any = None

    def bind(self, engine: Any) -> None:
        self.engine = engine

    def labels_of(self, block: Block) -> None:
        """The block's rows and targets as the learner reads them."""
        self.examples = self.engine.examples(block.X, block.y_indptr, block.y_targets)

    def run(self, engine: Any, block: Block, order: np.ndarray, options: Any,
            counting: bool, creating: bool, scores: np.ndarray, *,
            judging: bool = False) -> Learned:
        """Learn the examples of ``order``; ``scores`` (empty: none) receive each
        example's scores before it is learned."""
        done = Learned()
        done.mistakes, done.updates = engine.learn(self.examples, order,
                                                   scores if scores.shape[0] else None)
        done.examples = int(order.size)
        if KERNEL_ERRORS.caught:  # (a compiled similarity's, which could not raise)
            first, count = KERNEL_ERRORS.take()
            raise PluginError(f"the learner of rule {engine.rule!r} raised "
                              f"{type(first).__name__}: {first} ({count} time(s)); "
                              "training stopped")
        return done


class Shards:
    """The examples of each epoch learned in ``k`` shards (:meth:`Driver.shards`): shard
    ``i`` takes the run ``order[n * i // k : n * (i + 1) // k]`` of the epoch's order
    and learns it in a copy of the network, on a thread of its own; at the end of the
    epoch the copies are mixed back into the network (iterative parameter mixing,
    McDonald, Hall and Mann, 2010, as the cluster's rounds mix:
    :mod:`snowpy.distributed.mixing`, ``average_over="changed"``): each link moves by
    the mean of its changes, weighted by the shards' examples, over the shards that
    changed it; a link made and left at its initial weight stays there; the averaging
    sums move as the weights do; the per-target state and the averaging clock are the
    shards' weighted means. Mixing is one compiled pass over the rows, reading the
    copies' pools as they lie (:class:`snowpy._core.merging.Mixing`), on the same
    threads."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.pool = ThreadPoolExecutor(max_workers=k)
        #: the network's exact layout, which the next epoch's copies start from (what
        #: the last mixing gave)
        self.start: dict[str, np.ndarray] | None = None
        #: the copies, kept from epoch to epoch with their memory, and the memory the
        #: mixings are written into (two, in turn: the network holds the last one): on
        #: this machine a page of memory touched for the first time costs more than
        #: mixing it (docs/benchmarks.md)
        self.copies: list[LinkStore] = []
        self.mixed: list[dict[str, np.ndarray]] = [{}, {}]

    def epoch(self, engine: Engine, block: Block, order: np.ndarray, epoch: int,
              progress: Progress | None, *, counting: bool, creating: bool,
              recording: bool) -> tuple[int, int, int]:
        """One pass over ``order``'s examples; returns mistakes, updates and clamped
        weights (the figures of :meth:`Driver._epoch`)."""
        store = engine.store
        n_targets, k = store.n_targets, self.k
        cuts = [order.size * i // k for i in range(k + 1)]
        scores = np.empty((order.size, n_targets), dtype=np.float64) if recording \
            else _NO_SCORES
        options = engine.options()
        start = self.start if self.start is not None else \
            store.exact(slots=False, threads=k)
        if not self.copies:
            self.copies = [store.empty_like() for _ in range(k)]
            for copy in self.copies:
                copy.add_targets(n_targets)

        def copied(i: int) -> Part:
            copy = self.copies[i]
            copy.adopt(start, copy=True)
            copy.S[:] = store.S
            copy.seen = store.seen
            return Part(copy, 0, 1, np.zeros((n_targets, 2), np.int64))

        parts = list(self.pool.map(copied, range(k)))
        for part in parts:
            part.bind(engine)
            part.labels_of(block)

        def learn(i: int) -> Learned:
            return parts[i].run(engine, block, order[cuts[i]:cuts[i + 1]], options,
                                counting, creating, scores[cuts[i]:cuts[i + 1]]
                                if recording else _NO_SCORES)

        done = list(self.pool.map(learn, range(k)))
        self.start, raised = self.mix(store, start, [part.store for part in parts],
                                      np.diff(cuts).astype(np.float64),
                                      floor=bool(engine.kernel.multiplicative))
        engine.underflows += raised
        counts = engine.target_counts()
        for part in parts:
            counts += part.counts
        engine.n_examples_seen += sum(d.examples for d in done)
        engine.underflows += sum(d.underflows for d in done)
        mistakes = sum(d.mistakes for d in done)
        if recording:
            engine.record(scores, positive_matrix(block.y_indptr, block.y_targets, n_targets,
                                                  order))
        if progress is not None:
            progress(epoch, order.size, order.size, mistakes)
        return mistakes, sum(d.updates for d in done), sum(d.overflows for d in done)

    def mix(self, store: LinkStore, start: dict[str, np.ndarray], shards: list[LinkStore],
            weights: np.ndarray, *, floor: bool) -> tuple[dict[str, np.ndarray], int]:
        """``store`` (whose links were ``start``) moved by what ``shards`` changed, in
        ``weights`` of examples, the shards' pools read as they lie; returns its exact
        layout, and how many weights were raised to the smallest magnitude kept.

        ``floor``: a multiplicative rule's (Winnow's), whose weights never reach 0. A
        link every shard demoted far (below 2**-53 of its weight, or to the floor) moves
        by the mean of changes that are its whole weight, to 0 or about, where no
        promotion revives it and the next overflowing step makes NaN: it is raised to
        the floor, an underflow, as the rule's own step raises one."""
        mixing = Mixing((start["sizes"], start["target"], start["W"], start["U"]),
                        [(shard.rows.view(np.int32).reshape(-1, 4), shard.target, shard.W,
                          shard.U) for shard in shards], weights, store.initial_weights,
                        bool(store.average), store.n_targets)
        n_rows, k = store.n_rows, self.k
        spans = [(n_rows * t // k, n_rows * (t + 1) // k) for t in range(k)]
        into = self.mixed[0]
        self.mixed.reverse()  # (the next mixing writes into the other)
        sizes = _room(into, "sizes", n_rows, np.int32)
        firsts = [mixing.first(span[0]) for span in spans]
        list(self.pool.map(lambda t: mixing.count(*spans[t], firsts[t], sizes), range(k)))
        links = [int(sizes[:span[0]].sum(dtype=np.int64)) for span in spans]
        total, planes = int(sizes.sum(dtype=np.int64)), store.n_planes
        mixed = {"sizes": sizes, "target": _room(into, "target", total, np.int32),
                 "W": _room(into, "W", total, store.dtype, planes),
                 "U": _room(into, "U", total if store.average else 0, store.dtype, planes),
                 "lcount": np.zeros(0, np.int32)}
        list(self.pool.map(lambda t: mixing.fill(*spans[t], firsts[t], links[t],
                                                 mixed["target"], mixed["W"], mixed["U"]),
                           range(k)))
        raised = 0
        if floor:
            low = np.abs(mixed["W"]) < store.min_magnitude
            raised = int(np.count_nonzero(low))
            mixed["W"][low] = store.min_magnitude
        store.adopt(mixed)
        total_weight = float(weights.sum())
        store.S[:] = sum(w * shard.S for w, shard in zip(weights, shards)) / total_weight
        store.seen = int(round(sum(w * shard.seen for w, shard in zip(weights, shards))
                               / total_weight))
        return mixed, raised

    def close(self) -> None:
        self.pool.shutdown()


def _room(into: dict[str, np.ndarray], name: str, length: int, dtype: Any,
         width: int = 0) -> np.ndarray:
    """``length`` rows (of ``width`` columns, when given) of ``into[name]``, replaced there
    by a larger array when it is short of them: memory written again and again (a
    mixing's, every epoch) faults no new pages in."""
    shape = (length, width) if width else (length,)
    held = into.get(name)
    if held is None or held.shape[0] < length or held.dtype != dtype or held.shape[1:] != shape[1:]:
        held = into[name] = np.empty((max(length, 1),) + shape[1:], dtype)
    return held[:length]


class Learned:
    """What a part's run did: examples learned, mistakes, updates, clamped weights."""

    def __init__(self) -> None:
        self.examples = self.mistakes = self.updates = self.overflows = self.underflows = 0

    def add(self, outcome: Outcome, seen: int) -> None:
        self.examples += outcome.seen - seen
        self.mistakes += outcome.mistakes
        self.updates += outcome.updates
        self.overflows += outcome.overflows
        self.underflows += outcome.underflows


def _split(engine: Engine, store: LinkStore, k: int) -> list[Part]:
    """The network's targets (its ``store``) in ``k`` parts: target ``t`` in part ``t % k``
    (one part: the network's own store)."""
    if k == 1:
        return [Part(store, 0, 1, engine.target_counts())]
    n_rows = store.n_rows
    # (no links: a first epoch)
    layout = store.exact(slots=False, threads=k) if store.n_links else None
    if layout is not None:
        rows = np.repeat(np.arange(n_rows), layout["sizes"])
        owner = layout["target"] % k
    parts = []
    if layout is None:  # (the rows' records are the parts' until they are put together)
        store.release_rows()
    for first in range(k):
        part = store.empty_like()
        part.add_targets(len(range(first, store.n_targets, k)))
        part.S[:] = store.S[first::k]
        if layout is not None:
            mine = owner == first
            part.adopt({name: (layout[name][mine] if layout[name].shape[0] else layout[name])
                        for name in ("W", "U", "lcount")}
                       | {"sizes": np.bincount(rows[mine], minlength=n_rows),
                          "target": (layout["target"][mine] // k).astype(np.int32)})
        else:
            part.reserve_rows(n_rows, exact=True)  # (rows of no links)
            part.n_rows = n_rows
        if store.count.shape[0]:
            part.count[:n_rows] = store.count[:n_rows]
        part.seen = store.seen
        parts.append(Part(part, first, k, np.zeros((part.n_targets, 2), np.int64)))
    return parts


def _merge(engine: Engine, store: LinkStore, parts: list[Part]) -> None:
    """The parts' links, state and counts back in the network's store, each row's links
    by target (its exact layout: the same network as learned on one thread)."""
    k = len(parts)
    merged = exact_layout([part.store for part in parts], store.n_rows, store.n_targets,
                          threads=k, slots=False)
    for part in parts:  # (put together: let go before the network's rows are made)
        part.store.release_links()
    store.adopt(merged)
    counts = engine.target_counts()
    for part in parts:
        store.S[part.first::k] = part.store.S
        counts[part.first::k] += part.counts
    store.replaced()
    store.seen = parts[0].store.seen
    if store.count.shape[0]:
        store.count[:store.n_rows] = parts[0].store.count[:store.n_rows]


def _alone(engine: Engine, data: Block | Blocks, threads: int, progress: Any) -> bool:
    """Whether ``data`` is learned on the calling thread whatever the targets
    (:meth:`Driver.parts` and :meth:`Driver.shards` say why): one thread, a progress
    report every so many examples, a rule that derives its planes, examples shown to
    some targets only, a frozen network, a plugin's rule."""
    report = as_progress(progress)
    return threads <= 1 or (report is not None and bool(report.every)) \
        or engine.kernel.refresh is not None or engine.store.frozen \
        or (isinstance(data, Block) and data.a_indptr.shape[0] > 0) \
        or getattr(engine.kernel.compiled, "implementation", "") != "builtin"


def _cut(pieces: list[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    """``pieces`` cut to at most ``size`` examples each."""
    return [(at, min(at + size, stop)) for start, stop in pieces
            for at in range(start, stop, size)]


def _mistakes(parts: list[Part], block: Block, order: np.ndarray, multilabel: bool) -> int:
    """The examples of ``order`` the network mispredicted before learning them, from its
    parts' verdicts, as the compiled epoch counts them on one thread: winner-take-all,
    target 0 unless a later target's activation is higher (the first of equal ones; a
    NaN of target 0 wins, a NaN elsewhere never does); for multi-label networks, every
    target at or above theta."""
    if multilabel:
        return int(np.logical_or.reduce([part.verdict[0] for part in parts]).sum())
    targets = np.stack([part.verdict[0] for part in parts])
    values = np.stack([part.verdict[1] for part in parts])
    winners = targets[np.lexsort((targets, -values), axis=0)[0], np.arange(order.size)]
    winners[np.logical_or.reduce([part.verdict[2] for part in parts])] = 0
    examples, at = labels_of(block.y_indptr, order)
    right = winners[examples] == block.y_targets[at]
    return int(order.size - np.unique(examples[right]).size)
