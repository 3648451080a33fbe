"""The network's engine (snowpy.network.engine): the targets learned apart on several
threads give the network one thread learns, to the bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

import snowpy
from snowpy.cli import app
from snowpy.network.driver import Driver
from snowpy.network.engine import Block

DEMO = Path(__file__).resolve().parent.parent / "corpora" / "demo"


def _problem(n: int = 1500, d: int = 400, targets: int = 5, multilabel: bool = False):
    rng = np.random.default_rng(3)
    X = sp.random(n, d, density=0.03, format="csr", random_state=4)
    X.data[:] = rng.choice([1.0, 0.5, 2.0], size=X.data.size)
    scores = np.asarray(X @ rng.normal(size=(d, targets)))
    if multilabel:
        return X, [tuple(np.flatnonzero(row > 0.3).tolist()) or (0,) for row in scores]
    return X, scores.argmax(1)


def _learned(net: snowpy.Network) -> dict:
    """Everything a network learned: its model file's arrays and its figures."""
    _, arrays = net.to_state()
    return {**arrays, "mistakes": np.array(net.mistakes_), "updates": np.array(net.updates_),
            "seen": np.array([net.n_examples_seen_, net.engine_.overflows, net.engine_.underflows])}


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("rule, options", [
    ("balanced-winnow", {"links": "signed"}),
    ("winnow", {"links": "touched", "eligibility": 2}),
    ("perceptron", {"links": "all", "average": False}),
    ("aggressive", {"links": "touched"}),  # (its step reads the sum of squares)
    ("passive-aggressive", {"links": "positive", "eligibility": "percent:50"}),
    ("normalised-winnow", {"links": "touched"}),  # (its step sums over the entries)
    ("thick-separator", {"links": "signed", "precision": "float64"}),
])
def test_any_number_of_threads_learns_the_same_network(rule, options):
    X, y = _problem(targets=12)  # (3 epochs of 12 targets: worth 8 parts, Driver.parts)
    learned = [_learned(snowpy.Network(rule, epochs=3, n_jobs=jobs, **options).fit(X, y))
               for jobs in (1, 2, 3, 5, 8)]
    assert learned[0]["link_weights"].size > 0 and learned[0]["mistakes"][0] > 100
    net = snowpy.Network(rule, epochs=1, **options).fit(X, y)
    block = Block(X, net.engine_.store.training_rows(X), np.arange(X.shape[0] + 1),
                  np.asarray(y, dtype=np.int32))
    assert Driver().parts(net.engine_, block, 8, epochs=3) == 8
    for other in learned[1:]:
        assert _same(learned[0], other)


def test_a_multilabel_network_learns_the_same_on_threads_and_counts_its_mistakes():
    X, y = _problem(multilabel=True)
    one, two = (snowpy.Network("balanced-winnow", epochs=4, n_jobs=jobs).fit(X, y)
                for jobs in (1, 2))
    assert _same(_learned(one), _learned(two))
    assert one.multilabel_ and one.mistakes_[0] > 100  # (counted over the parts' targets)


def test_training_goes_on_from_a_network_learned_on_threads():
    X, y = _problem()
    nets = [snowpy.Network("perceptron", epochs=2, n_jobs=jobs).fit(X[:900], y[:900])
            for jobs in (1, 2)]
    for net in nets:
        net.partial_fit(X[900:], y[900:])
    assert _same(_learned(nets[0]), _learned(nets[1]))
    assert np.array_equal(nets[0].decision_function(X), nets[1].decision_function(X))


def test_the_parts_a_block_is_learned_in():
    X, y = _problem(targets=3)
    net = snowpy.Network("perceptron", epochs=1).fit(X, y)
    engine = net.engine_
    block = Block(X, engine.store.training_rows(X), np.arange(X.shape[0] + 1),
                  np.asarray(y, dtype=np.int32))
    assert Driver().parts(engine, block, 2) == 2
    assert Driver().parts(engine, block, 8) == 3  # (at most a target a thread)
    assert Driver().parts(engine, block, 1) == 1

    class Curve(snowpy.Progress):  # a progress report that tests the network every 100 examples
        every = 100

    assert Driver().parts(engine, block, 2, Curve()) == 1
    assert Driver().parts(engine, block, 2, lambda *figures: None) == 2  # (a plain callable)
    constrained = snowpy.Network("perceptron", epochs=1, multiclass="constraint").fit(X, y)
    assert Driver().parts(constrained.engine_, block, 2) == 1  # targets learned together


def test_mixing_moves_each_link_by_the_mean_change_of_the_shards_that_changed_it():
    """Two shards of a network of two targets (weights 3 and 1 of examples), read from
    their pools as they lie: a link new to the network and moved by one shard takes that
    shard's weight; a link only made and left at its initial weight by another counts no
    change; a link one shard moved and another left is moved as the first moved it (not
    a quarter of the way, as averaging over every shard would); a shard's links made
    after those it was given (out of target order), and a dense row, are read by target."""
    from snowpy._core.merging import Mixing

    start = (np.array([0, 1], np.int32), np.array([0], np.int32),   # row 1 -> target 0: 1.0
             np.array([[1.0]]), np.zeros((0, 1)))
    # a pool: row records (start slot, links, room, dense), then the slots' targets and
    # weights; the first shard's row 1 is dense (slot t for target t), the second's
    # holds target 1 after target 0 ... and its row 0 a hole-free block of one
    first = (np.array([[0, 1, 1, 0], [1, 1, 2, 1]], np.int32),
             np.array([1, 0, -1], np.int32), np.array([[0.5], [2.0], [0.0]]), np.zeros((0, 1)))
    second = (np.array([[3, 1, 1, 0], [0, 2, 2, 0]], np.int32),
              np.array([1, 0, 9, 1], np.int32), np.array([[-1.0], [1.0], [7.0], [0.0]]),
              np.zeros((0, 1)))
    mixing = Mixing(start, [first, second], np.array([3.0, 1.0]), np.zeros(1), False, 2)
    sizes = np.empty(2, np.int32)
    mixing.count(0, 2, mixing.first(0), sizes)
    target, W, U = np.empty(3, np.int32), np.empty((3, 1)), np.empty((0, 1))
    assert mixing.first(1) == 0  # (the start's row 0 has no link)
    mixing.fill(0, 1, mixing.first(0), 0, target, W, U)  # (row ranges apart, as threads
    mixing.fill(1, 2, mixing.first(1), 1, target, W, U)  #  fill them)
    assert sizes.tolist() == [1, 2] and target.tolist() == [1, 0, 1]
    assert W[:, 0].tolist() == [0.5, 2.0, -1.0]


def _sharded(X, y, jobs, **options):
    return snowpy.Network("perceptron", epochs=3, multiclass="constraint", n_jobs=jobs,
                          links="signed", **options).fit(X, y)


def test_constraint_classification_learns_its_examples_in_shards_on_threads():
    """Its targets are updated together, so its examples are split: each thread learns
    a run of each epoch's examples in a copy of the network, mixed at the end of the
    epoch. The same network for the same number of threads; about as accurate as one."""
    X, y = _problem(n=3000, targets=4)
    net = snowpy.Network("perceptron", epochs=1, multiclass="constraint").fit(X, y)
    engine = net.engine_
    block = Block(X, engine.store.training_rows(X), np.arange(X.shape[0] + 1),
                  np.asarray(y, dtype=np.int32))
    assert Driver().parts(engine, block, 2) == 1 and Driver().shards(engine, block, 2) == 2
    assert Driver().shards(engine, block, 1) == 1
    free = snowpy.Network("perceptron", epochs=1).fit(X, y)
    assert Driver().shards(free.engine_, block, 2) == 1  # (its targets are split instead)
    few = Block(X[:40], engine.store.training_rows(X[:40]), np.arange(41),
                np.asarray(y[:40], dtype=np.int32))
    assert Driver().shards(engine, few, 2) == 1  # (few examples beside the network's features)
    one, two, again = _sharded(X, y, 1), _sharded(X, y, 2), _sharded(X, y, 2)
    assert _same(_learned(two), _learned(again))
    assert not _same(_learned(one), _learned(two))
    accuracy = [float(np.mean(n.predict(X) == y)) for n in (one, two)]
    assert accuracy[0] > 0.8 and abs(accuracy[0] - accuracy[1]) < 0.03
    assert two.n_examples_seen_ == one.n_examples_seen_ == 9000
    assert 0 < two.mistakes_[0] and two.mistakes_[-1] < two.mistakes_[0]


def test_fewer_targets_than_threads_learn_their_examples_in_shards():
    """A binary filter on three threads: two targets, so the examples are split in three
    shards; the same network every time on three threads."""
    X, y = _problem(n=3000, targets=2)
    nets = [snowpy.Network("passive-aggressive", epochs=2, n_jobs=3).fit(X, y)
            for _ in range(2)]
    block = Block(X, nets[0].engine_.store.training_rows(X), np.arange(X.shape[0] + 1),
                  np.asarray(y, dtype=np.int32))
    assert Driver().parts(nets[0].engine_, block, 3) == 2 and Driver().shards(nets[0].engine_, block, 3) == 3
    assert _same(_learned(nets[0]), _learned(nets[1]))
    one = snowpy.Network("passive-aggressive", epochs=2, n_jobs=1).fit(X, y)
    accuracy = [float(np.mean(n.predict(X) == y)) for n in (one, nets[0])]
    assert accuracy[0] > 0.85 and abs(accuracy[0] - accuracy[1]) < 0.03


def test_a_stream_learns_on_threads_what_it_learns_on_one(tmp_path):
    """Progressive calibration records each example's scores before it is learned: the
    parts record their columns, and the network, its figures and its sigmoids are the
    same."""
    X, y = _problem(n=3000)
    nets = []
    for jobs in (1, 2):
        net = snowpy.Network("balanced-winnow", calibrate="progressive", n_jobs=jobs)
        for start in range(0, 3000, 700):
            net.partial_fit(X[start:start + 700], y[start:start + 700])
        nets.append(net)
    assert _same(_learned(nets[0]), _learned(nets[1]))
    assert nets[0].calibration_ is not None
    np.testing.assert_array_equal(nets[0].predict_proba(X), nets[1].predict_proba(X))


def test_a_stream_on_threads_drops_its_links_part_by_part_as_one_thread_does():
    """A stream's parts are kept between blocks; its discard at the end is made by each
    part on its thread before they are put together: the same links dropped, the same
    network."""
    X, y = _problem(n=3000)
    learned, dropped = [], []
    for jobs in (1, 2):
        net = snowpy.Network("passive-aggressive", discard=0.5, n_jobs=jobs)
        for start in range(0, 3000, 700):
            net.partial_fit(X[start:start + 700], y[start:start + 700])
        links = net.n_links_
        dropped.append(net.prune())
        assert net.n_links_ == links - dropped[-1]
        learned.append(_learned(net))
    assert dropped[0] == dropped[1] > 100
    assert _same(*learned)


def test_a_batch_is_scored_in_runs_on_threads_to_the_same_scores(monkeypatch):
    import snowpy.network.engine as engine

    X, y = _problem(n=8000)  # (96,000 active features: scored in runs)
    net = snowpy.Network("passive-aggressive").fit(X, y)
    alone = net.target_scores(X)
    runs = []
    scored = engine.score_rows
    monkeypatch.setattr(engine, "score_rows", lambda indptr, *rest: (
        runs.append(indptr.shape[0] - 1), scored(indptr, *rest))[1])
    together = net.set_params(n_jobs=2).target_scores(X)
    assert len(runs) == 2 and sum(runs) == 8000
    np.testing.assert_array_equal(together, alone)
    assert (net.predict(X) == net.set_params(n_jobs=None).predict(X)).all()


def test_a_classifier_and_the_command_line_write_the_same_file_for_any_threads(tmp_path):
    texts, labels = [], []
    for line in (DEMO / "train.tsv").read_text(encoding="utf-8").splitlines():
        label, text = line.split("\t", 1)
        labels.append(label)
        texts.append(text)
    files = []
    for jobs in (1, 2):
        path = tmp_path / f"library-{jobs}.snowpy"
        snowpy.SnowClassifier(n_jobs=jobs).fit(texts, labels).save(path)
        files.append(path.read_bytes())
    runner = CliRunner()
    for jobs in ("1", "2"):
        path = tmp_path / f"cli-{jobs}.snowpy"
        result = runner.invoke(app, ["train", str(DEMO / "train.tsv"), "-o", str(path),
                                     "--threads", jobs, "--quiet"])
        assert result.exit_code == 0, result.output
        files.append(path.read_bytes())
    assert files[0] == files[1] and files[2] == files[3]
    loaded = snowpy.load(tmp_path / "cli-2.snowpy")
    assert loaded.n_jobs == -1  # (how it ran is not in the file: the default)
    assert loaded.score(texts, labels) > 0.95


def test_a_stream_read_between_its_blocks_learns_the_same():
    """A stream's blocks are learned in parts kept from block to block; reading the
    network between them (a prediction, a new label) puts the parts together, and the
    next block splits them again: the network is the one a single thread learns."""
    X, y = _problem(n=3000, targets=4)
    labels = np.array(["a", "b", "c", "d", "e"])[y]
    labels[2500:2510] = "e"  # a label met late: a target added while the parts are out
    nets, seen = [], []
    for jobs in (1, 2):
        net = snowpy.Network("perceptron", n_jobs=jobs)
        for start in range(0, 3000, 500):
            net.partial_fit(X[start:start + 500], labels[start:start + 500])
            seen.append(net.target_scores(X[:50]))
        nets.append(net)
    assert _same(_learned(nets[0]), _learned(nets[1]))
    for one, two in zip(seen[:6], seen[6:]):
        np.testing.assert_array_equal(one, two)
    assert nets[1].classes_.tolist() == ["a", "b", "c", "d", "e"]


def test_a_block_shown_to_some_targets_after_a_threaded_block_learns_the_same():
    """The parts a stream's block was learned in are not used for a block whose examples
    are shown to some targets only (SNoW's sequential model: one thread), nor lost."""
    X, y = _problem(n=1500, targets=4)
    labels = np.array(["a", "b", "c", "d"])[y]
    shown = [("a", "b", "c", "d") if i % 3 else (labels[i], "a") for i in range(1500)]
    nets = []
    for jobs in (1, 2):
        net = snowpy.Network("perceptron", n_jobs=jobs)
        net.partial_fit(X[:500], labels[:500])
        net.partial_fit(X[500:1000], labels[500:1000], targets=shown[500:1000])
        net.partial_fit(X[1000:], labels[1000:])
        nets.append(net)
    assert _same(_learned(nets[0]), _learned(nets[1]))


@pytest.mark.parametrize("rule, eligibility, links", [
    ("balanced-winnow", 3, "touched"), ("perceptron", 2, "signed"),
    ("passive-aggressive", "percent:60", "positive")])
def test_a_stream_with_eligibility_counts_read_between_its_blocks_learns_the_same(
        rule, eligibility, links):
    """Eligibility by count (SNoW's -e: a feature linked once it was active K times)
    counted across a stream's blocks, the network read between them (the parts put
    together, then split again): each feature's count goes into the parts and comes back
    with them, and the network is the one a single thread learns, to the bit, for 1 to 3
    threads."""
    X, y = _problem(n=3000, targets=4)
    learned, seen = [], []
    for jobs in (1, 2, 3):
        net = snowpy.Network(rule, eligibility=eligibility, links=links, n_jobs=jobs)
        scores = []
        for start in range(0, 3000, 600):
            net.partial_fit(X[start:start + 600], y[start:start + 600])
            scores.append(net.target_scores(X[:50]))
        learned.append(_learned(net))
        seen.append(scores)
    assert learned[0]["link_weights"].size > 0
    for other, scores in zip(learned[1:], seen[1:]):
        assert _same(learned[0], other)
        for one, two in zip(seen[0], scores):
            np.testing.assert_array_equal(one, two)


def test_shards_mixed_keep_the_averaging_clock_at_their_weighted_mean():
    """Examples learned in shards (constraint classification on two threads: 1,001
    examples, runs of 500 and 501): each copy's averaging clock moves by the examples it
    learned, and the mixed network's clock is the mean of the copies', weighted by their
    examples, rounded to the nearest whole example: 500.5005 more each epoch, so 501,
    1002, 1503 (an unweighted mean, 500.5, or a truncated one would give 500)."""
    rng = np.random.default_rng(3)
    X = sp.random(1001, 40, density=0.5, format="csr", random_state=4)
    y = np.asarray(X @ rng.normal(size=(40, 4))).argmax(1)
    net = snowpy.Network("perceptron", epochs=3, early_stop=False, multiclass="constraint",
                         n_jobs=2)
    clocks = []  # (one thread's would be 1001, 2002, 3003: below)
    for epochs in (1, 2, 3):
        net.set_params(epochs=epochs).fit(X, y)
        clocks.append(net.to_state()[0]["network"]["seen"])
    sizes = np.diff([1001 * i // 2 for i in range(3)])
    step = float(np.sum(sizes * sizes)) / 1001  # (each copy moved by its own examples)
    assert sizes.tolist() == [500, 501] and round(step, 4) == 500.5005
    assert clocks == [501, 1002, 1503]
    one = snowpy.Network("perceptron", epochs=3, early_stop=False, multiclass="constraint",
                         n_jobs=1).fit(X, y)
    assert one.to_state()[0]["network"]["seen"] == 3003  # (one thread: every example)


def _doubled_step(w, S, t, y, activation, vals, m, sqnorm, params):
    w[:m, 0] += params[0] * y * vals[:m]


def _rule(name: str, *, planes=(2.0,), mistake_driven: bool = True):
    """A plugin's additive rule whose one plane counts twice (or as ``planes`` say)."""
    import types

    from snowpy.rules import RuleKernel, RuleSpec, theta_param

    spec = RuleSpec(name=name, build=lambda p, c: RuleKernel(
        update=_doubled_step, params=[0.05], planes=planes, initial_weights=(0.0,) * len(planes),
        mistake_driven=mistake_driven), params=(theta_param(0.0),), summary="test")
    return types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: [spec]))


def _unlikely(rule: str = "doubled", **options):
    """The bias planes a target added now would start at, of a network of a and b that
    learned 4 examples (bias 0.5, theta 0.25, no calibration), with ``options``."""
    from snowpy.plugins import temporary_plugin

    with temporary_plugin(_rule("doubled"), "doubled-plugin"), \
            temporary_plugin(_rule("zero-plane", planes=(0.0,)), "zero-plugin"), \
            temporary_plugin(_rule("every-example", mistake_driven=False), "every-plugin"):
        settings = {"bias": 0.5, "theta": 0.25, "calibrate": None, "epochs": 1,
                    **options}
        net = snowpy.Network(rule, **settings).fit(sp.csr_matrix(np.eye(4)), list("abab"))
        return net.engine_


def test_a_new_targets_bias_starts_where_the_sigmoids_give_laplaces_prior():
    """A target added to a network that has learned starts at the score where the
    median sigmoid gives 1 / (n + 2) (Laplace's rule of succession), no lower than the
    negative margin nor than the lowest score the progressive window holds; its bias
    link is that score plus theta over the bias and the plane's coefficient."""
    import math

    from snowpy.calibration import Calibration
    from snowpy.network.calibrating import ProgressiveWindow

    def sigmoids(a, b, normalize="sum"):
        return Calibration(np.array(a), np.array(b), normalize=normalize, method="cv")

    engine = _unlikely()
    assert engine.n_examples_seen == 4 and list(engine.store.planes) == [2.0]
    assert engine._unlikely_bias() is None  # (no sigmoid, no margin: it would start at 0)
    # median a = -3, b = 0.75: p = 1/6 at s = (log 5 - 0.75) / -3
    engine.calibration = sigmoids([-2.0, -4.0], [0.5, 1.0])
    score = (math.log(5.0) - 0.75) / -3.0
    assert engine._unlikely_bias().tolist() == pytest.approx([(score + 0.25) / (0.5 * 2.0)],
                                                              rel=1e-12)
    assert round(score, 6) == -0.286479
    for a, normalize in (([0.25, 0.75], "sum"), ([0.0, 0.0], "sum"), ([-2.0, -4.0], "softmax"),
                         ([], "sum")):  # (no sigmoid rising with the score: the margin)
        engine.calibration = sigmoids(a, [0.5, 1.0][:len(a)], normalize)
        assert engine._unlikely_bias() is None
        engine.params["negative_thickness"] = 0.5
        assert engine._unlikely_bias().tolist() == [(-0.5 + 0.25) / 1.0]
        engine.params["negative_thickness"] = 0.0
    engine.calibration = sigmoids([-2.0, -4.0], [0.5, 1.0])
    engine.params["negative_thickness"] = 0.5  # (below the margin's side: the score)
    assert engine._unlikely_bias().tolist() == pytest.approx([score + 0.25], rel=1e-12)
    engine.params["negative_thickness"] = 0.1  # (above it: the margin)
    assert engine._unlikely_bias().tolist() == pytest.approx([-0.1 + 0.25], rel=1e-12)
    engine.params["negative_thickness"] = 0.0
    engine.progressive = window = ProgressiveWindow(2)
    window.add(np.array([[-0.2, 0.3]]), np.array([[True, False]]))
    assert window.filled == 1 and window.low == -0.2  # (no lower than a score seen)
    assert engine._unlikely_bias().tolist() == pytest.approx([-0.2 + 0.25], rel=1e-12)
    window.add(np.array([[0.0, 0.1]]), np.array([[True, False]]))
    window.low = 0.0  # (a window whose lowest score is 0: a target would start at 0)
    assert engine._unlikely_bias() is None
    engine.progressive = ProgressiveWindow(2)  # (empty: no score seen)
    assert engine._unlikely_bias().tolist() == pytest.approx([score + 0.25], rel=1e-12)


@pytest.mark.parametrize("rule, options", [
    ("winnow", {"links": "positive", "negative_thickness": 0.5}),  # multiplicative
    ("every-example", {"negative_thickness": 0.5}),  # not mistake-driven
    ("doubled", {"bias": 0.0, "negative_thickness": 0.5}),
    ("perceptron", {"initial_weight": 0.5, "negative_thickness": 0.5}),  # absent 0.5
    ("arow", {"negative_thickness": 0.5}),  # two planes
    ("zero-plane", {"negative_thickness": 0.5}),  # a plane of coefficient 0
])
def test_a_new_target_starts_at_zero_where_weights_do_not_add_so(rule, options):
    engine = _unlikely(rule, **options)
    store, kernel = engine.store, engine.kernel
    whys = [kernel.multiplicative, not kernel.mistake_driven, engine.bias <= 0,
            store.absent != 0.0, store.n_planes != 1, store.planes[0] == 0]
    assert sum(whys) == 1  # (each alone)
    assert engine._unlikely_bias() is None


def test_a_new_target_of_a_frozen_network_starts_at_zero(tmp_path):
    net = snowpy.Network("perceptron", negative_thickness=0.5, calibrate=None).fit(
        sp.csr_matrix(np.eye(4)), list("abab"))
    assert net.engine_._unlikely_bias().tolist() == [-0.5]
    net.save(tmp_path / "m.snowpy", inference_only=True)
    assert snowpy.load(tmp_path / "m.snowpy").engine_._unlikely_bias() is None


def test_targets_added_after_learning_start_unlikely_and_leave_the_others_as_they_were():
    net = snowpy.Network("perceptron", negative_thickness=0.5, bias=0.5, theta=0.25,
                         calibrate=None, shuffle=False).fit(sp.csr_matrix(np.eye(4)),
                                                            list("abab"))
    engine = net.engine_
    empty, X = sp.csr_matrix((1, 4)), sp.csr_matrix(np.eye(4))
    before = net.target_scores(X)
    engine.labels.add("c")
    engine.labels.add("d")
    engine.add_targets(2)
    after = net.target_scores(X)
    np.testing.assert_array_equal(after[:, :2], before)
    # (its bias link (-0.5 + 0.25) / 0.5: the margin's side on a document without features)
    assert net.target_scores(empty)[0, 2:].tolist() == [-0.5, -0.5]
    np.testing.assert_array_equal(after[:, 2:], np.full((4, 2), -0.5))
    fresh = snowpy.Network("perceptron", negative_thickness=0.5, calibrate=None)
    fresh.start(4, ["a"])
    fresh.engine_.labels.add("b")
    fresh.engine_.add_targets(1)  # (a network that learned nothing: targets at 0)
    assert fresh.target_scores(empty)[0].tolist() == [-0.0, -0.0]


def test_labels_met_after_calibrating_are_named_in_one_warning_five_at_most():
    from snowpy.exceptions import CalibrationWarning

    X = sp.csr_matrix(np.eye(8)[[0, 1] * 20])
    net = snowpy.Network("perceptron", calibrate="cv").fit(X, list("ab") * 20)
    engine = net.engine_
    for labels, named in ((list("cdefg"), "c, d, e, f, g"), (list("hijklm"), "h, i, j, k, l ...")):
        for label in labels:
            engine.labels.add(label)
        with pytest.warns(CalibrationWarning) as said:
            engine.add_targets(len(labels))
        assert [str(w.message) for w in said] == [
            f"label(s) {named} came after calibrating: they get the other labels' median "
            "sigmoid until the model is calibrated again (trained again; trained with "
            "calibrate='progressive', its sigmoids follow the stream)"]
        assert engine.calibration.a.size == len(engine.labels)
    assert engine.calibration.a[2:].tolist() == [float(np.median(engine.calibration.a[:2]))] * 11


def _raising_step(w, S, t, y, activation, vals, m, sqnorm, params):
    raise ValueError("kernel gave up")


def _nan_step(w, S, t, y, activation, vals, m, sqnorm, params):
    w[:m, 0] = np.nan


def _kernels():
    """Rules whose step fails: a Python function raising, a numba function raising (its
    exceptions collected), a cfunc of the C ABI returning non-zero."""
    import numba

    from snowpy.numba_kernels import UPDATE

    @numba.cfunc(UPDATE)
    def refusing(w, m, n_planes, state, n_targets, state_size, t, y, activation, vals,
                 sqnorm, params, n_params, user_data):  # pragma: no cover - compiled
        return 1

    return {"raising-python": _raising_step,
            "raising-numba": numba.njit(nogil=True)(_raising_step), "refusing": refusing}


@pytest.mark.parametrize("name, fitted, one, cause", [
    ("raising-python", "raised ValueError: kernel gave up", "raised ValueError: kernel gave up",
     True),
    ("raising-numba", "raised ValueError: kernel gave up (4 time(s))",
     "raised ValueError: kernel gave up (1 time(s))", False),
    ("refusing", "returned an error", "returned an error", False),
])
def test_a_rules_failing_step_stops_training_naming_the_rule_and_its_plugin(name, fitted, one,
                                                                              cause, monkeypatch):
    import types

    from snowpy.exceptions import PluginError
    from snowpy.plugins import temporary_plugin
    from snowpy.rules import RuleKernel, RuleSpec, theta_param

    update = _kernels()[name]
    spec = RuleSpec(name=name, build=lambda p, c: RuleKernel(update=update, params=[0.5]),
                    params=(theta_param(0.0),), summary="test")
    plugin = types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: [spec]))
    provided = f" (plugin '{name}-plugin', registered at run time)"
    with temporary_plugin(plugin, f"{name}-plugin"):
        with pytest.raises(PluginError) as refused:
            snowpy.Network(name).fit(np.eye(4), [0, 1, 0, 1])
        assert str(refused.value) == \
            f"the update kernel of rule '{name}'{provided} {fitted}; training stopped"
        assert (repr(refused.value.__cause__) == "ValueError('kernel gave up')") == cause
        net = snowpy.Network(name)
        with pytest.raises(PluginError) as refused:
            for i in range(4):
                net.learn_one({i: 1.0}, i % 2)
        assert str(refused.value) == \
            f"the update kernel of rule '{name}'{provided} {one}; training stopped"
    with pytest.raises(PluginError) as refused:  # (a rule given as its spec: no plugin)
        snowpy.Network(spec).fit(np.eye(4), [0, 1, 0, 1])
    assert str(refused.value) == f"the update kernel of rule '{name}' {fitted}; training stopped"

    def unreadable():
        raise RuntimeError("a plugin failed to load")

    with temporary_plugin(plugin, f"{name}-plugin"):  # (the plugins unreadable: no plugin
        monkeypatch.setattr("snowpy.plugins.list_rules", unreadable)  # named, one line)
        with pytest.raises(PluginError) as refused:
            snowpy.Network(spec).fit(np.eye(4), [0, 1, 0, 1])
    assert str(refused.value) == f"the update kernel of rule '{name}' {fitted}; training stopped"


def test_a_rule_that_makes_nan_one_example_at_a_time_is_named_with_its_parameters():
    import types

    from snowpy.exceptions import NumericalError
    from snowpy.plugins import temporary_plugin
    from snowpy.rules import RuleKernel, RuleSpec, theta_param

    spec = RuleSpec(name="nan-online", build=lambda p, c: RuleKernel(
        update=_nan_step, params=[0.5, 2.0]), params=(theta_param(0.0),), summary="test")
    plugin = types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: [spec]))
    with temporary_plugin(plugin, "nan-online-plugin"):
        net = snowpy.Network("nan-online")
        with pytest.raises(NumericalError) as refused:
            net.learn_one({0: 1.0}, "a")
            net.learn_one({1: 1.0}, "b")
    assert str(refused.value) == "rule 'nan-online' produced NaN; check its parameters [0.5, 2.0]"


def test_the_weights_prediction_uses_are_laid_out_link_by_link():
    """The bias and each feature's weight to every target, and whether each is a link of
    its own (a missing link and a feature never seen weigh the absent weight): what
    explain lays out, the score's terms."""
    X = sp.csr_matrix([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    net = snowpy.Network("perceptron", epochs=1, calibrate=None).fit(X, ["a", "b"])
    weights, linked = net.engine_.link_weights([-1, 0, 1, 2])
    assert weights.dtype == np.float64 and linked.dtype == bool
    expected = np.array([[-0.05, -0.05], [0.0, -0.1], [-0.05, 0.05], [0.0, 0.0]], np.float32)
    assert weights.tolist() == expected.astype(np.float64).tolist()  # (kept in float32)
    assert linked.tolist() == [[True, True], [False, True], [True, True], [False, False]]
    np.testing.assert_allclose(weights[0] + weights[1], net.target_scores(X[0])[0], rtol=1e-6)


def _moved(net, averaged):
    """The links' prediction weights' distances from a missing link's, the bias row's
    apart: those of the links that moved, read off the links as prediction uses them."""
    net.engine_.ensure_fresh()  # (a rule's derived weights, as prediction reads them)
    store = net.engine_.store
    links = store.links_csr(averaged=averaged)
    distance = np.abs(links.data - store.absent)
    bias = np.zeros(links.data.size, bool)
    bias[links.indptr[0]:links.indptr[1]] = True
    return distance, bias


@pytest.mark.parametrize("rule, options, initial", [
    ("balanced-winnow", {}, True),  # (w+ - w-, below 1: the initial effective weight)
    ("perceptron", {}, False),  # (weights from 0: the mean distance of those that moved)
    ("naive-bayes", {}, False),  # (derived weights: likewise, whatever the initial weight)
])
def test_discard_measures_links_against_the_initial_weight_or_the_mean_moved(rule, options,
                                                                             initial):
    from concurrent.futures import ThreadPoolExecutor

    X, y = _problem(n=300, d=120, targets=3)
    for averaged in (True, False):
        net = snowpy.Network(rule, epochs=2, discard=None, average=averaged, **options).fit(X, y)
        engine = net.engine_
        distance, bias = _moved(net, averaged)
        moved = distance[distance > 0]
        scale = float(moved.sum()) / moved.size
        if initial:
            scale = engine.kernel.initial_effective_weight
            assert 0 < scale < 1
        assert engine.discard_scale([engine.store], averaged=averaged) == \
            pytest.approx(scale, rel=1e-9)
        with ThreadPoolExecutor(2) as pool:  # (the same number read on threads)
            assert engine.discard_scale([engine.store], averaged=averaged, pool=pool) == \
                engine.discard_scale([engine.store], averaged=averaged)
        assert engine.discard(None, averaged=averaged) == 0
        negligible = int(np.sum((distance < scale) & ~bias))
        assert 0 < negligible < distance.size
        links = net.n_links_
        assert engine.discard(1.0, averaged=averaged) == negligible
        assert net.n_links_ == links - negligible
        kept, bias = _moved(net, averaged)
        assert np.all(kept[~bias] >= scale)


def test_a_network_whose_links_never_moved_discards_none():
    net = snowpy.Network("perceptron")
    net.start(4, ["a", "b"])
    assert net.engine_.discard_scale([net.engine_.store], averaged=True) == 0.0
    assert net.engine_.discard(0.5, averaged=True) == 0


def _infinite_refresh(W, target, bias, S, params):
    W[:, 0] = np.where(target == 1, np.inf, 0.5)


def test_a_rules_refresh_that_makes_infinite_weights_is_named():
    import types

    from snowpy.exceptions import NumericalError
    from snowpy.plugins import temporary_plugin
    from snowpy.rules import RuleKernel, RuleSpec, theta_param

    spec = RuleSpec(name="infinite-refresh", build=lambda p, c: RuleKernel(
        update=_doubled_step, params=[0.5], refresh=_infinite_refresh),
        params=(theta_param(0.0),), summary="test")
    plugin = types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: [spec]))
    with temporary_plugin(plugin, "infinite-refresh-plugin"):
        with pytest.raises(NumericalError) as refused:  # (at the fit's end)
            snowpy.Network("infinite-refresh", calibrate=None).fit(np.eye(3), [0, 1, 0])
    assert str(refused.value) == "rule 'infinite-refresh': refresh produced non-finite weights"


def test_scores_read_from_a_table_or_link_by_link_are_the_same_averaged_or_not():
    X, y = _problem(n=300, d=120, targets=3)
    engine = snowpy.Network("perceptron", epochs=2).fit(X, y).engine_  # (averaged)
    scores = {(averaged, table): engine.scores(X[:50], averaged=averaged, table=table)
              for averaged in (True, False) for table in (False, True)}
    for averaged in (True, False):
        np.testing.assert_array_equal(scores[averaged, True], scores[averaged, False])
    assert not np.array_equal(scores[True, False], scores[False, False])
    assert set(engine.cache.effective) == {True, False}  # (a table kept for each)
    table = engine.effective_delta(True)
    assert engine.effective_delta(True) is table  # (made once, until the weights change)
    engine.cache.invalidate()
    assert engine.effective_delta(True) is not table
    np.testing.assert_array_equal(engine.effective_delta(True), table)
