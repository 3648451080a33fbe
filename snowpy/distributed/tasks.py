"""What runs on the workers: featurising a shard, one round of training on it,
scoring its held-out examples, predicting it.

Plain functions of plain arguments (no Dask here), deterministic: Dask may run
any of them twice (a worker lost mid-round) and gets the same result.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from snowpy.distributed.mixing import Mixture, State
from snowpy.distributed.shards import Shard, read_shard, shard_rows

__all__ = ["Setup", "ShardData", "describe", "discarded", "featurise", "finish",
           "fold_frequencies", "held_out", "keys_of", "refolded_frequencies", "train_round",
           "with_folds"]

#: Rows of out-of-fold scores kept for calibration, all shards together (a sample,
#: by the examples' keys, beyond it).
CALIBRATION_ROWS = 200_000



@dataclass(frozen=True)
class Setup:
    """What every round's tasks share: the classifier's parameters and the mixing."""

    params: dict[str, Any]          # SnowClassifier.get_params()
    mixing: str
    reference: np.ndarray           # the planes a missing link counts as, in mixing
    folds: int                      # calibration folds trained beside the network (0: none)
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
    #: the labels as targets (CSR), by a network's labels and fold: encoded in its first
    #: round, read in every round after it
    targets: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    #: each example's calibration fold (:func:`snowpy.network.driver.folds`, drawn over
    #: every shard's keys at once: one process's folds), None without cross-fitting
    fold: np.ndarray | None = None
    #: how each calibration fold weighs the shard's rows (made in the first round, used in
    #: every round after it and in the held-out scoring)
    weighs: dict[int, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])


def featurise(source: Any, params: dict[str, Any]) -> ShardData:
    """Read (a :class:`Shard`) or take (``(texts, labels)``) a shard's documents and
    featurise them with the classifier's front end, in this worker's one thread."""
    from snowpy.classifier import SnowClassifier
    from snowpy.text.featurizer import as_documents
    from snowpy.text.keys import document_keys

    featurizer = SnowClassifier(**{**params, "n_jobs": 1}).make_featurizer()
    compiled = shard_rows(source, featurizer) if isinstance(source, Shard) else None
    if compiled is not None:  # (the weighing comes after the shards' counts are added up)
        return ShardData(compiled.rows.tocsr(), compiled.labels.tolist(), compiled.keys, 0, [])
    if isinstance(source, Shard):
        read = read_shard(source)
        texts, labels = read.texts or [], read.labels
        skipped, messages = read.problems.skipped, read.problems.messages[:3]
    else:
        texts, labels = source
        texts, labels, skipped, messages = list(texts), list(labels), 0, []
    if len(texts) != len(labels):
        from snowpy.exceptions import ConfigurationError

        raise ConfigurationError(f"a partition holds {len(texts)} texts but {len(labels)} "
                                 "labels")
    texts = as_documents(texts)
    # (before the document frequencies: with idf, the shards' counts are added up first)
    X = featurizer.rows(texts, names=False).tocsr() if len(texts) else \
        sp.csr_matrix((0, 1 << int(params["bits"])))
    return ShardData(X, labels, document_keys(texts, labels), skipped, messages)


def frequencies_of(data: ShardData, by_label: bool, rows: np.ndarray | None = None
                   ) -> tuple[Any, ...]:
    """The features of the shard's examples ``rows`` (all by default) and the documents
    holding each (ascending ids), and with ``by_label`` their counts by label
    (:meth:`~snowpy.text.weighing.DocumentFrequencies.labelled`)."""
    from snowpy.text.weighing import DocumentFrequencies

    X = data.X if rows is None else data.X[rows]
    labels = data.labels if rows is None else [data.labels[i] for i in rows]
    frequencies = DocumentFrequencies(int(X.shape[1]))
    frequencies.count(X, labels=labels if by_label else None)
    return *frequencies.to_arrays(), frequencies.labelled() if by_label else None


def added_frequencies(documents: int, width: int, relevance: float, *found: tuple[Any, ...]
                      ) -> tuple[np.ndarray, np.ndarray, int, np.ndarray | None]:
    """The shards' :func:`frequencies_of` added up: every feature (ascending ids), the
    documents holding it, the ``documents`` in all, and the features' relevance
    factors (``relevance``: the front end's share; None without), what :func:`weigh`
    takes."""
    from snowpy.text.weighing import DocumentFrequencies

    frequencies = DocumentFrequencies(width, documents=int(documents))
    for shard_ids, shard_counts, _ in found:
        frequencies.add(shard_ids, shard_counts)
    ids, counts = frequencies.to_arrays()
    if not relevance:
        return ids, counts, int(documents), None
    for *_, labelled in found:
        frequencies.add_labelled(*labelled)
    frequencies.relate(relevance)
    return ids, counts, int(documents), frequencies.factors_of(ids)


def weigh(data: ShardData, counted: tuple[np.ndarray, np.ndarray, int, Any], norm: bool
          ) -> ShardData:
    """The shard with its rows weighed by every shard's document frequencies
    (``counted``: :func:`added_frequencies`' features, their counts, the documents and
    the relevance factors)."""
    from snowpy.text.weighing import DocumentFrequencies

    weighed = DocumentFrequencies(int(data.X.shape[1]), *counted).weigh(data.X, norm=norm)
    return ShardData(weighed.tocsr(), data.labels, data.keys, data.skipped, data.messages)


def describe(data: ShardData) -> dict[str, Any]:
    """What the client needs to set the network up: labels, sizes, problems."""
    from snowpy.network.labels import is_multilabel, normalise_label

    multilabel = bool(data.labels) and is_multilabel(data.labels)
    found: set[Any] = set()
    for label in data.labels:
        if multilabel:
            found.update(normalise_label(value) for value in label)
        else:
            found.add(normalise_label(label))
    return {"labels": found, "multilabel": multilabel, "n": data.n, "nnz": int(data.X.nnz),
            "skipped": data.skipped, "messages": data.messages}


def keys_of(data: ShardData) -> np.ndarray:
    """The shard's shuffling keys (the client draws the calibration folds from every
    shard's)."""
    return data.keys


def with_folds(data: ShardData, fold: np.ndarray) -> ShardData:
    """The shard with each example's calibration fold."""
    return ShardData(data.X, data.labels, data.keys, data.skipped, data.messages,
                     data.targets, np.asarray(fold, np.int16))


def fold_figures(data: ShardData, folds: int) -> list[dict[str, Any]]:
    """Per calibration fold, :func:`describe`'s figures of the shard's examples in it:
    what a fold's network starts from is counted over the other folds' (its labels, its
    active features per example), as one process starts it."""
    assert data.fold is not None
    return [describe(ShardData(data.X[mine], [data.labels[i] for i in mine], data.keys[mine],
                               0, []))
            for mine in (np.flatnonzero(data.fold == fold) for fold in range(folds))]


def fold_frequencies(data: ShardData, folds: int, by_label: bool) -> list[tuple[Any, ...]]:
    """:func:`frequencies_of` of the shard's examples of each calibration fold."""
    assert data.fold is not None
    return [frequencies_of(data, by_label, np.flatnonzero(data.fold == fold))
            for fold in range(folds)]


def refolded_frequencies(width: int, relevance: float, documents: list[int],
                         *found: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Per calibration fold, the document frequencies of the examples that train its
    network (every other fold's, all shards' :func:`fold_frequencies` added up; the
    fold's ``documents`` counted by fold), as :func:`added_frequencies` gives them: what a
    fold's network weighs its rows by in one process (:meth:`snowpy.Featurizer.refold`)."""
    folds = len(documents)
    return [added_frequencies(sum(documents) - documents[f], width, relevance,
                              *[shard[g] for shard in found for g in range(folds) if g != f])
            for f in range(folds)]


def _refold(data: ShardData, rows: np.ndarray, fold: int, counted: Any, fold_counted: Any,
            norm: bool) -> Any:
    """The rows ``rows`` of the shard (weighed by every document's frequencies, as
    ``counted`` says) weighed by calibration fold ``fold``'s own (``fold_counted``; None:
    as they are), as one process weighs a fold's rows; the weighing made once a fold."""
    X = data.X[rows] if rows.size != data.n else data.X
    if fold_counted is None:
        return X
    weigh = data.weighs.get(fold)
    if weigh is None:
        from snowpy.text.weighing import DocumentFrequencies

        width = int(data.X.shape[1])
        weigh = data.weighs[fold] = DocumentFrequencies(width, *counted).rescaled(
            DocumentFrequencies(width, *fold_counted), norm)
    return weigh(X).tocsr()


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
                counted: Any = None, fold_counted: Any = None) -> Mixture:
    """One epoch of the network ``state`` on this shard (without calibration fold
    ``fold`` when ``fold >= 0``, its rows weighed by the fold's own document frequencies
    when ``fold_counted`` gives them, ``counted`` every document's), as a mixture
    weighted by the examples learned."""
    from snowpy.network.driver import Driver, Plan
    from snowpy.network.engine import Block
    from snowpy.network.state import network_state

    net = _network(state, f"the mixed network of round {round}")
    rows = np.arange(data.n)
    if fold >= 0:
        assert data.fold is not None, "a fold network's shard has its examples' folds"
        rows = np.flatnonzero(data.fold != fold)
    X = _refold(data, rows, fold, counted, fold_counted, setup.params.get("norm") == "l2")
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

    if key not in data.targets:  # (single labels all str or all int: encoded as an array)
        labels = data.labels if rows.size == data.n else [data.labels[i] for i in rows]
        data.targets[key] = encode_labels(index, label_array(labels), multilabel)
    return data.targets[key]


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


def held_out(states: list[State], data: ShardData, setup: Setup, total: int,
             labels: list[Any], multilabel: bool, counted: Any = None, *fold_counted: Any
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Out-of-fold scores of this shard's examples (fold ``f`` scored by the network
    trained without it, on rows weighed as it learned them: ``fold_counted[f]``) by the
    network's ``labels`` (sets of them: ``multilabel``), with NaN for a label the fold's network never met (the client
    fills it: :func:`snowpy.network.driver.held_out_scores`' lowest score seen), their
    positives, each scored example's fold and each fold network's lowest score here; a
    sample by key when the corpus has more than :data:`CALIBRATION_ROWS` examples."""
    from snowpy.network.labels import LabelIndex, encode_labels, positive_matrix
    from snowpy.network.driver import mixed_keys

    assert data.fold is not None
    folds = data.fold
    keep = folds < len(states)  # (holdout: the first fold only)
    if total > CALIBRATION_ROWS:
        share = np.uint64(int(CALIBRATION_ROWS / total * 2.0**63) * 2)
        keep &= mixed_keys(data.keys, setup.seed + 0xCA11B) < share
    index = LabelIndex(labels)
    rows = np.flatnonzero(keep)
    scores = np.full((rows.size, len(index)), np.nan, dtype=np.float32)
    lowest = np.full(len(states), np.inf)
    for f, state in enumerate(states):
        mine = np.flatnonzero(folds[rows] == f)
        if not mine.size:
            continue
        net = _network(state, f"calibration network {f + 1}")
        if not len(net.classes_):
            continue  # (it learned from nothing: its fold scores none, as in one process)
        part = net.target_scores(_refold(
            data, rows[mine], f, counted, fold_counted[f] if fold_counted else None,
            setup.params.get("norm") == "l2"))
        lowest[f] = part.min(initial=np.inf)
        for column, label in enumerate(net.classes_.tolist()):
            scores[mine, index.find(label)] = part[:, column]
    indptr, targets = encode_labels(index, [data.labels[i] for i in rows], multilabel)
    return scores, positive_matrix(indptr, targets, len(index)), folds[rows], lowest
