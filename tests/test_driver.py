"""Cross-fitted calibration's out-of-fold scores (``snowpy/network/driver.py``:
``folds``, ``held_out_scores``) worked out from what they promise: each fold scored by a
network of the same class and parameters trained, by its own fit, on the other folds; a
label the other folds never met scoring below every score of that network; the folds
drawn by the examples' keys and the seed; each fold a phase of the progress report,
whose stop request stops a fold's training."""

import types
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import snowpy
from snowpy.exceptions import CalibrationWarning, ConfigurationError
from snowpy.network.driver import folds, held_out_scores
from snowpy.network.labels import LabelIndex, label_index
from snowpy.network.driver import example_keys
from snowpy.progress import Progress


def problem(n=48, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, 40, density=0.2, random_state=rng, format="csr")
    X.data[:] = rng.integers(1, 4, X.data.size)
    y = np.array(["a", "b"] * (n // 2), dtype=object)
    for i in range(n):
        X[i, y[i] == "a"] = 3.0  # (a feature per label, so that they are learned)
    y[5] = "c"  # a label of one example: the other folds never meet it
    return sp.csr_matrix(X), y


def keys_of(X, y):
    labels = LabelIndex(sorted(set(y)))
    y_indptr, y_targets = labels.encode(y, multilabel=False, grow=False)
    return example_keys(X, y_indptr, y_targets), labels


@pytest.mark.parametrize("params", [
    {"rule": "perceptron", "epochs": 3, "shuffle": True, "seed": 11},
    {"rule": "winnow", "epochs": 2, "shuffle": False, "seed": None, "discard": 0.9},
    {"rule": "passive-aggressive", "epochs": 2, "links": "positive", "eligibility": "percent:50",
     "seed": 4},
])
def test_each_fold_is_scored_by_a_network_fitted_on_the_other_folds(params):
    X, y = problem()
    keys, labels = keys_of(X, y)
    net = snowpy.Network(**params, calibrate="cv:4")
    scores, positives, covered, drawn, _ = held_out_scores(net, X, y, None, labels, False)
    np.testing.assert_array_equal(drawn, keys)
    assert covered.all() and scores.dtype == np.float32
    np.testing.assert_array_equal(positives, np.array([[v == c for c in "abc"] for v in y]))
    cut = folds(keys, 4, params["seed"])
    assert sorted(np.concatenate(cut).tolist()) == list(range(48))
    for held in cut:
        train = np.setdiff1d(np.arange(48), held)
        fitted = snowpy.Network(**params).fit(X[train], y[train])  # (its own fit)
        expected = np.full((held.size, 3), 0.0)
        own = fitted.target_scores(X[held])
        for column, label in enumerate(fitted.classes_):
            expected[:, "abc".index(label)] = own[:, column]
        if "c" not in fitted.classes_:  # the fold holding the one "c"
            assert 5 in held
            expected[:, 2] = own.min() - 1.0  # below every score of its network
        np.testing.assert_allclose(scores[held], expected.astype(np.float32), rtol=1e-6)
    holdout = snowpy.Network(**params, calibrate="holdout:4")
    _, _, covered, _, _ = held_out_scores(holdout, X, y, None, labels, False)
    assert np.flatnonzero(covered).tolist() == sorted(cut[0].tolist())  # the first fold only


def test_fold_networks_trained_elsewhere_score_as_those_held_out_scores_trains():
    """A cluster's shard gives each example's fold and the fold networks its rounds
    trained: held_out_scores scores them as it scores the networks it trains itself (the
    same scores, the same examples covered), a label a fold's network never met left NaN
    and each fold's lowest score written out, from which the one-process fill (that
    lowest less 1) is made; a fold whose network learned nothing scores none."""
    X, y = problem()
    keys, labels = keys_of(X, y)
    params = {"rule": "perceptron", "epochs": 3, "shuffle": True, "seed": 11}
    alone, _, _, _, _ = held_out_scores(snowpy.Network(**params, calibrate="cv:4"), X, y, None,
                                     labels, False)
    cut = folds(keys, 4, 11)
    fold = np.empty(48, np.int64)
    networks = []
    for f, held in enumerate(cut):
        fold[held] = f
        train = np.setdiff1d(np.arange(48), held)
        networks.append((snowpy.Network(**params).fit(X[train], y[train],
                                                      shuffle_keys=keys[train]), None))
    lowest = np.full(4, np.inf)
    scores, positives, covered, _, _ = held_out_scores(None, X, y, None, labels, False,
                                                    keys=keys, fold=fold,
                                                    networks=networks, lowest=lowest)
    assert covered.all()
    np.testing.assert_array_equal(positives, np.array([[v == c for c in "abc"] for v in y]))
    missing = np.isnan(scores)
    assert missing.sum() == cut[fold[5]].size and missing[:, 2].sum() == missing.sum()
    np.testing.assert_array_equal(scores[~missing], alone[~missing])
    for f, (net, _) in enumerate(networks):
        assert lowest[f] == net.target_scores(X[cut[f]]).min()
    filled = np.where(missing, (lowest[fold] - 1.0)[:, None], scores).astype(np.float32)
    np.testing.assert_array_equal(filled, alone)
    networks[1] = None  # (it learned nothing)
    _, _, covered, _, _ = held_out_scores(None, X, y, None, labels, False, keys=keys,
                                       fold=fold, networks=networks, lowest=lowest)
    assert np.flatnonzero(~covered).tolist() == sorted(cut[1].tolist())


def test_the_folds_follow_the_seed_and_the_examples_not_their_places():
    X, y = problem()
    keys, labels = keys_of(X, y)
    seeded = [sorted(fold.tolist()) for fold in folds(keys, 3, 7)]
    assert seeded != [sorted(fold.tolist()) for fold in folds(keys, 3, 8)]
    unseeded = folds(keys, 3, None)  # (no seed: folds all the same, run after run)
    assert [f.tolist() for f in unseeded] == [f.tolist() for f in folds(keys, 3, None)]
    assert [len(f) for f in folds(keys, 5, 7)] == [10, 10, 10, 9, 9]  # the first n % k longer
    net = snowpy.Network("perceptron", seed=8, calibrate="holdout:3")
    _, _, covered, _, _ = held_out_scores(net, X, y, None, labels, False)
    assert np.flatnonzero(covered).tolist() == sorted(folds(keys, 3, 8)[0].tolist())
    backwards = folds(keys[::-1], 3, 7)
    assert [sorted((47 - f).tolist()) for f in backwards] == seeded


def test_folds_too_small_to_train_or_score_are_passed_over():
    """Two examples in three folds: a fold of one example trains on the other (one
    label, so the held-out label scores below it), and the empty fold is passed over."""
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0]]))
    y = np.array(["a", "b"], dtype=object)
    keys, labels = keys_of(X, y)
    net = snowpy.Network("perceptron", calibrate="cv:3", epochs=1)
    scores, positives, covered, _, _ = held_out_scores(net, X, y, None, labels, False)
    assert covered.tolist() == [True, True]
    for held in folds(keys, 3, 0)[:2]:
        other = 1 - held[0]
        own = snowpy.Network("perceptron", epochs=1).fit(X[[other]], y[[other]]) \
            .target_scores(X[held])
        assert scores[held[0], other] == np.float32(own.ravel()[0])
        assert scores[held[0], held[0]] == np.float32(own.min() - 1.0)


def test_sequential_targets_are_each_folds_own_examples():
    """SNoW's sequential model (targets=): each fold's network learns its examples with
    their own lists of targets."""
    X, y = problem()
    keys, labels = keys_of(X, y)
    targets = [["a", "b", "c"] if i % 3 else ["a", "b"] for i in range(48)]
    targets[5] = ["c", "a"]
    net = snowpy.Network("perceptron", calibrate="cv:3", epochs=2, seed=3)
    scores, _, _, _, _ = held_out_scores(net, X, y, targets, labels, False)
    for held in folds(keys, 3, 3):
        train = np.setdiff1d(np.arange(48), held)
        fitted = snowpy.Network("perceptron", epochs=2, seed=3).fit(
            X[train], y[train], targets=[targets[i] for i in train])
        own = fitted.target_scores(X[held])
        for column, label in enumerate(fitted.classes_):
            np.testing.assert_allclose(scores[held, "abc".index(label)],
                                       own[:, column].astype(np.float32), rtol=1e-6)


class Report(Progress):
    def __init__(self, stop_at=None):
        self.phases, self.calls, self.stop_at = [], 0, stop_at

    def phase(self, name, total=None):
        self.phases.append(name)

    def check_stop(self):
        self.calls += 1
        if self.stop_at is not None and self.calls >= self.stop_at:
            raise KeyboardInterrupt


def test_each_fold_is_a_phase_and_a_stop_request_stops_its_training():
    X, y = problem()
    keys, labels = keys_of(X, y)
    net = snowpy.Network("perceptron", calibrate="cv:3", epochs=2)
    report = Report()
    held_out_scores(net, X, y, None, labels, False, progress=report)
    assert report.phases == [f"calibration fold {i} of 3" for i in (1, 2, 3)]
    assert report.calls > 0  # (the folds' trainings asked whether to stop)
    stopping = Report(stop_at=1)
    with pytest.raises(KeyboardInterrupt):
        held_out_scores(net, X, y, None, labels, False, progress=stopping)
    assert stopping.phases == ["calibration fold 1 of 3"]  # stopped in the first fold


def test_a_fold_network_learns_multi_label_sets():
    X, y = problem()
    sets = [[v, "z"] if i % 4 == 0 else [v] for i, v in enumerate(y)]
    labels = label_index(sets, True)
    net = snowpy.Network("perceptron", calibrate="cv:3", epochs=2, shuffle=False)
    scores, positives, covered, keys, _ = held_out_scores(net, X, sets, None, labels, True)
    assert covered.all()
    assert positives.sum(axis=1).tolist() == [len(s) for s in sets]
    for held in folds(keys, 3, 0):
        train = np.setdiff1d(np.arange(48), held)
        fitted = snowpy.Network("perceptron", epochs=2, shuffle=False).fit(
            X[train], [sets[i] for i in train])
        own = fitted.target_scores(X[held])
        for column, label in enumerate(fitted.classes_):
            np.testing.assert_allclose(scores[held, labels.find(label)],
                                       own[:, column].astype(np.float32), rtol=1e-6)


@pytest.mark.parametrize("links", ["touched", "positive"])
def test_examples_learned_in_shards_mix_each_shards_changes(links):
    """A binary filter on three threads learns each epoch's examples in shards (256
    examples: two runs of 128), each in a copy of the network, then mixed as the
    module says (iterative parameter mixing): a link moves by the mean of its changes
    over the shards that changed it; the progressive window holds each shard's scores
    before learning, in turn; the figures (mistakes, promotions, demotions, examples)
    add up. Each shard's copy is worked out as a network of its own fitted on its run;
    with ``links="positive"``, the links each shard made for its examples' labels."""
    rng = np.random.default_rng(5)
    X = sp.random(256, 30, density=0.4, format="csr", random_state=6).toarray()
    X[:128, 25:] = X[128:, 20:25] = 0.0  # (features only one run holds)
    X = sp.csr_matrix(X)
    y = np.where(np.asarray(X @ rng.normal(size=30)).ravel() > 0, "pos", "neg")
    options = dict(epochs=1, shuffle=False, calibrate="progressive", discard=None,
                   links=links)
    seen = []
    net = snowpy.Network("passive-aggressive", n_jobs=3, **options).fit(
        X, y, progress=lambda *figures: seen.append(figures))
    runs = [snowpy.Network("passive-aggressive", **options).fit(X[part], y[part])
            for part in (slice(0, 128), slice(128, 256))]
    assert all(run.classes_.tolist() == ["neg", "pos"] for run in runs)
    changes = [np.asarray(run.coef_.toarray() if sp.issparse(run.coef_) else run.coef_)
               for run in runs]
    coef = net.coef_.toarray() if sp.issparse(net.coef_) else np.asarray(net.coef_)
    changed = (changes[0] != 0).astype(int) + (changes[1] != 0)
    expected = (changes[0] + changes[1]) / np.maximum(changed, 1)
    assert changed.max() == 2 and (changed == 1).any()  # (both kinds of link)
    np.testing.assert_allclose(coef, expected, atol=1e-6)
    assert net.mistakes_ == [runs[0].mistakes_[0] + runs[1].mistakes_[0]]
    assert net.n_examples_seen_ == 256 and net.engine_.underflows == 0
    for mine, theirs in ((net.engine_.promotions, [r.engine_.promotions for r in runs]),
                         (net.engine_.demotions, [r.engine_.demotions for r in runs])):
        assert mine.tolist() == (theirs[0] + theirs[1]).tolist()
    window = net.engine_.progressive.arrays()
    for kept, parts in zip(window, zip(*(run.engine_.progressive.arrays() for run in runs))):
        np.testing.assert_array_equal(kept, np.vstack(parts))
    assert seen == [(0, 256, 256, net.mistakes_[0])]  # (an epoch's report, whole)
    assert net.calibration_ is not None


def _caught(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [(w.category, str(w.message)) for w in caught]


def test_a_fold_that_learned_one_class_is_said_once_in_calibrations_words():
    """Three documents in three folds: a fold's network learned from one class only.
    Said once, as calibration's warning (not the fold
    network's "y holds one class only", of a fit the user never made), naming the
    first such fold's class; a corpus whose every fold learned both classes, and
    multi-label sets (a fold of one label is no single class), are said nothing."""
    texts = ["cheap pills now", "meeting at noon", "win cash now"]
    labels = ["spam", "ham", "spam"]
    _, said = _caught(lambda: snowpy.SnowClassifier(calibrate="cv:3").fit(texts, labels))
    assert said == [(CalibrationWarning,
                     "3 documents are too few to calibrate on 3 folds: a fold learned from "
                     "one class only ('spam'), and the probabilities say little; train on "
                     "more documents, or with calibrate='none'")]
    X, y = problem()
    y[5] = "a"
    for net in (snowpy.Network("perceptron", calibrate="cv:2"),
                snowpy.Network("perceptron", calibrate="cv:4", seed=3)):
        _, said = _caught(lambda: net.fit(X, y))
        assert said == []
    sets = [["a"], ["a"], ["a", "b"]]
    _, said = _caught(lambda: snowpy.Network("perceptron", calibrate="cv:3").fit(
        sp.csr_matrix(np.eye(3)), sets))
    assert said == []


def test_the_callers_keys_draw_the_folds_and_shuffle_each_folds_training():
    """Keys the caller gives (``shuffle_keys``: SnowClassifier's, of the texts) draw the
    folds and order each fold's shuffled epochs, as the fold's own fit given them; with
    ``refold``, each fold learns and scores rows weighed from its own examples."""
    X, y = problem()
    y[5] = "a"
    keys, labels = keys_of(X, y)
    given = keys[::-1].copy()  # (keys, but not these examples' own)
    params = {"rule": "perceptron", "epochs": 3, "shuffle": True, "seed": 2,
              "early_stop": False}

    def refold(rows, fold_labels):
        counts = np.asarray((rows != 0).sum(axis=0)).ravel() + 1.0
        return lambda other: sp.csr_matrix(other.multiply(1.0 / counts).tocsr())

    for weighed in (None, refold):
        net = snowpy.Network(**params, calibrate="cv:3")
        scores, _, covered, drawn, _ = held_out_scores(net, X, y, None, labels, False,
                                                       keys=given, refold=weighed)
        assert drawn is given and covered.all()
        assert not all(np.array_equal(a, b) for a, b in zip(folds(given, 3, 2),
                                                               folds(keys, 3, 2)))
        for held in folds(given, 3, 2):
            train = np.setdiff1d(np.arange(48), held)
            weigh = (lambda rows: rows) if weighed is None else weighed(X[train], y[train])
            fitted = snowpy.Network(**params).fit(weigh(X[train]), y[train],
                                                  shuffle_keys=given[train])
            np.testing.assert_allclose(scores[held], fitted.target_scores(
                weigh(X[held])).astype(np.float32), rtol=1e-6)


def test_a_single_example_is_scored_by_no_fold_and_each_fold_is_announced():
    X = sp.csr_matrix(np.array([[1.0, 0.0]]))
    y = np.array(["a"], dtype=object)
    _, labels = keys_of(X, y)
    report = Report()
    net = snowpy.Network("perceptron", calibrate="cv:2")
    scores, positives, covered, _, _ = held_out_scores(net, X, y, None, labels, False,
                                                       progress=report)
    assert covered.tolist() == [False] and scores.tolist() == [[0.0]]
    assert positives.tolist() == [[True]]
    assert report.phases == ["calibration fold 1 of 2", "calibration fold 2 of 2"]


def test_clamped_updates_are_counted_over_the_epochs_and_said_once_per_fit():
    """A fit's clamped updates, every epoch's, are said once and
    added to the network's count: the same as three one-epoch calls learning the same
    network, each said apart."""
    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random((60, 40)) < 0.1).astype(float))
    y = np.array(["a"] * 60)

    def network(epochs):  # (an infinite thickness: 10x on every example, past 1e100)
        return snowpy.Network("winnow", alpha=10, theta=1.0, thickness=float("inf"),
                              initial_weight=1, epochs=epochs, precision="float64",
                              shuffle=False, early_stop=False)

    def clamped(said):
        return [(category, message.split(" ")[0]) for category, message in said
                if category is snowpy.NumericalWarning]

    three, said = _caught(lambda: network(3).fit(X, y))
    one = network(1)
    each = [clamped(_caught(lambda: one.fit(X, y))[1])]
    for _ in range(2):
        each.append(clamped(_caught(lambda: one.partial_fit(X, y))[1]))
    np.testing.assert_array_equal(three.decision_function(X), one.decision_function(X))
    assert each == [[], [(snowpy.NumericalWarning, "21")], [(snowpy.NumericalWarning, "60")]]
    assert clamped(said) == [(snowpy.NumericalWarning, "81")]
    assert [message for category, message in said
            if category is snowpy.NumericalWarning] == [
        "81 weight updates exceeded the largest magnitude kept (1e+100) and were clamped; "
        "use milder promotion/demotion, or a bias strength closer to the feature strengths"]
    assert three.engine_.overflows == one.engine_.overflows == 81


class EverySix(Progress):
    every = 6

    def __init__(self):
        self.done = []

    def __call__(self, epoch, done, total, mistakes):
        self.done.append(done)


def test_progress_is_called_after_1_2_4_8_examples_and_at_every_multiple_it_asks_for():
    """fit's ``progress(epoch, done, total, mistakes)``: after 1, 2, 4, 8... examples of
    each epoch, and at every multiple of a report's ``every`` (SNoW's ``-c k``); the
    same network as learned without it."""
    X, y = problem(n=20)
    calls = []
    net = snowpy.Network("perceptron", epochs=2, shuffle=False, early_stop=False).fit(
        X, y, progress=lambda *figures: calls.append(figures[:3]))
    assert calls == [(epoch, done, 20) for epoch in (0, 1) for done in (1, 2, 4, 8, 16, 20)]
    plain = snowpy.Network("perceptron", epochs=2, shuffle=False, early_stop=False).fit(X, y)
    np.testing.assert_array_equal(net.decision_function(X), plain.decision_function(X))

    report = EverySix()
    snowpy.Network("perceptron", epochs=1).fit(X, y, progress=report)
    assert report.done == [1, 2, 4, 6, 8, 12, 16, 18, 20]

    # on two and three threads (three targets: two parts, or one each), the same calls
    # and network
    y3 = np.array(list("abc") * 7)[:20]
    for jobs in (1, 2, 3):
        calls = []
        threaded = snowpy.Network("perceptron", epochs=2, shuffle=False, early_stop=False,
                                  n_jobs=jobs).fit(
            X, y3, progress=lambda *figures: calls.append(figures[:3]))
        assert calls == [(epoch, done, 20) for epoch in (0, 1) for done in (1, 2, 4, 8, 16, 20)]
        if jobs == 1:
            alone = threaded.decision_function(X)
        np.testing.assert_array_equal(threaded.decision_function(X), alone)


def test_naive_bayes_predicts_each_example_from_the_counts_at_the_last_power_of_two():
    """A rule that derives its scores (Naive Bayes) learns each example once whatever the
    epochs (SNoW's -B), predicting example i (its mistake counted) from the counts
    refreshed when the examples seen reached 1, 2, 4, 8...: the network fitted on the
    first such examples; with a progress report, or in calls of any size, the same.
    (On these examples the counts of every example so far predict the same, so this
    holds the figures and the one pass, not where the refreshes fall.)"""
    rng = np.random.default_rng(1)
    y = np.array(["a", "b"] * 20, dtype=object)
    X = rng.integers(1, 4, (40, 12)).astype(float)  # (every feature in every example:
    X[:, 0] += 2 * (y == "a")                       #  the counts of any first examples
    X[:, 1] += 2 * (y == "b")                       #  know the same features)
    X = sp.csr_matrix(X)
    expected = 0  # (example 0: nothing counted, a tie, the first target: right)
    for i in range(1, 40):
        seen = 1 << (i.bit_length() - 1)  # (the last power of two up to i)
        fitted = snowpy.Network("naive-bayes", discard=None).partial_fit(
            X[:seen], y[:seen], classes=["a", "b"])
        expected += fitted.predict(X[i])[0] != y[i]
    assert expected == 20  # (worked out above: 1, 1, 2, 4, 8 and 4 by power of two)
    net = snowpy.Network("naive-bayes", epochs=3, discard=None, shuffle=False)
    net.fit(X, y)
    assert net.mistakes_ == [expected] and net.n_examples_seen_ == 40
    reported = snowpy.Network("naive-bayes", epochs=3, discard=None, shuffle=False).fit(
        X, y, progress=lambda *figures: None)
    every = EverySix()  # (refreshed at the powers of two only, not at 6, 12, 18...)
    cut = snowpy.Network("naive-bayes", discard=None, shuffle=False).fit(X, y, progress=every)
    assert every.done[:5] == [1, 2, 4, 6, 8] and cut.mistakes_ == [expected]
    streamed = snowpy.Network("naive-bayes", discard=None)
    for start, stop in ((0, 3), (3, 10), (10, 11), (11, 40)):
        streamed.partial_fit(X[start:stop], y[start:stop], classes=["a", "b"])
    assert reported.mistakes_ == [expected] and sum(streamed.mistakes_) == expected
    whole = snowpy.Network("naive-bayes", discard=None).fit(X, y)
    for other in (net, reported, streamed):
        np.testing.assert_allclose(other.decision_function(X), whole.decision_function(X))


class _Cache:
    """Examples a block at a time (the Blocks protocol), each block as it stands (order
    None) when not shuffled."""

    def __init__(self, X, y, cuts):
        self.X, self.y, self.cuts = X, y, cuts
        self.n, self.nnz, self.width = X.shape[0], X.nnz, X.shape[1]
        self.labels, self.multilabel = sorted(set(y.tolist())), False

    def epoch(self, salt):
        assert salt is None
        for start, stop in zip(self.cuts[:-1], self.cuts[1:]):
            yield self.X[start:stop], self.y[start:stop], None


def test_blocks_as_they_stand_learn_the_network_fit_learns_in_memory():
    X, y = problem(n=30)
    y[5] = "a"
    options = dict(epochs=3, shuffle=False, early_stop=False, discard=None)
    cached = snowpy.Network("perceptron", **options).fit(_Cache(X, y, [0, 7, 8, 30]))
    whole = snowpy.Network("perceptron", **options).fit(X, y)
    assert cached.mistakes_ == whole.mistakes_ and cached.n_examples_seen_ == 90
    np.testing.assert_array_equal(cached.decision_function(X), whole.decision_function(X))


class _Reports(snowpy.progress.Progress):
    """Every phase and report a training makes, in order."""

    def __init__(self):
        self.calls = []

    def phase(self, name, total=None):
        self.calls.append((name, total))

    def __call__(self, epoch, done, total, mistakes):
        self.calls.append((epoch, done, total, mistakes))


@pytest.mark.parametrize("rule, options", [
    ("winnow", dict(discard=0.5)),  # (its initial weight: theta / the examples' features)
    ("perceptron", dict(links="positive", eligibility="percent:50", discard=None)),
    ("perceptron", dict(calibrate="progressive", discard=None)),
])
def test_blocks_learn_report_and_calibrate_as_fit_in_memory(rule, options):
    X, y = problem(n=30)
    options = dict(epochs=2, shuffle=False, early_stop=False, **options)
    reports, whole_reports = _Reports(), _Reports()
    cached = snowpy.Network(rule, **options).fit(_Cache(X, y, [0, 7, 8, 30]),
                                                  progress=reports)
    whole = snowpy.Network(rule, **options).fit(X, y, progress=whole_reports)
    phases = [call for call in reports.calls if isinstance(call[0], str)]
    assert phases == [call for call in whole_reports.calls if isinstance(call[0], str)]
    assert phases[0] == ("training", 60)
    if options.get("calibrate"):
        assert phases == [("training", 60), ("calibrating", None)]
    for epoch in (0, 1):  # (reports also at the blocks' ends: the same mistakes in all)
        mistakes = [call[3] for call in reports.calls if call[0] == epoch]
        assert sum(mistakes) == whole.mistakes_[epoch] and mistakes[-1:] != []
    assert cached.n_links_ == whole.n_links_
    np.testing.assert_array_equal(cached.decision_function(X), whole.decision_function(X))
    if options.get("calibrate"):
        np.testing.assert_array_equal(cached.predict_proba(X), whole.predict_proba(X))


def test_one_block_of_one_example_starts_winnow_as_fit_does():
    X, y = problem(n=8)
    with pytest.warns(UserWarning, match="one class only"):
        whole = snowpy.Network("winnow", discard=None, shuffle=False).fit(X[:1], y[:1])
    cached = snowpy.Network("winnow", discard=None, shuffle=False).fit(
        _Cache(X[:1], y[:1], [0, 1]))
    assert cached.engine_.store.absent == whole.engine_.store.absent
    np.testing.assert_array_equal(cached.decision_function(X), whole.decision_function(X))


def test_blocks_of_label_sets_learn_the_multilabel_network():
    X, y = problem(n=30)
    sets = np.empty(30, dtype=object)
    sets[:] = [(label, "z") if i % 3 else (label,) for i, label in enumerate(y)]
    cache = _Cache(X, sets, [0, 10, 30])
    cache.labels, cache.multilabel = ["c", "a", "z", "b"], True
    options = dict(epochs=2, shuffle=False, discard=None)
    cached = snowpy.Network("perceptron", **options).fit(cache)
    whole = snowpy.Network("perceptron", **options).fit(X, list(sets))
    assert cached.multilabel_ and cached.classes_.tolist() == ["a", "b", "c", "z"]
    assert cached.predict(X) == whole.predict(X)
    np.testing.assert_array_equal(cached.decision_function(X), whole.decision_function(X))


def test_blocks_of_labels_longer_than_a_letter_keep_them_whole():
    X, y = problem(n=30)
    words = np.array([{"a": "spam", "b": "ham", "c": "eggs"}[label] for label in y],
                     dtype=object)
    options = dict(epochs=2, shuffle=False, discard=None)
    cached = snowpy.Network("perceptron", **options).fit(_Cache(X, words, [0, 12, 30]))
    whole = snowpy.Network("perceptron", **options).fit(X, words)
    assert cached.classes_.tolist() == ["eggs", "ham", "spam"]
    np.testing.assert_array_equal(cached.decision_function(X), whole.decision_function(X))


def test_blocks_are_refused_cross_fitted_calibration_and_negative_strengths_for_winnow():
    X, y = problem(n=30)
    with pytest.raises(ConfigurationError) as refused:
        snowpy.Network("perceptron", calibrate="cv").fit(_Cache(X, y, [0, 30]))
    assert str(refused.value) == ("calibrate='cv' fits held-out folds in memory; blocks "
                                  "are calibrated progressively")
    negative = X.copy()
    negative.data[-1] = -1.0
    with pytest.raises(ConfigurationError) as refused:
        snowpy.Network("winnow").fit(_Cache(negative, y, [0, 20, 30]))
    assert str(refused.value).startswith("Negative values in data passed to Network: rule "
                                         "'winnow' takes feature strengths of 0 or more")


_FOLDS = ["calibration fold 1 of 3", "calibration fold 2 of 3", "calibration fold 3 of 3",
          "calibrating", "training"]


@pytest.mark.parametrize("calibrate, phases, restricted", [
    ("cv", _FOLDS, False),
    ("cv", _FOLDS, True),  # (the folds' networks see each example's targets only)
    ("holdout:4", ["calibration fold 1 of 1", "calibrating", "training"], False),
    ("progressive", ["training", "calibrating"], False),
])
def test_a_fit_fits_its_sigmoids_on_the_held_out_scores_and_says_so(calibrate, phases,
                                                                    restricted):
    from snowpy.calibration import Calibration
    from snowpy.network.calibrating import normalisation_of

    X, y = problem()
    targets = [["a", "b"] if label != "c" else ["c", "a"] for label in y] if restricted \
        else None
    reports = _Reports()
    net = snowpy.Network("perceptron", calibrate=calibrate, epochs=2).fit(
        X, y, targets=targets, progress=reports)
    assert [call[0] for call in reports.calls if isinstance(call[0], str)] == phases
    assert net.calibration_.method == calibrate.split(":")[0]
    if calibrate == "progressive":
        return
    keys, labels = keys_of(X, y)
    scores, positives, covered, _, _ = held_out_scores(net, X, y, targets, labels, False,
                                                       None, keys)
    if restricted:  # (what the folds' networks learned differs unrestricted)
        unrestricted = held_out_scores(net, X, y, None, labels, False, None, keys)[0]
        assert not np.array_equal(scores, unrestricted)
    assert covered.all() == (calibrate == "cv")  # (holdout: the first fold's examples)
    expected = Calibration.fit(scores[covered], positives[covered],
                               normalize=normalisation_of(net.engine_, False),
                               method=calibrate.split(":")[0])
    assert net.calibration_.a.tolist() == expected.a.tolist()
    assert net.calibration_.b.tolist() == expected.b.tolist()


def _block(engine, X, y, targets=None):
    return engine.block(sp.csr_matrix(X), list(y), targets)


def test_the_parts_of_a_fit_stop_at_a_sixteenth_of_the_links_epochs_counted():
    """Driver.parts: the targets learned in parts on threads (at most one a target),
    unless the data is small beside the network: its active features, epochs counted,
    fewer than a sixteenth of the network's links (48: 16 rows, 3 targets), or the
    network is frozen."""
    from snowpy.network.driver import Driver
    from snowpy.network.links import USED

    X = sp.csr_matrix(np.ones((30, 15)))
    y = np.array(list("abc") * 10)
    engine = snowpy.Network("perceptron", links="all", epochs=1).fit(X, y).engine_
    assert int(engine.store.meta[USED]) == 48

    def few(nnz):  # (nnz examples of one feature each)
        return _block(engine, sp.eye(nnz, 15, format="csr"), y[:nnz])

    assert Driver().parts(engine, few(3), 3) == 3  # 16 x 3 = 48: not fewer
    assert Driver().parts(engine, few(2), 3) == 1  # 32
    assert Driver().parts(engine, few(2), 3, epochs=2) == 3  # 64
    assert Driver().parts(engine, few(1), 3, epochs=2) == 1  # 32
    assert Driver().parts(engine, few(1), 3, epochs=3) == 3  # 48
    assert Driver().parts(engine, few(3), 2) == 2
    narrow = snowpy.Network("perceptron", links="all", epochs=1).fit(X[:, :10], y).engine_
    assert int(narrow.store.meta[USED]) == 33  # (11 rows, 3 targets)
    fewer = _block(narrow, sp.eye(2, 10, format="csr"), y[:2])
    assert Driver().parts(narrow, fewer, 3) == 1  # 16 x 2 = 32: fewer than 33
    assert Driver().parts(narrow, fewer, 3, epochs=2) == 3  # 64
    frozen = snowpy.Network.from_state(*snowpy.Network("perceptron", links="all").fit(
        X, y).to_state(inference_only=True)).engine_
    assert frozen.store.frozen and Driver().parts(frozen, few(30), 3) == 1


def test_a_fit_learns_its_examples_in_shards_only_where_the_targets_cannot_share_threads():
    """Driver.shards: constraint classification, or fewer targets than threads, learns
    each epoch in shards of at least 128 examples (4 x FEW) when the examples hold at
    least REDUNDANT (12) active features per row of the network; one shard for data in
    blocks, a progress report every so many examples, examples shown to some targets
    only, a frozen network, eligibility by count or percent, a rule that derives its
    planes, a plugin's rule, one thread, as many targets as threads."""
    from snowpy.network.driver import Driver

    rng = np.random.default_rng(7)
    X = sp.csr_matrix((rng.random((300, 40)) < 0.5).astype(float))
    y = np.where(np.asarray(X @ rng.normal(size=40)).ravel() > 0, "pos", "neg")

    def engine(rule="passive-aggressive", **options):
        return snowpy.Network(rule, epochs=1, **options).fit(X, y).engine_

    binary = engine()
    rows = binary.store.n_rows
    assert rows == 41
    block = _block(binary, X, y)
    assert Driver().shards(binary, block, 3) == 2  # (300 // 128)
    assert Driver().shards(binary, block, 2) == 1 and Driver().shards(binary, block, 1) == 1
    assert Driver().shards(binary, _block(binary, X[:200], y[:200]), 3) == 1  # (< 256)
    three = snowpy.Network("passive-aggressive").fit(X, np.array(list("abc") * 100)).engine_
    assert Driver().shards(three, block, 3) == 1 and Driver().shards(three, block, 4) == 2
    assert Driver().shards(engine(multiclass="constraint"), block, 2) == 2

    # exactly 12 active features per row of the network (41 x 12), then one fewer
    indptr = np.concatenate([[0], np.cumsum([2] * 236 + [1] * 20)])
    exact = sp.csr_matrix((np.ones(492), np.arange(492) % 40, indptr), shape=(256, 40))
    assert Driver().shards(binary, _block(binary, exact, y[:256]), 3) == 2
    short = sp.csr_matrix((np.ones(491), np.arange(491) % 40, indptr.clip(max=491)),
                          shape=(256, 40))
    assert Driver().shards(binary, _block(binary, short, y[:256]), 3) == 1

    class Curve(Progress):
        every = 100

    assert Driver().shards(binary, block, 3, Curve()) == 1
    assert Driver().shards(binary, block, 3, lambda *figures: None) == 2
    assert Driver().shards(binary, _block(binary, X, y, [["pos", "neg"]] * 300), 3) == 1
    assert Driver().shards(binary, _Cache(X, y, [0, 300]), 3) == 1
    frozen = snowpy.Network.from_state(*snowpy.Network("passive-aggressive").fit(
        X, y).to_state(inference_only=True)).engine_
    assert Driver().shards(frozen, block, 3) == 1
    for other in (engine(eligibility=2), engine(eligibility="percent:50", links="positive"),
                  engine("naive-bayes")):
        assert Driver().shards(other, block, 3) == 1

    import numba

    from snowpy.plugins import temporary_plugin
    from snowpy.rules import RuleKernel, RuleSpec, theta_param

    @numba.njit
    def step(w, S, t, y, activation, vals, m, sqnorm, params):
        for k in range(m):
            w[k, 0] += y * vals[k]

    spec = RuleSpec(name="plugin-shards-rule", build=lambda p, c: RuleKernel(
        update=step, params=[0.0]), params=(theta_param(0.0),), summary="test")
    plugin = types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: [spec]))
    with temporary_plugin(plugin, "plugin-shards-plugin"):  # (a plugin's rule: one)
        plugged = engine("plugin-shards-rule")
        assert plugged.kernel.compiled.implementation == "numba"
        assert Driver().shards(plugged, _block(plugged, X, y), 3) == 1


@pytest.mark.parametrize("options", [{"links": "touched"}, {"eligibility": 2},
                                     {"links": "positive", "eligibility": 2}])
def test_later_epochs_make_the_links_eligibility_lets_in_as_passes_of_partial_fit_do(options):
    """Links made for the targets an example touches, or for features eligible only
    after their second count, are still made in a fit's later epochs: three epochs
    learn what one epoch and two passes of partial_fit learn."""
    rng = np.random.default_rng(5)
    X = sp.csr_matrix((rng.random((150, 200)) < 0.05).astype(float))
    y = np.array(list("abcde"))[np.asarray(X @ rng.normal(size=(200, 5))).argmax(1)]

    def network(epochs):
        return snowpy.Network("perceptron", epochs=epochs, shuffle=False, early_stop=False,
                              discard=None, **options)

    three = network(3).fit(X, y)
    passes = network(1).fit(X, y)
    assert three.n_links_ > passes.n_links_  # (links made after the first epoch)
    passes.partial_fit(X, y)
    passes.partial_fit(X, y)
    assert three.mistakes_ == passes.mistakes_ and three.n_links_ == passes.n_links_
    np.testing.assert_array_equal(three.decision_function(X), passes.decision_function(X))


def test_learn_one_after_a_fit_keeps_an_entry_of_its_own():
    X, y = problem(n=24)
    y[5] = "a"
    net = snowpy.Network("perceptron", epochs=2, shuffle=False, early_stop=False).fit(X, y)
    fitted = list(net.mistakes_)
    net.learn_one({0: 1.0}, "b")
    net.learn_one({1: 1.0}, "a")
    assert len(net.mistakes_) == 3 and net.mistakes_[:2] == fitted
    net.fit(X, y)
    net.learn_one({0: 1.0}, "b")
    assert len(net.mistakes_) == 3 and net.mistakes_[:2] == fitted


def _binary(n=3000, d=400, seed=3):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.03, format="csr", random_state=seed + 1)
    X.data[:] = rng.choice([1.0, 0.5, 2.0], size=X.data.size)
    return X, np.where(np.asarray(X @ rng.normal(size=d)).ravel() > 0, "pos", "neg")


def test_a_stream_and_a_report_every_so_many_examples_are_never_learned_in_shards():
    """partial_fit's blocks, and a fit whose report tests the network every so many
    examples (which reads the network whole, as learned so far), learn what one thread
    learns, on any number of threads."""
    X, y = _binary()
    streams = [snowpy.Network("passive-aggressive", n_jobs=jobs).partial_fit(X, y)
               for jobs in (1, 3)]
    np.testing.assert_array_equal(streams[0].decision_function(X),
                                  streams[1].decision_function(X))
    test = X[:50]

    class Curve(Progress):
        every = 1000

        def __init__(self):
            self.curve = []

        def __call__(self, epoch, done, total, mistakes):
            if done % 1000 == 0:
                self.curve.append(nets[-1].decision_function(test))

    reports, nets = [], []
    for jobs in (1, 3):
        reports.append(Curve())
        nets.append(snowpy.Network("passive-aggressive", epochs=2, n_jobs=jobs))
        nets[-1].fit(X, y, progress=reports[-1])
    assert len(reports[0].curve) == 6
    for one, three in zip(reports[0].curve, reports[1].curve):
        np.testing.assert_array_equal(one, three)
    three_targets = np.array(list("abc"))[np.arange(3000) % 3]
    for jobs in (1, 2):
        reports.append(Curve())
        nets.append(snowpy.Network("perceptron", epochs=1, n_jobs=jobs))
        nets[-1].fit(X, three_targets, progress=reports[-1])
    for one, two in zip(reports[2].curve, reports[3].curve):
        np.testing.assert_array_equal(one, two)


def test_a_shards_per_target_state_is_the_mean_of_the_shards():
    """Mixing: the per-target state is the shards' weighted mean (normalised Winnow's
    sum over its entries), as are the figures' sums: each shard's copy worked out as a
    network fitted on its run."""
    X, y = _binary(n=256, d=30, seed=6)
    X = sp.csr_matrix(X.toarray() + (np.arange(30) < 12))  # (dense enough to shard)
    options = dict(epochs=1, shuffle=False, discard=None)
    net = snowpy.Network("normalised-winnow", n_jobs=3, **options).fit(X, y)
    runs = [snowpy.Network("normalised-winnow", **options).fit(X[part], y[part])
            for part in (slice(0, 128), slice(128, 256))]
    state = net.engine_.store.S
    assert state.shape == (2, 1) and np.all(state != 0)
    np.testing.assert_allclose(state, (runs[0].engine_.store.S + runs[1].engine_.store.S) / 2)
    assert net.mistakes_ == [runs[0].mistakes_[0] + runs[1].mistakes_[0]]
    assert net.engine_.underflows == sum(run.engine_.underflows for run in runs)


def test_a_fit_that_stops_early_still_drops_the_negligible_links():
    X, y = problem()
    y[5] = "a"
    stopped = snowpy.Network("perceptron", epochs=50, discard=0.5, shuffle=False).fit(X, y)
    assert len(stopped.mistakes_) < 50 and stopped.mistakes_[-1] == 0  # (stopped early)
    kept = snowpy.Network("perceptron", epochs=50, discard=None, shuffle=False).fit(X, y)
    kept.set_params(discard=0.5)
    assert kept.prune() > 0  # (the links the early stop's fit dropped itself)
    assert stopped.n_links_ == kept.n_links_
    np.testing.assert_array_equal(stopped.decision_function(X), kept.decision_function(X))


def test_a_rule_that_produces_nan_is_named_with_the_example_and_its_parameters():
    import numba

    from snowpy.exceptions import NumericalError
    from snowpy.plugins import temporary_plugin
    from snowpy.rules import RuleKernel, RuleSpec, theta_param

    @numba.njit
    def nan_update(w, S, t, y, activation, vals, m, sqnorm, params):
        for k in range(m):
            w[k, 0] = np.nan if t == 1 and y > 0 else w[k, 0] + y  # (b promoted: NaN)

    spec = RuleSpec(name="nan-driver-rule", build=lambda p, c: RuleKernel(
        update=nan_update, params=[0.25]), params=(theta_param(0.5),), summary="test")
    plugin = types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: [spec]))
    X = sp.csr_matrix(np.array([[1.0, 0.0], [1.0, 0.0]] + [[0.0, 1.0]] * 5))
    with temporary_plugin(plugin, "nan-driver-plugin"):
        with pytest.raises(NumericalError, match=r"^rule 'nan-driver-rule' produced NaN at "
                                                 r"example 2; check its parameters \[0.25\]$"):
            snowpy.Network("nan-driver-rule", shuffle=False).fit(X, ["a", "a"] + ["b"] * 5)


def test_clamped_updates_on_threads_are_counted_as_on_one():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random((60, 40)) < 0.1).astype(float))
    y = np.array(["a", "b", "c"] * 20)
    said, overflows = [], []
    for jobs in (1, 3):
        net, caught = _caught(lambda: snowpy.Network(
            "winnow", alpha=100, theta=1.0, thickness=float("inf"), initial_weight=1,
            epochs=3, precision="float64", shuffle=False, early_stop=False,
            n_jobs=jobs).fit(X, y))
        said.append([message for category, message in caught
                     if category is snowpy.NumericalWarning])
        overflows.append(net.engine_.overflows)
    assert overflows[0] > 0 and overflows == [overflows[0]] * 2 and said[0] == said[1]


def test_examples_shown_to_some_targets_only_train_those_only():
    """SNoW's sequential model: target a sees only its own examples, so it is never
    demoted; b sees every example."""
    X, y = problem(n=24)
    y[5] = "a"
    net = snowpy.Network("perceptron", epochs=2, shuffle=False).fit(
        X, y, targets=[["a", "b"] if v == "a" else ["b"] for v in y])
    demotions = dict(zip(net.classes_.tolist(), net.engine_.demotions.tolist()))
    assert demotions["a"] == 0 and demotions["b"] > 0


def test_a_streams_parts_are_kept_from_block_to_block_until_they_are_joined():
    """A driver learns a stream's blocks on three threads in three parts (three targets,
    a part each), the same parts from one block to the next, and puts them together in
    the network's store when joined: the network one thread learns from the same blocks.
    A block of 5 active features is learned in parts over 2 epochs (16 x 2 x 5 = 160
    links or more), not over one (80, fewer than the network's 86)."""
    from snowpy.network.driver import Driver, Plan
    from snowpy.network.links import USED

    X, y = problem()
    y[5] = "a"
    y = np.where(np.arange(48) % 3 == 2, "c", y)
    nets = [snowpy.Network("perceptron", links="all", shuffle=False).fit(X, y)
            for _ in range(2)]
    assert int(nets[0].engine_.store.meta[USED]) == 86
    five = sp.csr_matrix((np.ones(5), [0, 3, 9, 17, 30], [0, 5]), shape=(1, 40))
    blocks = [(five, y[:1]), (X[:6], y[:6]), (five, y[1:2])]
    for net, threads in zip(nets, (1, 3)):
        engine, driver = net.engine_, Driver()
        plan = Plan(epochs=2, shuffle=False, early_stop=False, threads=threads)
        held = []
        for rows, labels in blocks:
            driver.fit(engine, driver.block(engine, rows, labels), plan)
            held.append(driver.held)
        if threads == 1:
            assert held == [None] * 3 and driver.pool is None
        else:
            assert len(held[0]) == 3 and all(parts is held[0] for parts in held)
            assert [(part.first, part.step) for part in held[0]] == [(0, 3), (1, 3), (2, 3)]
            assert driver.pool is not None
            assert driver.join(engine) is engine
            assert driver.held is None and driver.pool is None
    assert nets[0].engine_.mistakes == nets[1].engine_.mistakes
    np.testing.assert_array_equal(nets[0].decision_function(X), nets[1].decision_function(X))


def test_a_multi_label_example_at_the_threshold_counts_as_on_one_thread():
    """Multi-label mistakes on threads are counted as the compiled epoch counts them:
    every target at or above ``theta`` predicted (a fresh Perceptron scores 0 = theta,
    so its first examples predict every label); the same figures on three threads."""
    X = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [1.0, 1.0, 0]] * 3))
    sets = [["a"], ["b"], ["c"], ["a", "b"]] * 3
    mistakes = [snowpy.Network("perceptron", n_jobs=jobs, epochs=1, shuffle=False).fit(
        X, sets).mistakes_ for jobs in (1, 3)]
    assert mistakes == [[6], [6]]


def test_mistakes_with_nan_activations_are_counted_on_threads_as_on_one():
    """Strengths of 1e308 overflow a Perceptron's activations to inf and NaN (counted as
    overflows, learned past): the compiled epoch's winner is target 0 unless a later
    target's activation is higher, so a NaN wins at target 0 only; the parts' verdicts
    put together counted 286 where one thread counted 287 (a reviewer's example)."""
    import warnings

    rng = np.random.default_rng(1)
    X = sp.random(400, 50, density=0.2, format="csr", random_state=2)
    X.data[:] = rng.choice([1e308, -1e308, 1.0], size=X.data.size)
    y = rng.integers(0, 4, 400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nets = [snowpy.Network("perceptron", n_jobs=jobs, epochs=2, early_stop=False).fit(
            X, y) for jobs in (1, 2)]
    assert nets[0].engine_.overflows > 0
    assert nets[0].mistakes_ == nets[1].mistakes_ == [287, 286]


def test_the_parts_verdicts_name_the_winner_one_thread_names():
    """Winner-take-all over parts (target t in part t % k) against the compiled epoch's
    scan, on activations with ties, infinities and NaNs."""
    from types import SimpleNamespace

    from snowpy.network.driver import Part, _mistakes

    rng = np.random.default_rng(0)
    for k, targets in ((2, 5), (3, 7), (4, 4)):
        acc = rng.choice([0.0, 1.0, 2.0, np.inf, -np.inf, np.nan], size=(300, targets))
        labels = rng.integers(0, targets, 300)
        order = rng.permutation(300)[:250]
        scan = []
        for row in acc[order]:
            best = 0
            for t in range(1, targets):
                if row[t] > row[best]:
                    best = t
            scan.append(best)
        parts = []
        for first in range(k):
            part = Part.__new__(Part)
            part.first, part.step = first, k
            part.verdict = part._judged(np.ascontiguousarray(acc[order][:, first::k]),
                                        np.arange(order.size), False, 0.0)
            parts.append(part)
        block = SimpleNamespace(y_indptr=np.arange(301), y_targets=labels)
        assert _mistakes(parts, block, order, False) == int(
            np.sum(np.array(scan) != labels[order]))


def test_a_winnow_weight_the_shards_cancel_to_zero_is_raised_to_the_floor():
    """Balanced Winnow learned in shards (256 dense examples on three threads: two runs
    of 128): links both shards demoted to the floor (beta ** 2000) move by the mean of
    changes that are their whole weight, to 0, where a multiplicative weight never is
    (no promotion revives it, and the next overflowing promotion, alpha ** 2000 times 0,
    made NaN). Raised to the floor, 1e-100, and counted as underflows, as one thread's
    step raises one: the shards' own 7 and 5, and the 2 of the mixing; a second epoch
    learns on."""
    rng = np.random.default_rng(2)
    X = np.zeros((256, 21))
    X[:, :20] = rng.integers(1, 3, (256, 20))
    X[::16, 20] = 2000.0
    X = sp.csr_matrix(X)
    y = np.where(rng.random(256) < 0.5, "a", "b")
    options = dict(beta=0.5, alpha=1.5, theta=1.0, epochs=1, average=False,
                   precision="float64", shuffle=False, discard=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", snowpy.NumericalWarning)  # (alpha ** 2000, clamped)
        net = snowpy.Network("balanced-winnow", n_jobs=3, **options).fit(X, y)
        runs = [snowpy.Network("balanced-winnow", **options).fit(X[part], y[part])
                for part in (slice(0, 128), slice(128, 256))]
        two = snowpy.Network("balanced-winnow", n_jobs=3, **options | {
            "epochs": 2, "early_stop": False}).fit(X, y)
    assert [run.engine_.underflows for run in runs] == [7, 5]
    assert net.mistakes_ == [runs[0].mistakes_[0] + runs[1].mistakes_[0]]
    assert net.engine_.underflows == 7 + 5 + 2
    for fitted in (net, two):
        store = fitted.engine_.store
        assert np.abs(store.W[store.live_slots()]).min() == 1e-100
    assert len(two.mistakes_) == 2 and two.engine_.underflows > 14

    # shards that changed nothing: the network as it was, its weights at the floor
    # (raised before) not raised again
    from snowpy.network.driver import Shards

    store = net.engine_.store
    start = store.exact(slots=False, threads=2)
    copies = []
    for _ in range(2):
        copy = store.empty_like()
        copy.add_targets(store.n_targets)
        copy.adopt(start, copy=True)
        copies.append(copy)
    shards = Shards(2)
    try:
        _, raised = shards.mix(store, start, copies, np.array([128.0, 128.0]), floor=True)
    finally:
        shards.close()
    after = store.exact(slots=False)
    assert raised == 0 and (start["W"] == 1e-100).any()
    for name in ("sizes", "target", "W"):
        np.testing.assert_array_equal(after[name], start[name])


def test_the_mixings_memory_is_reused_while_it_is_long_enough():
    """``_room``: the rows asked for of the array kept under a name, the same memory
    from one mixing to the next while it is long enough, of the type and width asked
    for; replaced (and kept) when it is short, of another type or another width."""
    from snowpy.network.driver import _room

    into = {}
    first = _room(into, "W", 6, np.float32, 2)
    assert first.shape == (6, 2) and first.dtype == np.float32
    kept = into["W"]
    for length in (6, 4, 0):  # (as long or shorter: the same memory)
        again = _room(into, "W", length, np.float32, 2)
        assert again.shape == (length, 2) and into["W"] is kept
        assert length == 0 or np.shares_memory(again, kept)
    longer = _room(into, "W", 7, np.float32, 2)  # (short of rows: a larger array)
    assert longer.shape == (7, 2) and into["W"] is not kept
    assert not np.shares_memory(longer, kept)
    kept = into["W"]
    other = _room(into, "W", 3, np.float64, 2)  # (another type)
    assert other.dtype == np.float64 and other.shape == (3, 2) and into["W"] is not kept
    kept = into["W"]
    wider = _room(into, "W", 3, np.float64, 3)  # (another width)
    assert wider.shape == (3, 3) and into["W"] is not kept
    flat = _room(into, "sizes", 5, np.int32)
    assert flat.shape == (5,) and flat.dtype == np.int32 and into["W"].shape == (3, 3)
    assert np.shares_memory(_room(into, "sizes", 5, np.int32), flat)


def test_examples_shown_to_some_targets_only_learn_on_threads_what_one_thread_learns():
    """Examples shown to some targets only (SNoW's sequential model) are learned in one
    part whatever the threads: three threads learn the network one thread learns."""
    X, y = problem()
    y[5] = "a"
    y = np.where(np.arange(48) % 3 == 2, "c", y)
    targets = [["a", "b", "c"] if v != "a" else ["a", "c"] for v in y]
    nets = [snowpy.Network("perceptron", epochs=2, shuffle=False, n_jobs=jobs).fit(
        X, y, targets=targets) for jobs in (1, 3)]
    assert nets[0].mistakes_ == nets[1].mistakes_
    np.testing.assert_array_equal(nets[0].decision_function(X), nets[1].decision_function(X))


def test_a_counting_rule_predicts_after_a_fit_from_every_example_it_counted():
    """Naive Bayes predicts, after a fit, from the counts of all its examples (the
    planes refreshed at the powers of two during the fit are refreshed again): what
    learning the examples one at a time (learn_one) predicts."""
    rng = np.random.default_rng(4)
    y = np.where(rng.random(24) < 0.3, "a", "b")
    X = sp.csr_matrix(rng.integers(0, 3, (24, 8)).astype(float))
    fitted = snowpy.Network("naive-bayes", discard=None, shuffle=False).fit(X, y)
    one = snowpy.Network("naive-bayes", discard=None)
    one.partial_fit(X[:1], y[:1], classes=["a", "b"])
    for i in range(1, 24):
        one.learn_one({int(j): float(v) for j, v in zip(X[i].indices, X[i].data)}, y[i])
    np.testing.assert_allclose(fitted.target_scores(X), one.target_scores(X), rtol=1e-6)


def test_a_counting_rules_fit_predicts_from_the_counts_at_each_power_of_two():
    """Naive Bayes in one fit predicts example i from the counts refreshed when the
    examples seen reached 1, 2, 4, 8...: what a stream cut at those points predicts when
    each call's counts are refreshed by a prediction after it (unbalanced labels, where
    counts refreshed at other points, or never, predict otherwise)."""
    rng = np.random.default_rng(4)
    y = np.where(rng.random(24) < 0.3, "a", "b")
    X = rng.integers(1, 4, (24, 8)).astype(float)
    X[:, 0] += 3 * (y == "a")
    X[:, 1] += 3 * (y == "b")
    X = sp.csr_matrix(X)
    fitted = snowpy.Network("naive-bayes", discard=None, shuffle=False).fit(X, y)
    stream = snowpy.Network("naive-bayes", discard=None)
    for start, stop in ((0, 1), (1, 2), (2, 4), (4, 8), (8, 16), (16, 24)):
        stream.partial_fit(X[start:stop], y[start:stop], classes=["a", "b"])
        stream.decision_function(X[:1])  # (the counts so far refreshed)
    assert fitted.mistakes_ == [sum(stream.mistakes_)]
    assert stream.mistakes_ == [1, 0, 1, 1, 0, 5]



def test_an_epochs_progress_chunks_double_then_come_every_16384_examples():
    """``chunks``: cut at 1, 2, 4, 8... up to 16,384, then every 16,384 examples, and at
    every multiple of ``every``; whole when not reporting."""
    from snowpy.network.driver import chunks

    assert chunks(10, False) == [(0, 10)]
    assert chunks(10, True) == [(0, 1), (1, 2), (2, 4), (4, 8), (8, 10)]
    assert chunks(10, True, every=3) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 6), (6, 8),
                                         (8, 9), (9, 10)]
    bounds = [stop for _, stop in chunks(60000, True)]
    assert bounds == [2**k for k in range(15)] + [32768, 49152, 60000]


def test_refresh_points_are_where_the_examples_seen_reach_a_power_of_two():
    from snowpy.network.driver import refresh_points

    assert refresh_points(0, 10) == [1, 2, 4, 8]
    assert refresh_points(5, 10) == [3]  # (8; 16 is past the run)
    assert refresh_points(7, 9) == [1]
    assert refresh_points(3, 6) == [1, 5]
    assert refresh_points(0, 1) == [] and refresh_points(4, 4) == []


def test_an_epochs_order_depends_on_the_examples_not_where_they_stand():
    """``keyed_order``: the keys mixed with a salt (drawn from the generator, as the
    driver draws one per epoch), sorted stably: the same examples in another order come
    in the same order; examples of the same key in the order they stand."""
    from snowpy.network.driver import keyed_order, mixed_keys

    rng = np.random.default_rng(3)
    keys = rng.integers(0, 2**63, size=500, dtype=np.uint64)
    permutation = rng.permutation(500)
    salt = int(np.random.default_rng(11).integers(0, 2**63 - 1, dtype=np.int64))
    first = keyed_order(keys, salt)
    again = keyed_order(keys[permutation], salt)
    np.testing.assert_array_equal(keys[first], keys[permutation][again])
    mixed = mixed_keys(keys, salt)
    assert np.all(np.diff(mixed[first].astype(np.float64)) >= 0)
    assert not np.array_equal(first, keyed_order(keys, salt + 1))
    repeated = np.repeat(np.array([5, 9, 7], dtype=np.uint64), 2000)
    order = keyed_order(repeated, 1)
    for key in (5, 9, 7):  # (the same key: the examples in the order they stand)
        where = order[repeated[order] == key]
        assert np.all(np.diff(where) > 0)
    np.testing.assert_array_equal(mixed_keys(keys.astype(np.int64), salt), mixed)


def test_an_examples_key_is_the_same_whatever_types_its_arrays_come_in():
    """Equal examples get equal keys: strengths as float32 or float64, the labels' index
    as int32 or int64."""
    X = sp.csr_matrix(np.array([[0.5, 0, 2.0], [0, 1.0, 0], [0.25, 0, 0]]))
    y_indptr = np.array([0, 1, 2, 3], dtype=np.int64)
    y_targets = np.array([0, 1, 0], dtype=np.int32)
    keys = example_keys(X, y_indptr, y_targets)
    np.testing.assert_array_equal(
        example_keys(X.astype(np.float32), y_indptr.astype(np.int32), y_targets), keys)
    assert len(set(keys.tolist())) == 3


def test_a_refold_that_gives_evidence_lays_each_held_out_examples_in_the_labels_order():
    """A refold whose function has ``evidence(rows)`` (the front end's, with
    ``evidence=True``): each held-out example's evidence comes from the fold that held
    it out, told the fold's training labels alone, laid in the order of every label (a
    label the fold's counts never met: 0); without it, no evidence."""
    from snowpy._rows import Evidence

    X, y = problem()
    keys, labels = keys_of(X, y)
    told = []

    class Refolded:
        def __init__(self, rows, fold_labels):
            self.fold = len(told)
            self.labels = sorted(set(fold_labels), reverse=True)  # (an order of its own)
            told.append(list(fold_labels))

        def __call__(self, rows):
            return rows

        def evidence(self, rows):  # (the fold's number, minus each label's place)
            return Evidence(np.array([[self.fold * 10.0 - "abc".index(label)
                                       for label in self.labels]] * rows.shape[0]),
                            self.labels)

    net = snowpy.Network("perceptron", calibrate="cv:3", epochs=2)
    *_, evidence = held_out_scores(net, X, y, None, labels, False, refold=Refolded)
    assert evidence.shape == (48, 3) and evidence.dtype == np.float32
    for number, held in enumerate(folds(keys, 3, net.seed)):
        met = set(told[number])
        assert sorted(told[number]) == sorted(np.delete(y, held).tolist())
        expected = [number * 10.0 - i if label in met else 0.0 for i, label in
                    enumerate("abc")]
        np.testing.assert_array_equal(evidence[held], [expected] * held.size)
    assert held_out_scores(net, X, y, None, labels, False)[4] is None
