"""What runs on the workers: a shard featurised by the classifier's front end and
counted, then weighed; a round of the driver on it; its held-out examples scored.

Plain functions of plain arguments (no Dask here), deterministic: Dask may run
any of them twice (a worker lost mid-round) and gets the same result. Each step is
one process's own, run on a shard: the front end's (:class:`snowpy.Featurizer`'s
``rows``, ``counted``, ``weighed`` and ``refold``) and the driver's
(:meth:`snowpy.network.driver.Driver.fit`,
:func:`~snowpy.network.driver.held_out_scores`); what is the cluster's is where a
shard lies and how the rounds are mixed.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from snowpy.corpora.corpus import Read
from snowpy.corpora.documents import Problems
from snowpy.distributed.mixing import Mixture, State
from snowpy.distributed.shards import Shard, read_shard

__all__ = ["Setup", "ShardData", "counted", "describe", "discarded", "featurise", "finish",
           "held_out", "train_round", "weighed"]

#: Rows of out-of-fold scores kept for calibration, all shards together (a sample,
#: by the examples' keys, beyond it).
CALIBRATION_ROWS = 200_000


@dataclass(frozen=True)
class Setup:
    """What every round's tasks share: the classifier's parameters and the mixing."""

    params: dict[str, Any]          # SnowClassifier.get_params()
    mixing: str
    reference: np.ndarray           # the planes a missing link counts as, in mixing
    seed: int
    average_over: str = "changed"   # a link's change averaged over: "changed" or "all" shards


@dataclass
class ShardData:
    """A featurised shard, kept in a worker's memory across rounds."""

    X: sp.csr_matrix
    labels: list[Any]
    keys: np.ndarray                # uint64: the examples' shuffling keys
    skipped: int
    messages: list[str]
    #: each example's calibration fold (:func:`snowpy.network.driver.folds`, drawn over
    #: every shard's keys at once: one process's folds), None without cross-fitting
    fold: np.ndarray | None = None
    #: made in a network's first round, read in every round after it: by a network's
    #: labels and fold, the labels as its targets (CSR); by a calibration fold, how it
    #: weighs the shard's rows (:meth:`snowpy.Featurizer.refold`)
    cache: dict[Any, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])


def featurise(source: Any, featurizer: Any) -> ShardData:
    """Read (a :class:`Shard`) or take (``(texts, labels)``) a shard's documents and
    featurise them with the classifier's front end (``featurizer``, of one thread: this
    worker's), as one process does a corpus (:func:`snowpy.files.featurised`): its rows
    before the document frequencies (the shards' counts are added up first), labels and
    shuffling keys."""
    from snowpy.files import featurised

    if isinstance(source, Shard):
        read = read_shard(source, featurizer)
    else:
        texts, labels = map(list, source)
        if len(texts) != len(labels):
            from snowpy.exceptions import ConfigurationError

            raise ConfigurationError(f"a partition holds {len(texts)} texts but "
                                     f"{len(labels)} labels")
        read = Read(texts, labels, Problems("raise"), None)
    read = featurised(read, featurizer)
    labels = read.labels.tolist() if isinstance(read.labels, np.ndarray) else read.labels
    return ShardData(read.rows.tocsr(), labels, read.keys, read.problems.skipped,
                     read.problems.messages[:3])


def counted(data: ShardData, featurizer: Any, fold: int = -1) -> Any:
    """What the front end counts of the shard's documents
    (:meth:`snowpy.Featurizer.counted`), which :meth:`~snowpy.Featurizer.related` adds
    up with the other shards': of every one, or of those that train calibration fold
    ``fold``'s network (the others)."""
    if fold < 0:
        return featurizer.counted(data.X, data.labels)
    rows = np.flatnonzero(data.fold != fold)
    return featurizer.counted(data.X[rows], [data.labels[i] for i in rows])


def weighed(data: ShardData, featurizer: Any) -> ShardData:
    """The shard with its rows weighed by the front end ``featurizer`` fitted on every
    shard's counts (:meth:`snowpy.Featurizer.weighed`)."""
    return replace(data, X=_own(featurizer).weighed(data.X).tocsr(), cache={})


def _own(featurizer: Any) -> Any:
    """The fitted front end as this task's own: the tasks on a worker's threads share a
    result, and weighing makes (and a fold's weighing packs) its counts' arrays as it
    goes."""
    return copy.deepcopy(featurizer)


def describe(data: ShardData, folds: int = 0) -> list[dict[str, Any]]:
    """What the client starts a network from, as one process starts it: the labels met
    (:func:`~snowpy.network.labels.sorted_labels`), the examples and their active
    features, of the whole shard, then of each of its ``folds`` calibration folds (a
    fold's network starts from the other folds'); and the problems met reading it."""
    from snowpy.network.labels import is_multilabel, sorted_labels

    multilabel = bool(data.labels) and is_multilabel(data.labels)
    return [{"labels": sorted_labels([data.labels[i] for i in rows], multilabel),
             "multilabel": multilabel, "n": int(rows.size),
             "nnz": int(np.diff(data.X.indptr)[rows].sum()),
             "skipped": data.skipped, "messages": data.messages}
            for rows in [np.arange(data.n)] + [np.flatnonzero(data.fold == f)
                                               for f in range(folds)]]


def _weighing(data: ShardData, fold: int, featurizer: Any, frequencies: Any) -> Any:
    """How calibration fold ``fold``'s network weighs the shard's rows, by its own
    document ``frequencies`` (:meth:`snowpy.Featurizer.refold` of them: the weighing made
    once a fold)."""
    if fold not in data.cache:
        data.cache[fold] = _own(featurizer).refold(frequencies)
    return data.cache[fold]


def _network(state: State, where: str) -> Any:
    from snowpy.network import Network
    from snowpy.network.state import restore_network

    header, arrays = state
    return restore_network(Network, header, arrays, where, trusted=True)


def size_of(state: State) -> tuple[int, int]:
    """``(links, bytes)`` of a network's state (for the round's report)."""
    return int(state[1]["link_targets"].size), sum(int(np.asarray(a).nbytes)
                                                  for a in state[1].values())


def train_round(state: State, data: ShardData, setup: Setup, round: int, fold: int,
                featurizer: Any = None, frequencies: Any = None) -> Mixture:
    """One epoch of the driver (:meth:`~snowpy.network.driver.Driver.fit`) from the
    network ``state`` on this shard (without calibration fold ``fold`` when ``fold >=
    0``, its rows weighed by the fold's own document ``frequencies`` when it has them,
    through the fitted front end ``featurizer``), as a mixture weighted by the examples
    learned."""
    from snowpy.network.driver import Driver, Plan
    from snowpy.network.engine import Block
    from snowpy.network.state import network_state

    net = _network(state, f"the mixed network of round {round}")
    rows = np.arange(data.n)
    if fold >= 0:
        assert data.fold is not None, "a fold network's shard has its examples' folds"
        rows = np.flatnonzero(data.fold != fold)
    X = data.X[rows] if rows.size != data.n else data.X
    if frequencies is not None:
        X = _weighing(data, fold, featurizer, frequencies)(X).tocsr()
    learned = net.engine_
    store = learned.store
    learned.rng = rng = np.random.default_rng(setup.seed)  # the salts Network.fit draws:
    for _ in range(round):                                  # one shard trains as fit does
        rng.integers(0, 2**63 - 1, dtype=np.int64)
    y_indptr, y_targets = _targets(data, learned.labels, net.multilabel_,
                                   f"{state[0]['labels']!r} {fold}", rows)
    before = learned.target_counts().copy()
    figures = (net.n_examples_seen_, net.engine_.overflows, net.engine_.underflows)
    began = time.perf_counter()
    if rows.size:
        block = Block(X, store.training_rows(X), y_indptr, y_targets, None, None,
                      data.keys[rows])
        Driver().fit(learned, block, Plan(1, bool(setup.params["shuffle"]), False),
                     fresh=round == 0)
    seconds = time.perf_counter() - began
    mistakes = net.mistakes_[-1] if rows.size else 0
    updates = net.updates_[-1] if rows.size else 0
    stats = {"mistakes": mistakes, "updates": updates,
             "n_examples_seen": net.n_examples_seen_ - figures[0],
             "overflows": net.engine_.overflows - figures[1],
             "underflows": net.engine_.underflows - figures[2]}
    return Mixture.of_network(network_state(net, by_id=False), state, setup.reference,
                              setup.mixing,
                              float(rows.size), learned.target_counts() - before, stats,
                              counted=round == 0, seconds=seconds)


def _targets(data: ShardData, index: Any, multilabel: bool, key: str, rows: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """The targets of the shard's examples ``rows`` (CSR: ``indptr``, ``targets``) in a
    network of labels ``index``, encoded once for all its rounds (``key``: the network's
    labels as text and the rows' fold); a fold's network meets only its own rows' labels,
    which it knows."""
    from snowpy.network.labels import encode_labels, label_array

    if key not in data.cache:  # (single labels all str or all int: encoded as an array)
        labels = data.labels if rows.size == data.n else [data.labels[i] for i in rows]
        data.cache[key] = encode_labels(index, label_array(labels), multilabel)
    return data.cache[key]


def finish(mixtures: list[Mixture], start: State, setup: Setup, round: int) -> State:
    """The mixed network of a round: the sum of ``mixtures`` (the last level of the
    round's tree, in shard order) made a network, with SNoW's eligibility by percent
    applied after the first round."""
    from snowpy.network.options import eligibility_of
    from snowpy.network.state import network_state

    state = Mixture.combine(mixtures).state(start, setup.reference, setup.mixing,
                                            per_link=setup.average_over == "changed")
    if round > 0 or eligibility_of(setup.params["eligibility"]).percent is None:
        return state
    net = _network(state, f"the mixed network of round {round}")
    net.engine_.keep_top_percent()
    return network_state(net)


def discarded(state: State, setup: Setup) -> State:
    """The last mixed network with SNoW's ``discard`` applied, as ``fit`` ends."""
    from snowpy.network.state import network_state

    if setup.params.get("discard") is None:
        return state
    net = _network(state, "the mixed network")
    net.engine_.discard(net.discard, averaged=bool(net.average))
    return network_state(net)


def held_out(data: ShardData, states: list[State], setup: Setup, total: int,
             labels: list[Any], multilabel: bool, featurizer: Any = None, *frequencies: Any
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Out-of-fold scores of this shard's examples by the network's ``labels`` (sets of
    them: ``multilabel``): :func:`snowpy.network.driver.held_out_scores` of the fold
    networks ``states``, each scoring its fold's examples on rows weighed as it learned
    them (``frequencies[f]``), a label it never met NaN; and of the examples scored,
    their positives and folds, and each fold network's lowest score here (the client
    fills the NaN from every shard's). A sample by key when the corpus has more than
    :data:`CALIBRATION_ROWS` examples."""
    from snowpy.network.driver import held_out_scores, mixed_keys
    from snowpy.network.labels import LabelIndex

    assert data.fold is not None
    keep = data.fold < len(states)  # (holdout: the first fold only)
    if total > CALIBRATION_ROWS:
        share = np.uint64(int(CALIBRATION_ROWS / total * 2.0**63) * 2)
        keep &= mixed_keys(data.keys, setup.seed + 0xCA11B) < share
    rows = np.flatnonzero(keep)
    networks = []
    for f, state in enumerate(states):
        net = _network(state, f"calibration network {f + 1}")
        networks.append((net, None if not frequencies else _weighing(
            data, f, featurizer, frequencies[f])) if len(net.classes_) else None)
    lowest = np.full(len(states), np.inf)
    scores, positives, covered, _, _ = held_out_scores(
        None, data.X[rows], [data.labels[i] for i in rows], None, LabelIndex(labels),
        multilabel, keys=data.keys[rows], fold=data.fold[rows], networks=networks,
        lowest=lowest)
    return scores[covered], positives[covered], data.fold[rows][covered], lowest
