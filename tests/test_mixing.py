"""Iterative parameter mixing without a cluster: the mixtures, the shards, the rounds
run in this process exactly as the workers run them, and the checkpoints."""

from __future__ import annotations

import numpy as np
import pytest

from snowpy import SnowClassifier
from snowpy.corpora import demo_path, read
from snowpy.distributed import tasks
from snowpy.distributed.checkpoints import Checkpoint
from snowpy.distributed.mixing import Mixture
from snowpy.distributed.shards import plan_shards, read_shard
from snowpy.distributed.training import _Run
from snowpy.exceptions import ConfigurationError
from snowpy.network import Network
from snowpy.network.state import restore_network

DEMO = str(demo_path("train"))


def _documents(path: str = DEMO) -> tuple[list, list]:
    documents = list(read(path))
    return [d.text for d in documents], [d.label for d in documents]


def ipm(classifier: SnowClassifier, shards: list, mixing: str = "arithmetic",
        rounds: int | None = None) -> Network:
    """The distributed fit's rounds, run here (no calibration)."""
    front_end = classifier.make_featurizer().set_params(n_jobs=1)
    data = [tasks.featurise(shard, front_end) for shard in shards]
    if classifier.idf:  # (the shards' document frequencies added up, as the run does)
        front_end = classifier.make_featurizer().fit(
            frequencies=[tasks.counted(part, front_end) for part in data])
        data = [tasks.weighed(part, front_end) for part in data]
    run = _Run(None, classifier, mixing, None, None, None)
    described = [tasks.describe(part)[0] for part in data]
    run.examples = [d["n"] for d in described]
    run.multilabel = any(d["multilabel"] for d in described)
    # (the run's own steps: the mixing, round by round)
    state, setup = run._start(*run._begins(described))
    for r in range(rounds or classifier.epochs):
        mixture = Mixture.combine([tasks.train_round(state, part, setup, r, -1)
                                   for part in data])
        state = tasks.finish([mixture], state, setup, r)
        if classifier.early_stop and mixture.stats["updates"] == 0:
            break
    header, arrays = tasks.discarded(state, setup)
    return restore_network(Network, header, arrays, "test")


def _links(net: Network) -> tuple[np.ndarray, np.ndarray]:
    """Every link as ``(feature + 1) * targets + target`` (sorted) and its weight."""
    links = net.engine_.effective_links().tocoo()
    features = np.concatenate([[-1], net.feature_ids_])[links.row]
    keys = (features + 1) * len(net.classes_) + links.col
    order = np.argsort(keys)
    return keys[order], links.data[order]


def _parts(texts: list, labels: list, count: int) -> list:
    return [(texts[i::count], labels[i::count]) for i in range(count)]


def test_one_shard_trains_exactly_as_fit():
    texts, labels = _documents()
    classifier = SnowClassifier(epochs=4, calibrate=None)
    single = classifier.fit(texts, labels).network_
    mixed = ipm(SnowClassifier(epochs=4, calibrate=None), [(texts, labels)])
    assert mixed.mistakes_ == single.mistakes_
    assert mixed.updates_ == single.updates_
    assert mixed.n_links_ == single.n_links_
    mixed_keys, mixed_weights = _links(mixed)
    single_keys, single_weights = _links(single)
    np.testing.assert_array_equal(mixed_keys, single_keys)
    np.testing.assert_allclose(mixed_weights, single_weights, rtol=1e-6, atol=1e-9)
    X = classifier.featurizer_.transform(texts)
    np.testing.assert_array_equal(mixed.predict(X), single.predict(X))


@pytest.mark.parametrize("rule,links,average_over", [
    ("perceptron", "signed", "all"), ("balanced-winnow", "touched", "all"),
    ("perceptron", "signed", "changed"), ("balanced-winnow", "touched", "changed")])
def test_arithmetic_mixing_averages_what_the_shards_predict(rule, links, average_over):
    """One round from the same start. Averaged over all shards (IPM as published): the
    mixed network scores every example with the shards' scores averaged, weighted by
    their examples (a missing link counting as a new one, which weighs what a missing
    one does for these rules and policies). Averaged over the shards that changed each
    link: a link only one shard changed weighs what it weighs there; the others, the
    average of the shards'."""
    texts, labels = _documents()
    classifier = SnowClassifier(rule, epochs=1, calibrate=None, average=False,
                                discard=None, links=links)
    parts = [(texts[:100], labels[:100]), (texts[100:], labels[100:])]
    data = [tasks.featurise(part, classifier.make_featurizer()) for part in parts]
    run = _Run(None, classifier, "arithmetic", None, None, None, average_over)
    run.examples, run.multilabel = [100, 300], False
    # (the run's own steps: the mixing, round by round)
    state, setup = run._start(sorted(set(labels)), sum(d.X.nnz for d in data) / 400)
    shard_nets = []
    mixtures = []
    for part in data:
        mixtures.append(tasks.train_round(state, part, setup, 0, -1))
        # the shard's own network, trained the same way, for comparison
        net = tasks._network(state, "test")  # (a worker's step, as the round runs it)
        from snowpy.network.driver import Driver, Plan
        from snowpy.network.labels import encode_labels
        from snowpy.network.engine import Block

        indptr, targets = encode_labels(net.engine_.labels, part.labels, False)
        net.engine_.rng = np.random.default_rng(0)
        Driver().fit(net.engine_, Block(part.X, net.engine_.store.training_rows(part.X),
                                        indptr, targets, None, None, part.keys),
                     Plan(1, True, True))
        shard_nets.append(net)
    mixed = restore_network(Network, *tasks.finish(mixtures, state, setup, 0),
                            "test")
    features = np.union1d(shard_nets[0].feature_ids_, shard_nets[1].feature_ids_)
    X = np.eye(features.size)  # one example per feature, to read its column of weights
    import scipy.sparse as sp

    probe = sp.csr_matrix((np.ones(features.size), features, np.arange(features.size + 1)),
                          shape=(features.size, 1 << 22))
    del X
    if average_over == "all":
        expected = 0.25 * shard_nets[0].target_scores(probe) + \
            0.75 * shard_nets[1].target_scores(probe)
        np.testing.assert_allclose(mixed.target_scores(probe), expected, rtol=1e-5, atol=1e-5)
    else:  # feature by feature and target by target, against the shards' weights
        start = tasks._network(state, "start").engine_.store.absent
        initial = float(np.dot(mixed.engine_.store.kernel.planes, mixed.engine_.store.initial_weights))
        mixed_table = mixed.engine_.effective_weights()
        checked = 0
        for feature in features[:300]:
            row = np.flatnonzero(mixed.feature_ids_ == feature)
            for t in range(len(mixed.classes_)):
                moved = []
                for weight, net in zip((0.25, 0.75), shard_nets):
                    at = net.engine_.store.positions(np.array([feature]), t)[0]
                    value = net.engine_.effective_delta(bool(net.average))[at] + net.engine_.store.absent \
                        if at >= 0 else None
                    if value is not None and value != initial:
                        moved.append((weight, value))
                got = mixed_table[1 + row[0], t] if row.size else start
                if len(moved) == 1:
                    assert got == pytest.approx(moved[0][1], abs=1e-6)
                    checked += 1
                elif len(moved) == 2:
                    assert got == pytest.approx(sum(w * v for w, v in moved), abs=1e-6)
                    checked += 1
        assert checked > 50
    assert mixed.n_examples_seen_ == 400
    assert mixed.mistakes_ == [sum(n.mistakes_[0] for n in shard_nets)]
    np.testing.assert_array_equal(mixed.engine_.promotions,
                                  shard_nets[0].engine_.promotions + shard_nets[1].engine_.promotions)


def _mixture(keys, W, U, C, weight, seen=0.0):
    W = np.asarray(W, dtype=np.float64)
    return Mixture(np.asarray(keys, np.int64), W, np.asarray(U, np.float64),
                   np.asarray(C, np.float64), weight, seen, np.zeros((2, 0)),
                   np.zeros((2, 2), np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                   np.zeros(0, np.int64), {"mistakes": 1})


def test_combine_adds_by_key_in_a_worked_example():
    a = _mixture([2, 5], [[1.0], [2.0]], [[0.5], [1.0]], [3.0, 3.0], 3.0, 30.0)
    b = _mixture([5, 7], [[4.0], [8.0]], [[2.0], [4.0]], [1.0, 0.0], 1.0, 12.0)
    both = Mixture.combine([a, b])
    assert both.keys.tolist() == [2, 5, 7]
    assert both.W[:, 0].tolist() == [1.0, 6.0, 8.0]
    assert both.U[:, 0].tolist() == [0.5, 3.0, 4.0]
    assert both.C.tolist() == [3.0, 4.0, 0.0]
    assert (both.weight, both.seen, both.stats["mistakes"]) == (4.0, 42.0, 2)
    # any grouping, the same sums
    c = _mixture([7], [[1.0]], [[1.0]], [1.0], 1.0)
    left = Mixture.combine([Mixture.combine([a, b]), c])
    right = Mixture.combine([a, Mixture.combine([b, c])])
    np.testing.assert_array_equal(left.W, right.W)


def _state(features: list, targets: list, weights: list, n_targets: int = 2) -> tuple:
    """A network's state: its rows' features (the bias's, -1, first), each row's links'
    targets and their weights (one plane, float64, no averaging)."""
    header = {"labels": [f"label{t}" for t in range(n_targets)],
              "links": {"precision": "float64"}, "stats": {"mistakes": [], "updates": []},
              "seen": 0}
    arrays = {"feature_ids": np.array(features[1:], np.int64),
              "row_sizes": np.array([len(row) for row in targets], np.int32),
              "link_targets": np.array([t for row in targets for t in row], np.int32),
              "link_weights": np.array(weights, np.float64).reshape(-1, 1),
              "state": np.zeros((n_targets, 0)), "promotions": np.zeros(n_targets, np.int64),
              "demotions": np.zeros(n_targets, np.int64)}
    return header, arrays


def test_mixed_weights_in_a_worked_example():
    """Start: the bias linked to target 0 at 1.0 (two targets, initial weight 0.5).
    Shard a (30 examples) moved it to 2.0 and made feature 4's link to target 1 at
    1.5; shard b (10 examples) moved the bias to 3.0 and made the same link at 0.5
    (its initial weight: made, not moved)."""
    start = _state([-1], [[0]], [1.0])
    a = _mixture([0, 11], [[30 * 1.0], [30 * 1.0]], [[0.0], [0.0]][:2], [30.0, 30.0], 30.0)
    b = _mixture([0, 11], [[10 * 2.0], [0.0]], [[0.0], [0.0]], [10.0, 0.0], 10.0)
    total = Mixture.combine([a, b])
    for per_link, expected in ((True, [2.25, 1.5]), (False, [2.25, 1.25])):
        total.U = total.U[:, :0]
        _, arrays = total.state(start, np.array([0.5]), "arithmetic", per_link=per_link)
        # keys 0 and 11: (-1 + 1) * 2 + 0, the bias's link to target 0; (4 + 1) * 2 + 1
        assert arrays["feature_ids"].tolist() == [4] and arrays["row_sizes"].tolist() == [1, 1]
        assert arrays["link_targets"].tolist() == [0, 1]
        # the bias: 1.0 + (30 * 1.0 + 10 * 2.0) / 40 either way; feature 4: only a moved
        # it, by 1.0 from 0.5 (per link: all of it; over all shards: 30/40 of it)
        np.testing.assert_allclose(arrays["link_weights"][:, 0], expected)


def test_geometric_mixing_of_winnow_is_the_weighted_geometric_mean():
    texts, labels = _documents()
    for mixing in ("geometric", "arithmetic"):
        net = ipm(SnowClassifier("winnow", epochs=2, calibrate=None, average=False,
                                 discard=None, links="touched"),
                  [(texts[:200], labels[:200]), (texts[200:], labels[200:])], mixing,
                  rounds=1)
        assert np.all(net.engine_.effective_links().data > 0)  # multiplicative weights stay positive
    # one link moved from 1 to 4 by a shard of 10 examples and to 1/4 by another of 30:
    # log-changes 10 * log 4 and 30 * log(1/4); geometric mean 4 ** ((10 - 30) / 40)
    parts = [_mixture([3], [[10 * np.log(4.0)]], np.zeros((1, 0)), [10.0], 10.0),
             _mixture([3], [[30 * np.log(0.25)]], np.zeros((1, 0)), [30.0], 30.0)]
    total = Mixture.combine(parts)
    _, arrays = total.state(_state([-1], [[]], []), np.array([1.0]), "geometric")
    assert arrays["feature_ids"].tolist() == [0] and arrays["link_targets"].tolist() == [1]
    assert arrays["link_weights"][0, 0] == pytest.approx(4.0 ** (-0.5))


def test_geometric_mixing_refuses_signed_weights():
    texts, labels = _documents()
    with pytest.raises(ConfigurationError, match="positive"):
        ipm(SnowClassifier("perceptron", epochs=1, calibrate=None),
            _parts(texts, labels, 2), "geometric")


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_byte_range_shards_cover_every_line_once(tmp_path, monkeypatch, count):
    from snowpy.distributed import shards as module

    monkeypatch.setattr(module, "BLOCK_BYTES", 97)  # lines cross blocks, some span several
    rng = np.random.default_rng(count)
    lines = [f"l{i % 3}\t" + "w" * int(rng.integers(1, 250)) + f" {i}" for i in range(101)]
    path = tmp_path / "c.tsv"
    path.write_text("\n".join(lines) + "\n")
    planned = plan_shards(str(path), count)
    assert [s.kind for s in planned] == ["bytes"] * count
    read_back = [t for s in planned for t in read_shard(s).texts]
    assert sorted(read_back) == sorted(line.split("\t")[1] for line in lines)
    assert len(read_back) == len(lines)


def test_shards_of_a_file_sorted_by_label_each_hold_every_label(tmp_path, monkeypatch):
    from snowpy.distributed import shards as module

    monkeypatch.setattr(module, "BLOCK_BYTES", 256)
    path = tmp_path / "sorted.tsv"
    path.write_text("".join(f"{label}\tsome words of document {i}\n"
                            for label in "abcd" for i in range(100)))
    for shard in plan_shards(str(path), 4):
        assert set(read_shard(shard).labels) == set("abcd")


@pytest.mark.parametrize("ending", ["\n", ""])
def test_a_shard_of_tsv_lines_is_read_in_compiled_code_as_the_python_reader_reads_it(
        tmp_path, monkeypatch, ending):
    from snowpy.distributed import shards as module

    monkeypatch.setattr(module, "BLOCK_BYTES", 97)  # lines cross blocks
    path = tmp_path / "c.tsv"
    path.write_text("".join(f"{'xyz'[i % 3]}\tsome words of doc {i} and {i % 7}\n"
                            for i in range(300)).rstrip("\n") + ending)
    featurizer = SnowClassifier().make_featurizer()
    for shard in plan_shards(str(path), 2):
        compiled = tasks.featurise(shard, featurizer)
        monkeypatch.setattr(tasks, "read_shard", lambda shard, featurizer: module.read_shard(
            shard))
        python = tasks.featurise(shard, featurizer)
        monkeypatch.undo()
        monkeypatch.setattr(module, "BLOCK_BYTES", 97)
        assert module.read_shard(shard, SnowClassifier().make_featurizer()).rows is not None
        assert (compiled.X != python.X).nnz == 0 and compiled.X.shape == python.X.shape
        assert compiled.labels == python.labels and compiled.n == python.n > 100
        assert np.array_equal(compiled.keys, python.keys)
    (tmp_path / "bad.tsv").write_text("a\tone\nno tab here\n")  # (the Python reader's)
    bad = plan_shards(str(tmp_path / "bad.tsv"), 1, on_error="skip")[0]
    read = module.read_shard(bad, SnowClassifier().make_featurizer())
    assert read.rows is None and read.texts == ["one"] and read.problems.skipped == 1


def test_globs_and_other_formats_are_shared_out(tmp_path):
    for i in range(3):
        (tmp_path / f"part-{i}.tsv").write_text(f"a\tdoc {i} one\nb\tdoc {i} two\n")
    shards = plan_shards(str(tmp_path / "part-*.tsv"), 2)
    assert [s.kind for s in shards] == ["bytes", "bytes"]  # blocks of all the files
    assert sorted(t for s in shards for t in read_shard(s).texts) == sorted(
        f"doc {i} {w}" for i in range(3) for w in ("one", "two"))
    for i in range(3):
        (tmp_path / f"part-{i}.jsonl").write_text(f'{{"text": "j{i}", "label": "x"}}\n')
    whole = plan_shards(str(tmp_path / "part-*.jsonl"), 2)
    assert [len(s.files) for s in whole] == [2, 1]
    assert sorted(t for s in whole for t in read_shard(s).texts) == ["j0", "j1", "j2"]
    (tmp_path / "c.jsonl").write_text("".join(f'{{"text": "t{i}", "label": "x"}}\n'
                                              for i in range(5)))
    strides = plan_shards(str(tmp_path / "c.jsonl"), 2)
    assert [s.kind for s in strides] == ["stride", "stride"]
    assert [read_shard(s).texts for s in strides] == [["t0", "t2", "t4"], ["t1", "t3"]]
    with pytest.raises(ConfigurationError, match="no file matches"):
        plan_shards(str(tmp_path / "none-*.tsv"), 2)


def test_accuracy_of_mixed_shards_stays_close_to_one_process():
    texts, labels = _documents()
    test_texts, test_labels = _documents(str(demo_path("test")))
    single = SnowClassifier(epochs=5, calibrate=None).fit(texts, labels)
    X = single.featurizer_.transform(test_texts)
    one = single.network_.score(X, test_labels)
    for count in (2, 4):
        net = ipm(SnowClassifier(epochs=5, calibrate=None), _parts(texts, labels, count))
        assert net.score(X, test_labels) >= one - 0.03, count


def test_checkpoints_round_trip_and_refuse_another_run(tmp_path):
    texts, labels = _documents()
    net = SnowClassifier(epochs=1, calibrate=None).fit(texts, labels).network_
    from snowpy.network.state import network_state

    state = network_state(net)
    keeper = Checkpoint(tmp_path / "ck", {"source": "a", "params": {"epochs": 3}})
    keeper.save(1, {"network": state}, {"network": False})
    keeper.save(2, {"network": state}, {"network": True})
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == [
        "network.round-2.snowpy", "progress.json"]
    rounds, states, done = keeper.load(["network"])
    assert (rounds, done) == (2, {"network": True})
    np.testing.assert_array_equal(states["network"][1]["link_weights"],
                                  state[1]["link_weights"])
    other = Checkpoint(tmp_path / "ck", {"source": "b", "params": {"epochs": 3}})
    with pytest.raises(ConfigurationError, match="another run: its source"):
        other.load(["network"])
    (tmp_path / "ck" / "network.round-2.snowpy").write_bytes(b"not a model")
    with pytest.raises(ConfigurationError, match="damaged"):
        keeper.load(["network"])
    with pytest.raises(ConfigurationError, match="no checkpoint"):
        Checkpoint(tmp_path / "empty", {}).load(["network"])


def test_multilabel_shards_mix_into_a_multilabel_network():
    rng = np.random.default_rng(3)
    topics = {"sport": ["goal", "match", "team"], "money": ["bank", "price", "market"],
              "tech": ["chip", "code", "robot"]}
    texts, labels = [], []
    for _ in range(300):
        chosen = tuple(sorted(t for t in topics if rng.random() < 0.4))
        words = [w for t in chosen for w in rng.choice(topics[t], 2)] + ["the", "a"]
        texts.append(" ".join(rng.permutation(words)))
        labels.append(chosen)
    net = ipm(SnowClassifier("balanced-winnow", epochs=5, calibrate=None, ngrams=1),
              _parts(texts, labels, 3))
    assert net.multilabel_ and sorted(net.classes_.tolist()) == ["money", "sport", "tech"]
    X = SnowClassifier(ngrams=1).make_featurizer().fit_transform(texts)
    predicted = net.predict(X)
    exact = np.mean([set(p) == set(t) for p, t in zip(predicted, labels)])
    assert exact >= 0.95


def test_an_empty_shard_changes_nothing():
    texts, labels = _documents()
    parts = [(texts[:200], labels[:200]), ([], []), (texts[200:], labels[200:])]
    with_empty = ipm(SnowClassifier(epochs=3, calibrate=None), parts)
    without = ipm(SnowClassifier(epochs=3, calibrate=None), [parts[0], parts[2]])
    for a, b in zip(_links(with_empty), _links(without)):
        np.testing.assert_array_equal(a, b)
    assert with_empty.mistakes_ == without.mistakes_


def test_a_shards_labels_are_encoded_once_a_network_and_a_folds_by_its_own_rows():
    """A fold's network is encoded the labels of the rows it learns only: a label of the
    held-out fold alone never enters its labels."""
    import scipy.sparse as sp

    from snowpy.network.labels import LabelIndex

    data = tasks.ShardData(sp.csr_matrix((4, 8)), [("a",), ("b", "c"), ("d",), ("c",)],
                           np.arange(4, dtype=np.uint64), 0, [])
    index = LabelIndex(["a", "b", "c"])
    indptr, targets = tasks._targets(data, index, True, "abc 0", np.array([1, 3]))
    assert indptr.tolist() == [0, 2, 3] and targets.tolist() == [1, 2, 2]
    assert index.labels == ["a", "b", "c"]  # (d, held out, unknown to the fold's network)
    again = tasks._targets(data, index, True, "abc 0", np.array([1, 3]))
    assert again[0] is indptr  # (once for all its rounds)
    whole = tasks._targets(data, LabelIndex(["a", "b", "c", "d"]), True, "abcd -1",
                           np.arange(4))
    assert whole[0].tolist() == [0, 1, 3, 4, 5] and whole[1].tolist() == [0, 1, 2, 3, 2]


def test_a_rounds_averaging_clock_is_the_shards_weighted_mean_rounded():
    """A cluster's round mixes the shards' averaging clocks as the threads' shards do:
    each shard's clock moves by the examples it learned, the mixed one is their mean
    weighted by those examples, rounded to the nearest whole example (shards of 67 and
    133 documents: 110.89 more a round, so 111, then 222; unweighted, 100)."""
    texts, labels = _documents()
    shards = [(texts[:67], labels[:67]), (texts[67:200], labels[67:200])]
    step = (67 * 67 + 133 * 133) / 200
    assert step == 110.89 and len(texts) >= 200
    for rounds, clock in ((1, 111), (2, 222)):
        mixed = ipm(SnowClassifier(epochs=rounds, early_stop=False, calibrate=None,
                                   average=True), shards, rounds=rounds)
        assert mixed.to_state()[0]["network"]["seen"] == clock


def test_a_cluster_sums_the_eligibility_counts_of_its_first_round_and_keeps_them():
    """Eligibility by count (SNoW's -e 3) on two shards: after the first round each
    feature's count is the sum of the shards' counts, the documents of the whole corpus
    that hold it (a feature in both shards counted in both), as one process counts it;
    the rounds after it count nothing again (the counts neither doubled nor lost)."""
    texts, labels = _documents()
    params = dict(eligibility=3, calibrate=None, idf=False)
    single = SnowClassifier(epochs=3, **params).fit(texts, labels)
    X = single.featurizer_.transform(texts)
    held = np.asarray((X != 0).sum(0)).ravel()  # (each feature's documents)
    shards = _parts(texts, labels, 2)
    in_shard = [np.asarray((single.featurizer_.transform(t) != 0).sum(0)).ravel()
                for t, _ in shards]
    for rounds in (1, 3):
        mixed = ipm(SnowClassifier(epochs=rounds, **params), shards, rounds=rounds)
        arrays = mixed.to_state()[1]
        ids = arrays["feature_ids"].astype(np.int64)
        counts = arrays["row_counts"][1:].astype(np.int64)  # (row 0: the bias)
        assert ids.size > 1000 and np.array_equal(counts, held[ids])
        both = (in_shard[0][ids] > 0) & (in_shard[1][ids] > 0)
        assert both.sum() > 100  # (summed, not the larger of the two)
        assert np.all(counts[both] > np.maximum(in_shard[0][ids], in_shard[1][ids])[both])
    alone = single.network_.to_state()[1]  # (one process: the same count, feature by feature)
    order = np.argsort(alone["feature_ids"])
    assert np.array_equal(np.sort(ids), alone["feature_ids"][order].astype(np.int64))
    np.testing.assert_array_equal(counts[np.argsort(ids)], alone["row_counts"][1:][order])
