"""Training a :class:`~snowpy.SnowClassifier` on a Dask cluster by iterative
parameter mixing (see :mod:`snowpy.distributed.mixing`).

Every round, for the network and (with ``calibrate="cv"``) each calibration
fold's network: each shard's worker trains one epoch from the mixed network,
the workers add the results up as a tree, one of them turns the sum into the
next mixed network, and the client writes it to the checkpoint. Documents and
their features stay on the workers; what travels is link tables.
"""

from __future__ import annotations

import operator
import os
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from snowpy.distributed.cluster import (
    _distributed,
    bytes_moved,
    connect,
    default_shards,
    worker_bytes_sent,
)
from snowpy.distributed.mixing import MIXING, Mixture, State, figures
from snowpy.distributed.shards import Reading, plan_shards
from snowpy.distributed.tasks import (
    Setup,
    counted,
    describe,
    featurise,
    finish,
    held_out,
    size_of,
    train_round,
    weighed,
)
from snowpy.declared import learned
from snowpy.exceptions import ConfigurationError
from snowpy.model_kinds import kind_of
from snowpy.network.options import calibrating
from snowpy.text.featurizer import Featurizer
from snowpy.text.weighing import DocumentFrequencies

__all__ = ["RoundReport", "fit"]

#: Mixtures added up by one task of the tree reduction: pairs, so that the shards of one
#: worker (consecutive, see ``featurise``) are added up where they lie before any moves.
FAN_IN = 2


@dataclass
class RoundReport:
    """What one round did, for progress: passed to ``progress`` after each round."""

    round: int
    rounds: int
    examples: int
    mistakes: int
    updates: int
    links: int
    model_bytes: int
    bytes_between_workers: int
    workers: int
    seconds: float
    models: int = 1
    resumed: bool = False
    #: the longest epoch of one shard this round: what the round cannot do without
    slowest: float = 0.0

    @property
    def bytes_per_worker(self) -> float:
        return self.bytes_between_workers / max(self.workers, 1)

    @property
    def overhead(self) -> float:
        """The share of the round beyond its slowest shard's epoch (moving, restoring,
        gathering and mixing the networks; shards waiting for a worker)."""
        return max(self.seconds - self.slowest, 0.0) / self.seconds if self.seconds > 0 else 0.0


def fit(classifier: Any, data: Any, labels: Any = None, *, cluster: Any = None,
        reading: Reading | None = None, mixing: str = "arithmetic",
        average_over: str = "changed",
        checkpoint: str | os.PathLike | None = None, resume: bool = False,
        progress: Callable[[RoundReport], None] | None = None,
        on_submit: Callable[[int, Any], None] | None = None) -> Any:
    """Train ``classifier`` on a Dask cluster; returns it, trained.

    Parameters
    ----------
    classifier : SnowClassifier
        Its parameters say what to train (``epochs`` are the rounds).
    data : str, dask.bag.Bag or dask.dataframe.DataFrame
        A corpus the workers can read (a path, a glob of files, a registered
        corpus name); or a bag of texts (with ``labels``, a bag of labels
        partitioned alike); or a dataframe with ``text_column`` and
        ``label_column``. Each partition is featurised where it lies.
    cluster : distributed.Client, str or int, optional
        Where to train: a client, a scheduler's address (``"tcp://host:8786"``),
        or the number of worker processes of a new ``LocalCluster`` (default: 1).
    reading : Reading, optional
        How the workers read ``data``: shards (default: the workers' threads,
        :func:`~snowpy.distributed.cluster.default_shards`, a task on each; when
        resuming, the checkpoint's, whatever the workers now), split, format,
        layout, ``on_error``, and a dataframe's text and label columns.
    mixing : {"arithmetic", "geometric"}
        How the shards' changes to the weights are averaged each round: of the
        weights, or of their logarithms (``docs/distributed.md`` has the
        measurements).
    average_over : {"changed", "all"}
        Each link's change is averaged over the shards that changed it, or over
        all shards (a shard that did not change it counting as a change of 0:
        IPM as published).
    checkpoint : path, optional
        A folder where the mixed networks are written after every round (to resume
        from after a crash); it goes when the fit returns (its files, and the folder
        when nothing else is in it).
    resume : bool
        Continue from ``checkpoint``'s last round (the same data and parameters).
    progress : callable, optional
        Called with a :class:`RoundReport` after every round.
    on_submit : callable, optional
        Called with the round and the client once a round's tasks are submitted
        (for tests of faults).

    Examples
    --------
    >>> from snowpy import SnowClassifier                      # doctest: +SKIP
    >>> from snowpy.distributed import fit                     # doctest: +SKIP
    >>> model = fit(SnowClassifier(), "data/part-*.tsv", cluster=4)  # doctest: +SKIP
    """
    if mixing not in MIXING:
        raise ConfigurationError(f"mixing must be one of {', '.join(MIXING)}, got {mixing!r}")
    if average_over not in ("changed", "all"):
        raise ConfigurationError(f"average_over must be 'changed' or 'all', got "
                                 f"{average_over!r}")
    if resume and checkpoint is None:
        raise ConfigurationError("resume needs the checkpoint folder to resume from")
    if getattr(classifier, "keep_names", False):
        raise ConfigurationError("keep_names is not available in distributed training: "
                                 "`snowpy inspect --corpus` names features on demand")
    if getattr(classifier, "evidence", False):
        raise ConfigurationError("evidence=True is stacked by the calibration folds of a fit "
                                 "in one process; a cluster's folds count no ratios by label "
                                 "(train without it, or in one process)")
    if not isinstance(classifier.rule, str):
        raise ConfigurationError("a rule given as an object trains in one process: a "
                                 "cluster's workers find their rule by its name (register "
                                 "it in a plugin, and name it)")
    if classifier.calibrate == "progressive":
        raise ConfigurationError("calibrate='progressive' follows a stream in one process; "
                                 "a distributed fit calibrates with 'cv' or 'holdout'")
    network = classifier.make_network()
    network.check_options()  # a bad option fails before the cluster starts
    _check_mixable(network)
    reading = Reading() if reading is None else reading
    if resume and reading.shards is None and checkpoint is not None:
        from snowpy.distributed.checkpoints import Checkpoint

        # (not twice today's workers)
        reading = replace(reading, shards=Checkpoint(Path(checkpoint), {}).shards())
    with connect(cluster) as connected:
        run = _Run(connected, classifier, mixing, progress, on_submit,
                   Path(checkpoint) if checkpoint is not None else None, average_over)
        run.featurise(data, labels, reading)
        run.train(resume)
        trained = run.finished()
    if checkpoint is not None:  # (the run ended: nothing to resume)
        from snowpy.distributed.checkpoints import Checkpoint

        Checkpoint(Path(checkpoint), {}).complete()
    return trained


class _Run:
    """One distributed fit: its client, shards, models and checkpoint."""

    def __init__(self, client: Any, classifier: Any, mixing: str, progress: Any,
                 on_submit: Any, checkpoint: Path | None, average_over: str = "changed"
                 ) -> None:
        self.client = client
        self.average_over = average_over
        self.classifier = classifier
        self.params = classifier.get_params()
        self.calibration = calibrating(self.params["calibrate"])
        self.mixing = mixing
        self.progress = progress
        self.on_submit = on_submit
        self.checkpoint = checkpoint
        self.token = uuid.uuid4().hex[:8]
        self.data: list[Any] = []
        #: with a front end that weighs by document frequency: every document's, the
        #: front end fitted on them (a future: a worker's) and each calibration fold's
        #: own (futures)
        self.frequencies: DocumentFrequencies | None = None
        self.front_end: Any = None
        self.refolds: list[Any] = []
        self._raw: list[Any] = []  # (the shards before the weighing)
        self.skipped = 0
        self.messages: list[str] = []

    # --------------------------------------------------------------- reading
    def featurise(self, data: Any, labels: Any, reading: Reading) -> None:
        client = self.client
        addresses = sorted(client.scheduler_info()["workers"])
        if not addresses:
            raise ConfigurationError("the Dask cluster has no workers")
        self.n_workers = len(addresses)
        front_end = self._front_end()
        if isinstance(data, (str, os.PathLike)):
            count = reading.shards if reading.shards is not None else \
                default_shards(client.scheduler_info()["workers"])
            self.source = str(data)
            plan = client.submit(plan_shards, str(data), count, split=reading.split,
                                 format=reading.format, layout=reading.layout,
                                 on_error=reading.on_error, pure=False)
            planned = plan.result()
            # consecutive shards on one worker: the tree adds them up before anything moves
            self.data = [client.submit(featurise, shard, front_end, workers=addresses[
                i * len(addresses) // len(planned)], allow_other_workers=True,
                key=f"snowpy-featurise-{i}-{self.token}") for i, shard in enumerate(planned)]
            self.shard_names = [shard.describe() for shard in planned]
        else:
            import dask

            parts = _partitions(data, labels, reading.text_column, reading.label_column)
            self.source = f"{type(data).__name__} of {len(parts)} partitions"
            self.data = client.compute([dask.delayed(featurise)(part, front_end)
                                        for part in parts])
            self.shard_names = [f"partition {i}" for i in range(len(parts))]
        k = self.calibration.folds if self.calibration.cross_fits else 0
        if k:
            self._fold(k)
        described = client.gather(self._beside(describe, k))
        self.examples = [int(d[0]["n"]) for d in described]
        if not sum(self.examples):
            raise ConfigurationError(f"{self.source}: no documents found")
        self.skipped = sum(int(d[0]["skipped"]) for d in described)
        self.messages = [m for d in described for m in d[0]["messages"]][:3]
        self.multilabel = any(d[0]["multilabel"] for d in described)
        self.begin = self._begins([d[0] for d in described])
        # each fold's network starts from the other folds' labels and active features
        self.fold_begins = [self._begins([shard[g + 1] for shard in described
                                          for g in range(k) if g != f]) for f in range(k)]
        if self.params.get("idf"):
            self._weigh(k)

    def _front_end(self) -> Featurizer:
        """The classifier's front end, of one thread (a worker's)."""
        return self.classifier.make_featurizer().set_params(n_jobs=1)

    def _beside(self, function: Callable[..., Any], *args: Any,
                each: list[dict[str, Any]] | None = None) -> list[Any]:
        """``function(shard, *args)`` of every shard (and ``each`` shard's keywords), run
        where the shard lies."""
        client = self.client
        where = client.who_has(self.data)
        return [client.submit(function, part, *args, **(each[i] if each else {}), pure=False,
                              workers=list(where.get(part.key, ())) or None,
                              allow_other_workers=bool(where.get(part.key)))
                for i, part in enumerate(self.data)]

    def _begins(self, described: list[dict[str, Any]]) -> tuple[list[Any], float]:
        """What a network starts from, as one process starts it, given the figures of its
        examples' parts (:func:`~snowpy.distributed.tasks.describe`): a target per label
        met, and the active features per example (SNoW's rho)."""
        from snowpy.network.labels import sorted_labels

        return sorted_labels([label for d in described for label in d["labels"]], False), \
            sum(d["nnz"] for d in described) / max(sum(d["n"] for d in described), 1)

    def _fold(self, k: int) -> None:
        """Each example's calibration fold of ``k``, drawn as one process draws them
        (:func:`snowpy.network.driver.folds` of every shard's keys at once, the shards
        in order: the same folds), given to its shard. The client holds every example's
        key for this, 8 bytes each."""
        from snowpy.network.driver import folds

        keys = self.client.gather(self._beside(operator.attrgetter("keys")))
        assigned = np.empty(sum(map(len, keys)), np.int16)  # (up to MAX_FOLDS folds)
        for fold, held in enumerate(folds(np.concatenate(keys), k,
                                          int(self.params["seed"] or 0))):
            assigned[held] = fold
        cuts = np.cumsum([0, *map(len, keys)])
        self.data = self._beside(replace, each=[{"fold": assigned[cuts[i]:cuts[i + 1]],
                                                 "cache": {}} for i in range(len(keys))])

    def _weigh(self, k: int) -> None:
        """The front end fitted on every shard's document frequencies, counted where the
        shards lie (:meth:`snowpy.Featurizer.counted`) and added up
        (:meth:`~snowpy.Featurizer.fit`: the frequencies a fit counts in memory), and
        each shard weighed by it where it lies; with ``k`` calibration folds, each
        fold's own frequencies, added up over the shards likewise, which its network's
        rows are weighed by (:meth:`~snowpy.Featurizer.refold`, as in one process)."""
        client = self.client
        # (added up on a worker, a task: the weighing tasks take them from there, not in
        # the graph from the client, and a shard lost with its worker is weighed again
        # from them; scattered data would have no lineage)
        front_end = self._front_end()
        self.front_end = client.submit(Featurizer.fit, self._front_end(),
                                       frequencies=self._beside(counted, front_end),
                                       pure=False)
        self.refolds = [client.submit(Featurizer.related, self._front_end(),
                                      self._beside(counted, front_end, f), pure=False)
                        for f in range(k)]
        # (the unweighed shards are held too: a shard lost with its worker is weighed
        # again from them, which the scheduler could not do once it forgot them)
        self._raw = self.data
        self.data = self._beside(weighed, self.front_end)
        self.frequencies = self.front_end.result().frequencies_
        _distributed().wait(self.data)  # (where each shard lies decides the rounds' tasks)

    # -------------------------------------------------------------- training
    def _start(self, labels: list[Any], mean_active: float, refolded: bool = False
               ) -> tuple[Any, Setup]:
        """The untrained network a model starts from (a target per label of ``labels``,
        ``mean_active`` features per example; ``refolded``: a calibration fold's that
        learns rows the fold weighed, which name their features by number:
        :meth:`snowpy.Featurizer.refold`), and its rounds' setup."""
        from snowpy.network.state import network_state

        width = len(self.frequencies) + 1 if refolded and self.frequencies is not None \
            else 1 << int(self.params["bits"])
        net = self.classifier.make_network().start(width, labels, multilabel=self.multilabel,
                                                   mean_active=mean_active)
        reference = net.engine_.store.initial_weights  # (docs/distributed.md: why not the absent planes)
        setup = Setup(self.params, self.mixing, np.asarray(reference, dtype=np.float64),
                      int(self.params["seed"] or 0), self.average_over)
        return network_state(net), setup

    def train(self, resume: bool) -> None:
        from snowpy.distributed.checkpoints import Checkpoint

        folds = self.calibration.folds if self.calibration.cross_fits else 0
        names = ["network"] + [f"fold-{f + 1}" for f in
                               range(1 if self.calibration.method == "holdout" else folds)]
        self.fold_by_name = {name: (-1 if name == "network" else int(name[5:]) - 1)
                        for name in names}
        states, self.setups = {}, {}
        for name, fold in self.fold_by_name.items():
            states[name], self.setups[name] = self._start(
                *(self.begin if fold < 0 else self.fold_begins[fold]), refolded=fold >= 0)
        self.setup = self.setups["network"]
        epochs = int(self.params["epochs"])
        done = {name: False for name in names}
        first = 0
        keeper = Checkpoint(self.checkpoint, self._fingerprint()) if self.checkpoint else None
        if resume and keeper is not None:
            first, states, done = keeper.load(names)
        client = self.client
        # the networks the first round starts from are tasks, not scattered data: every
        # network after them then has a lineage back to them and the shards, and one lost
        # with its worker is computed again (Dask's memory manager keeps one copy of a
        # result, whatever was replicated; scattered data has no lineage to rerun)
        # (each network as its copies, by the worker that made each: one at the start)
        futures = {name: {None: client.submit(_given, state,
                                              key=f"snowpy-start-{name}-{self.token}")}
                   for name, state in states.items()}
        self.reports: list[RoundReport] = []
        # a checkpoint is written by a thread of its own, overlapping the next round; a
        # client killed meanwhile leaves the previous one, from which resuming is exact
        saver = ThreadPoolExecutor(max_workers=1, thread_name_prefix="snowpy-checkpoint")
        writing: Any = None
        for r in range(first, epochs):
            active = [name for name in names if not done[name]]
            if not active:
                break
            began, sent = time.perf_counter(), worker_bytes_sent(client)
            where = client.who_has(self.data)
            mixed = {}
            # the workers that hold shards: each makes the next network for itself from
            # the round's sum, so that no network travels between them, only the sums
            holders = sorted({sorted(where[part.key])[0] for part in self.data
                              if where.get(part.key)})
            for name in active:
                copies = futures[name]
                fold = self.fold_by_name[name]
                refold = (self.front_end, self.refolds[fold]) if fold >= 0 and self.refolds \
                    else ()
                parts = [client.submit(train_round, _near(copies, where.get(part.key, ())), part,
                                       self.setups[name], r, fold, *refold, workers=list(
                                           where.get(part.key, ())) or None,
                                       allow_other_workers=True,
                                       key=f"snowpy-train-{name}-r{r}-s{i}-{self.token}")
                         for i, part in enumerate(self.data)]
                total = _tree(client, parts, f"{name}-r{r}-{self.token}")
                mixed[name] = (total, {
                    worker: client.submit(finish, total, _near(copies, (worker,)),
                                          self.setups[name], r,
                                          workers=None if worker is None else [worker],
                                          allow_other_workers=True,
                                          key=f"snowpy-finish-{name}-r{r}-w{k}-{self.token}")
                    for k, worker in enumerate(holders or [None])})
            if self.on_submit is not None:
                self.on_submit(r, client)
            stats = client.gather({name: client.submit(_stats, *total, pure=False)
                                   for name, (total, _) in mixed.items()})
            for name, (_, copies) in mixed.items():
                futures[name] = copies
                done[name] = (bool(self.params["early_stop"]) and
                              stats[name]["updates"] == 0) or r == epochs - 1
            now = worker_bytes_sent(client)
            moved = bytes_moved(sent, now)
            links, size = client.submit(size_of, _near(futures["network"], ()),
                                        pure=False).result() \
                if "network" in mixed else (0, 0)
            report = RoundReport(
                r + 1, epochs, int(stats.get("network", {}).get("n_examples_seen", 0)),
                int(stats.get("network", {}).get("mistakes", 0)),
                int(stats.get("network", {}).get("updates", 0)), links, size, moved,
                len(now) or self.n_workers, time.perf_counter() - began, models=len(active),
                resumed=bool(first) and r == first,
                slowest=max(float(made.get("slowest", 0.0)) for made in stats.values()))
            if keeper is not None:  # written while the next round runs (one at a time)
                if writing is not None:
                    writing.result()
                # each network fetched from the workers as it is written: the client
                # holds one network at a time, not every network of the round
                writing = saver.submit(keeper.save, r + 1, {
                    name: partial(client.gather, _near(futures[name], ())) for name in active},
                    dict(done))
            self.reports.append(report)
            if self.progress is not None:
                self.progress(report)
        if writing is not None:
            writing.result()  # (the last round's checkpoint is on disk before fit returns)
        saver.shutdown()
        self.futures = futures
        self.keeper = keeper

    # -------------------------------------------------------------- the end
    def finished(self) -> Any:
        from snowpy.calibration import Calibration
        from snowpy.distributed.tasks import discarded
        from snowpy.network import Network
        from snowpy.network.calibrating import normalisation_of
        from snowpy.network.state import restore_network

        client, classifier = self.client, self.classifier
        finals = {name: client.submit(discarded, _near(copies, ()), self.setups[name],
                                      pure=False)
                  for name, copies in self.futures.items()}
        header, arrays = client.gather(finals["network"])
        net = restore_network(Network, header, {k: np.array(v) for k, v in arrays.items()},
                              "the mixed network")
        fold_states = [finals[name] for name in finals if name != "network"]
        if fold_states:
            total = sum(self.examples)
            parts = client.gather(self._beside(
                held_out, fold_states, self.setup, total, self.begin[0], self.multilabel,
                *([self.front_end, *self.refolds] if self.refolds else [])))
            # a label missing from the other folds scores as the lowest its fold saw on
            # any shard, less 1 (NaN marks it: one process's held_out_scores)
            lowest = np.min([p[3] for p in parts], axis=0) - 1.0
            fold_of = np.concatenate([p[2] for p in parts])
            scores = np.concatenate([p[0] for p in parts])
            positives = np.concatenate([p[1] for p in parts])
            missing = np.isnan(scores)
            scores[missing] = np.broadcast_to(lowest[fold_of][:, None], scores.shape)[missing]
            net.calibration_ = Calibration.fit(
                scores, positives, normalize=normalisation_of(net.engine_, self.multilabel),
                method=str(self.calibration.method))
        classifier.featurizer_ = classifier.make_featurizer() if self.frequencies is None \
            else classifier.make_featurizer().fit(frequencies=self.frequencies)
        classifier.network_ = net
        classifier.distributed_ = {
            "source": self.source, "shards": len(self.data), "workers": self.n_workers,
            "mixing": self.mixing, "average_over": self.average_over,
            "examples": self.examples, "skipped": self.skipped,
            "messages": self.messages,
            "rounds": [vars(report) for report in self.reports]}
        return classifier

    def _fingerprint(self) -> dict[str, Any]:
        from snowpy.network.state import plain

        return {"source": self.source, "shards": self.shard_names, "examples": self.examples,
                # (the fold scheme, and where a fold's network starts: one process's)
                "folds": "by rank of the keys, each started from the others",
                "params": plain(learned(self.params)),
                "mixing": self.mixing, "average_over": self.average_over,
                "labels": plain(self.begin[0])}


def _tree(client: Any, parts: list[Any], name: str) -> list[Any]:
    """``parts`` (mixture futures) added up on the workers as a tree of fan-in
    :data:`FAN_IN`, in shard order at every level (the same bits every run), up to its
    last level: at most :data:`FAN_IN` sums, which each worker adds up itself as it makes
    the next network (:func:`~snowpy.distributed.tasks.finish`), so that no worker waits
    for another to add them first."""
    level = 0
    while len(parts) > FAN_IN:
        parts = [client.submit(Mixture.combine, parts[i:i + FAN_IN],
                               key=f"snowpy-mix-{name}-l{level}-{i}")
                 for i in range(0, len(parts), FAN_IN)]
        level += 1
    return parts


def _near(copies: dict[Any, Any], workers: Any) -> Any:
    """The copy of a network (its future) made on the first of ``workers`` that made one,
    else the first copy: the copies are the same network, to the bit."""
    for worker in sorted(workers):
        if worker in copies:
            return copies[worker]
    return copies[min(copies, key=lambda worker: "" if worker is None else worker)]


def _given(state: State) -> State:
    """``state`` as a task's result (which, unlike scattered data, can be computed again)."""
    return state


def _stats(*mixtures: Mixture) -> dict[str, float]:
    """The round's figures from the last level of its tree (added up as
    :meth:`Mixture.combine` adds them, without the links)."""
    return {**figures(list(mixtures)), "slowest": max(m.slowest for m in mixtures)}


def _partitions(data: Any, labels: Any, text_column: str, label_column: str) -> list[Any]:
    """One delayed ``(texts, labels)`` per partition of a bag pair or a dataframe."""
    import dask

    if hasattr(data, "columns"):  # a dask dataframe
        missing = [c for c in (text_column, label_column) if c not in data.columns]
        if missing:
            raise ConfigurationError(f"the dataframe has no column {missing[0]!r} (columns: "
                                     f"{', '.join(map(str, data.columns))})")
        return [dask.delayed(_frame_part)(part, text_column, label_column)
                for part in data.to_delayed()]
    if labels is None:
        raise ConfigurationError("a bag of texts needs a bag of labels beside it")
    if data.npartitions != labels.npartitions:
        raise ConfigurationError(f"the texts have {data.npartitions} partitions and the "
                                 f"labels {labels.npartitions}: partition them alike")
    return [dask.delayed(tuple)([t, l]) for t, l in zip(data.to_delayed(),
                                                         labels.to_delayed())]


def _frame_part(frame: Any, text_column: str, label_column: str) -> tuple[list, list]:
    return frame[text_column].tolist(), frame[label_column].tolist()


def _check_mixable(network: Any) -> None:
    """Mixing averages weight changes: a rule that counts (Naive Bayes) would need sums."""
    from snowpy.plugins import get_rule
    from snowpy.rules.spec import BuildContext

    if kind_of(network) == "cloud":
        raise ConfigurationError("a cloud of rules trains in one process; distributed "
                                 "training mixes the networks of one rule")
    spec = get_rule(network.rule)
    params = spec.validate(network.rule_params)
    kernel = spec.make_kernel(params, BuildContext(1.0, 1), compile=False)
    if not kernel.mistake_driven or kernel.refresh is not None:
        raise ConfigurationError(
            f"rule {spec.name!r} learns from every example and derives its weights from "
            "counts; parameter mixing averages weight changes, so it is not available in "
            "distributed training (train it in one process: counting is one fast pass)")
