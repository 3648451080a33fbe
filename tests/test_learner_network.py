"""snowpy's network around a rule whose state is no weight table (``RuleSpec(learner=True)``:
``snowpy/network/learner.py``), tested with a learner written here, a primal Perceptron
over a dense table, so that what the network hands its learner (the examples, their
order, the targets, the scores before learning) and what it makes of the answers (the
figures, the labels, the probabilities, the model file) can be seen whole. The kernel
Perceptron's own tests (``plugins/snowpy-kernel-perceptron``) hold the plugin."""

import types

import numpy as np
import pytest
import scipy.sparse as sp

import snowpy
from snowpy.exceptions import ConfigurationError, ModelFileError, NotFittedError, PluginError
from snowpy.network.learner import LearnerNetwork, network_for
from snowpy.network.driver import example_keys, keyed_order
from snowpy.plugins import temporary_plugin
from snowpy.rules import Learner, Param, RuleSpec, theta_param


class Table(Learner):
    """A primal Perceptron: a weight per feature and target, a target's score the dot
    product less ``theta``; on a mistake the true target gains the example and the
    winner (single-label) or each wrong target (multi-label) moves away. It records what
    the network hands it."""

    def __init__(self, params, n_features):
        self.theta = float(params["theta"])
        self.W = np.zeros((n_features, 0))
        self.orders = []
        self.handed = []

    def _widen(self, n_targets):
        if self.W.shape[1] < n_targets:
            self.W = np.hstack([self.W, np.zeros((self.W.shape[0],
                                                  n_targets - self.W.shape[1]))])

    def _row(self, examples, i):
        start, stop = examples.indptr[i], examples.indptr[i + 1]
        return examples.ids[start:stop], examples.vals[start:stop]

    def scores(self, examples):
        self._widen(examples.n_targets)
        out = np.zeros((examples.n, examples.n_targets))
        for i in range(examples.n):
            ids, vals = self._row(examples, i)
            out[i] = vals @ self.W[ids, :examples.n_targets] - self.theta
        return out

    def learn(self, examples, order, before=None):
        self._widen(examples.n_targets)
        self.orders.append(order.copy())
        self.handed.append(examples)
        mistakes = updates = 0
        for j, i in enumerate(order):
            ids, vals = self._row(examples, i)
            scores = vals @ self.W[ids, :examples.n_targets] - self.theta
            if before is not None:
                before[j] = scores
            truth = examples.y_targets[examples.y_indptr[i]:examples.y_indptr[i + 1]]
            if examples.multilabel:
                wrong = [t for t in range(examples.n_targets)
                         if (scores[t] >= 0) != (t in truth)]
                mistakes += bool(wrong)
                for t in wrong:
                    self.W[ids, t] += vals if t in truth else -vals
                    updates += 1
            elif int(np.argmax(scores)) not in truth:
                mistakes += 1
                updates += 1
                self.W[ids, int(truth[0])] += vals
                self.W[ids, int(np.argmax(scores))] -= vals
        return mistakes, updates

    def to_state(self):
        return {"theta": self.theta}, {"table_W": self.W.copy()}

    def restore(self, header, arrays, *, n_features, n_targets, where):
        W = arrays.get("table_W")
        if W is None or W.shape != (n_features, n_targets):
            raise ModelFileError(f"{where}: the table does not fit {n_features} features")
        self.W = np.array(W, dtype=np.float64)

    def describe(self, labels):
        return {"weights": int(np.count_nonzero(self.W)),
                "by_label": {label: int(np.count_nonzero(self.W[:, t]))
                             for t, label in enumerate(labels)}}

    def explain(self, examples, targets, scores):
        ids, vals = self._row(examples, 0)
        return [{"target": t, "terms": (vals * self.W[ids, t]).tolist(),
                 "score": float(scores[t])} for t in targets]

    def features(self):
        return np.nonzero(self.W)[0]


TABLE = RuleSpec(name="table-perceptron",
                 build=lambda params, context: Table(params, context.n_features),
                 params=(theta_param(0.0), Param("unused", 1, "a parameter", type=int)),
                 summary="a primal Perceptron written as a learner", learner=True)


@pytest.fixture
def table():
    plugin = types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: [TABLE]))
    with temporary_plugin(plugin, "table-plugin"):
        yield "table-perceptron"


def problem():
    """Two labels told apart by their first two features; feature 2 is in every example."""
    X = sp.csr_matrix(np.array([[1, 0, 1], [0, 1, 1], [1, 0, 1], [0, 1, 1], [1, 0, 1],
                                [0, 1, 1]], dtype=float))
    return X, np.array(["a", "b", "a", "b", "a", "b"])


def test_a_learner_rule_learns_in_epochs_that_stop_after_one_without_an_update(table):
    X, y = problem()
    net = LearnerNetwork(table, epochs=5, shuffle=False).fit(X, y)
    # epoch 1: the first "a" is right (a tie goes to the first target), the first "b"
    # wrong, and the second "a" wrong (the shared feature moved to "b"); then all right
    assert net.mistakes_ == [2, 0] and net.updates_ == [2, 0]
    assert net.n_examples_seen_ == 12
    orders = net.learner_.orders
    assert [order.tolist() for order in orders] == [list(range(6))] * 2  # no shuffle
    assert net.predict(X).tolist() == y.tolist()
    assert net.classes_.tolist() == ["a", "b"]
    every = LearnerNetwork(table, epochs=4, shuffle=False, early_stop=False).fit(X, y)
    assert every.mistakes_ == [2, 0, 0, 0] and every.n_examples_seen_ == 24


def test_a_shuffled_epoch_goes_in_the_order_of_the_examples_keys(table):
    """As a Network's: each epoch the examples sorted by their keys mixed with a salt
    drawn from the seed's generator; the order depends on what the examples are, not
    on where they stand."""
    X = sp.csr_matrix(np.eye(12) + np.eye(12, k=1))
    y = np.array(list("abc") * 4)
    net = LearnerNetwork(table, epochs=3, shuffle=True, seed=7, early_stop=False).fit(X, y)
    keys = example_keys(X, np.arange(13, dtype=np.int64),
                        np.array([0, 1, 2] * 4, dtype=np.int32))
    rng = np.random.default_rng(7)
    expected = [keyed_order(keys, int(rng.integers(0, 2**63 - 1, dtype=np.int64)))
                for _ in range(3)]
    assert [o.tolist() for o in net.learner_.orders] == [e.tolist() for e in expected]
    assert len({tuple(o.tolist()) for o in expected}) == 3  # (three different orders)
    backwards = LearnerNetwork(table, epochs=3, shuffle=True, seed=7,
                               early_stop=False).fit(X[::-1], y[::-1])
    for mine, theirs in zip(net.learner_.orders, backwards.learner_.orders):
        assert (11 - theirs).tolist() == mine.tolist()  # the same examples, in turn


def test_the_learner_is_handed_canonical_rows_and_the_targets_of_each_example(table):
    X = sp.csr_matrix((np.array([2.0, 1.0, 1.0, 3.0]), np.array([2, 0, 2, 1]),
                       np.array([0, 3, 4])), shape=(2, 3))  # unsorted, a repeated id
    assert not X.has_canonical_format
    net = LearnerNetwork(table).fit(X, [["a", "c"], ["b"]])
    handed = net.learner_.handed[0]
    assert handed.ids.tolist() == [0, 2, 1] and handed.vals.tolist() == [1.0, 3.0, 3.0]
    assert handed.ids.dtype == np.int64 and handed.vals.dtype == np.float64
    assert handed.indptr.tolist() == [0, 2, 3] and handed.indptr.dtype == np.int64
    assert handed.y_indptr.tolist() == [0, 2, 3] and handed.y_targets.tolist() == [0, 2, 1]
    assert handed.multilabel and handed.n_targets == 3
    assert net.multilabel_ and net.classes_.tolist() == ["a", "b", "c"]
    X.has_canonical_format = False  # (scipy may trust a flag; the rows are unchanged)
    np.testing.assert_array_equal(net.target_scores(X),
                                  net.target_scores(X.toarray()))


def test_progressive_scores_are_those_before_each_example_in_the_first_epoch_only(table):
    X, y = problem()
    net = LearnerNetwork(table, epochs=3, shuffle=False, early_stop=False,
                         calibrate="progressive").fit(X, y)
    window = net.engine_.progressive
    assert window.filled == 6  # the first epoch's, not three
    scores, positives = window.arrays()
    # nothing learned before the second example (the first was right by the tie), then
    # the updates of the second's and the third's mistakes
    assert scores.tolist() == [[0.0, 0.0], [0.0, 0.0], [-1.0, 1.0], [-1.0, 1.0],
                               [1.0, -1.0], [-1.0, 1.0]]
    assert positives.tolist() == [[True, False], [False, True]] * 3
    assert net.calibration_ is not None and net.calibration_.a.size == 2
    probabilities = net.predict_proba(X)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)  # one label: they sum to 1
    multi = LearnerNetwork(table, calibrate="progressive").fit(X, [[v] for v in y])
    assert multi.engine_.normalisation(True) == "none"


def test_one_example_at_a_time(table):
    """learn_one keeps one entry of the figures for a run of one-example learning, and
    checks the example's width and label kind; score_one gives the scores and the best
    target."""
    X, y = problem()
    net = LearnerNetwork(table, epochs=2, shuffle=False).fit(X, y)
    assert net.mistakes_ == [2, 0]
    engine = net.engine_
    ids, vals = np.array([0, 2]), np.array([1.0, 1.0])
    scores, best = engine.score_one(ids, vals)
    np.testing.assert_array_equal(scores, net.target_scores(X[:1])[0])
    assert best == 0
    assert engine.score_one(np.array([1, 2]), vals)[1] == 1
    engine.learn_one(np.array([0]), np.array([1.0]), "b")  # a mistake: "a" wins it
    engine.learn_one(np.array([1]), np.array([1.0]), "b")  # right
    engine.learn_one(np.array([2]), np.array([1.0]), "c")  # a new label: a new target
    assert net.mistakes_ == [2, 0, 2] and net.updates_ == [2, 0, 2]
    assert net.n_examples_seen_ == 15 and net.classes_.tolist() == ["a", "b", "c"]
    for learn in (engine.learn_one, lambda i, v, label: engine.score_one(i, v)):
        with pytest.raises(ConfigurationError, match="^feature id 3 is beyond the network's "
                                                     "3 features$"):
            learn(np.array([0, 3]), np.array([1.0, 1.0]), "a")
    engine.learn_one(np.array([0, 2]), np.array([1.0, 1.0]), "a")  # the last id: 2
    with pytest.raises(ConfigurationError, match="trained single-label"):
        engine.learn_one(ids, vals, ["a", "b"])
    net.fit(X, y)  # a fit starts afresh, its own figures
    assert net.mistakes_ == [2, 0] and net.n_examples_seen_ == 12
    empty = LearnerNetwork(table).start(3)
    assert empty.engine_.score_one(ids, vals)[1] == -1  # (no target yet)


def test_a_stream_needs_the_width_first(table):
    net = LearnerNetwork(table)
    with pytest.raises(ConfigurationError, match="^a learner's network learns one example "
                                                 "at a time once it knows its width"):
        net.learn_one({0: 1.0}, "a")
    with pytest.raises(NotFittedError, match="^this LearnerNetwork is not trained yet; call "
                                             "fit or partial_fit first$"):
        net.predict(np.eye(3))
    X, y = problem()
    net.partial_fit(X, y)
    net.learn_one({1: 1.0}, "b")
    with pytest.raises(ConfigurationError, match="^X has 4 features; the network has 3$"):
        net.partial_fit(sp.csr_matrix(np.ones((1, 4))), ["a"])
    with pytest.raises(ConfigurationError, match="^X has 2 features; the network has 3$"):
        net.predict(np.ones((1, 2)))


def test_what_a_learner_rule_refuses(table):
    X, y = problem()
    with pytest.raises(ConfigurationError, match="^targets= .SNoW's sequential model. is not "
                                                 "available to a learner's rule"):
        LearnerNetwork(table).fit(X, y, targets=[["a", "b"]] * 6)
    with pytest.raises(ConfigurationError, match="^rule 'perceptron' keeps a weight table: "
                                                 "use snowpy.Network"):
        LearnerNetwork("perceptron").fit(X, y)


def test_what_the_network_says_of_its_learner(table):
    X, y = problem()
    net = LearnerNetwork(table, epochs=2, shuffle=False, unused=3).fit(X, y)
    W = net.learner_.W
    assert W.tolist() == [[1.0, -1.0], [-1.0, 1.0], [0.0, 0.0]]  # (the two updates)
    assert net.n_links_ == 4 and net.feature_ids_.tolist() == [0, 1]
    assert net.link_counts().tolist() == [2, 2]
    assert net.link_counts([2, 1, 0, 5]).tolist() == [0, 2, 2, 0]
    assert net.prune() == 0 and net.n_links_ == 4
    described = net.describe()
    assert described == {"rule": "table-perceptron", "rule_params": net.rule_params_,
                         "classes": ["a", "b"], "weights": 4, "by_label": {"a": 2, "b": 2},
                         "training": {"examples": 12, "mistakes_per_epoch": [2, 0]},
                         "calibration": None}
    assert described["rule_params"]["unused"] == 3
    terms = net.explain_terms(X[1], [1, 0], net.target_scores(X[1])[0])
    assert terms == [{"target": 1, "terms": [1.0, 0.0], "score": 1.0},
                     {"target": 0, "terms": [-1.0, 0.0], "score": -1.0}]


def test_a_model_file_of_a_learner_rule_restores_it_whole(table, tmp_path):
    X, y = problem()
    net = LearnerNetwork(table, epochs=3, early_stop=False, calibrate="progressive",
                         unused=2).fit(X, [[v] for v in y])
    header, arrays = net.to_state()
    part = header["learner"]
    assert header["kind"] == "learner" and part["theta"] == 0.0
    assert part["options"]["rule"] == "table-perceptron" and part["options"]["epochs"] == 3
    assert part["rule_params"]["unused"] == 2
    assert part["labels"] == ["a", "b"] and part["multilabel"] is True
    assert part["indicator"] is False and part["n_features"] == 3
    assert part["mistakes"] == net.mistakes_ and part["examples_seen"] == 18
    assert {"table_W", "progressive_scores"} <= set(arrays)
    path = net.save(tmp_path / "table.snowpy")
    loaded = snowpy.load(path)
    assert isinstance(loaded, LearnerNetwork) and loaded.multilabel_
    np.testing.assert_array_equal(loaded.learner_.W, net.learner_.W)
    np.testing.assert_array_equal(loaded.predict_proba(X), net.predict_proba(X))
    assert loaded.mistakes_ == net.mistakes_ and loaded.updates_ == net.updates_
    assert loaded.n_examples_seen_ == 18 and loaded.get_params() == net.get_params()
    for kept, saved in zip(loaded.engine_.progressive.arrays(),
                           net.engine_.progressive.arrays()):
        np.testing.assert_array_equal(kept, saved)
    # snowpy 0.x named the kind and its part "dual"
    old = LearnerNetwork.from_state({"kind": "dual", "dual": part}, arrays)
    np.testing.assert_array_equal(old.learner_.W, net.learner_.W)
    # an indicator matrix of labels is remembered as one
    indicator = LearnerNetwork(table).fit(X, np.array([[1, 0], [0, 1]] * 3))
    again = LearnerNetwork.from_state(*indicator.to_state())
    assert again.engine_.indicator and again.predict(X[:2]).tolist() == [[1, 0], [0, 1]]


@pytest.mark.parametrize("edit, error", [
    (lambda part: part.pop("options"), "KeyError: 'options'"),
    (lambda part: part.pop("n_features"), "KeyError: 'n_features'"),
    (lambda part: part.update(n_features="many"), "ValueError: invalid literal"),
    (lambda part: part.update(labels=None), "TypeError"),
    (lambda part: part["options"].update(epochs=0), "ConfigurationError"),
    (lambda part: part["options"].update(rule="perceptron"), "keeps a weight table"),
])
def test_an_invalid_description_of_a_learner_network_is_refused_in_one_line(table, edit,
                                                                              error):
    X, y = problem()
    header, arrays = LearnerNetwork(table).fit(X, y).to_state()
    edit(header["learner"])
    with pytest.raises(ModelFileError, match=r"^m.snowpy: the network description is invalid "
                                             rf"\(.*{error}"):
        LearnerNetwork.from_state(header, arrays, "m.snowpy")
    with pytest.raises(ModelFileError, match="^model: the network description is invalid"):
        LearnerNetwork.from_state({"kind": "learner", "learner": "garbage"}, arrays)
    with pytest.raises(ModelFileError, match="^m.snowpy: the table does not fit 3 features"):
        LearnerNetwork.from_state(*LearnerNetwork(table).fit(X, y).to_state()[:1], {},
                                  "m.snowpy")


def test_each_rule_learns_in_its_own_network(table):
    options = {"epochs": 2, "links": "signed", "shuffle": True, "calibrate": None}
    plain = network_for("perceptron", options, {"theta": 0.5})
    assert type(plain) is snowpy.Network
    assert plain.get_params()["links"] == "signed" and plain.get_params()["theta"] == 0.5
    hosted = network_for(table, options, {"unused": 4})
    assert type(hosted) is LearnerNetwork
    assert hosted.get_params()["epochs"] == 2 and hosted.shuffle is True
    assert hosted.rule_params == {"unused": 4} and "links" not in hosted.get_params()


def test_a_learner_rule_given_as_its_spec_is_named_and_reports_progress(table):
    """A rule given as its RuleSpec is named by its name (describe, the model file);
    fit's progress is called after 1, 2, 4... examples of each epoch, as a Network's;
    a calibrated network describes its calibration."""
    X, y = problem()
    calls = []
    net = LearnerNetwork(TABLE, epochs=2, shuffle=False, early_stop=False,
                         calibrate="progressive").fit(
        X, y, progress=lambda *figures: calls.append(figures[:3]))
    assert calls == [(epoch, done, 6) for epoch in (0, 1) for done in (1, 2, 4, 6)]
    described = net.describe()
    assert described["rule"] == "table-perceptron"
    assert described["calibration"] == net.calibration_.header()
    assert isinstance(described["calibration"], dict)
    header, _ = net.to_state()
    assert header["learner"]["options"]["rule"] == "table-perceptron"
    for rule in ("winnow", "perceptron"):
        plain = network_for(rule, {"epochs": 2}, {})
        assert plain.rule == rule and plain.epochs == 2


def test_one_example_at_a_time_learns_a_set_of_labels(table):
    X, _ = problem()
    net = LearnerNetwork(table, shuffle=False).fit(X, [["a"], ["b"]] * 3)
    net.engine_.learn_one(np.array([0, 2]), np.array([1.0, 1.0]), ["a", "c"])
    handed = net.learner_.handed[-1]
    assert handed.multilabel and handed.y_targets.tolist() == [0, 2]
    assert handed.y_indptr.tolist() == [0, 2] and handed.indptr.tolist() == [0, 2]
    assert net.classes_.tolist() == ["a", "b", "c"]
    with pytest.raises(ConfigurationError, match="^feature id 5 is beyond the network's "
                                                 "3 features$"):
        net.engine_.learn_one(np.array([0, 1, 5]), np.array([1.0, 1.0, 1.0]), ["a"])


class _Misbehaving(Table):
    """A learner that answers in the wrong form, as the test asks."""

    mode = None

    def scores(self, examples):
        if self.mode == "list":
            return [[0.0, 0.0]] * examples.n
        if self.mode == "shape":
            return np.zeros((examples.n, 3))
        return super().scores(examples)

    def describe(self, labels):
        return {"classes": labels} if self.mode == "describe" else super().describe(labels)

    def to_state(self):
        held, arrays = super().to_state()
        if self.mode == "header":
            held["labels"] = []
        if self.mode == "reserved":
            held["progressive_x"] = 1
        if self.mode == "arrays":
            arrays["calibration_a"] = np.zeros(1)
        return held, arrays

    def restore(self, header, arrays, *, n_features, n_targets, where):
        if self.mode == "restore":
            raise ValueError("the table is torn")
        super().restore(header, arrays, n_features=n_features, n_targets=n_targets,
                        where=where)


def _plugged(name: str, learner: type) -> object:
    """A plugin of the rule ``name``, whose state is a ``learner`` of the example's width,
    registered while the block runs."""
    spec = RuleSpec(name=name, build=lambda params, context: learner(
        params, context.n_features), params=(theta_param(0.0),), summary="test",
        learner=True)
    plugin = types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: [spec]))
    return temporary_plugin(plugin, f"{name}-plugin")


@pytest.mark.parametrize("mode, call, error, match", [
    ("list", lambda net, X: net.target_scores(X), PluginError,
     r"^a _Misbehaving's scores must be an array of shape \(6, 2\), got list$"),
    ("shape", lambda net, X: net.target_scores(X), PluginError,
     r"^a _Misbehaving's scores must be an array of shape \(6, 2\), got \(6, 3\)$"),
    ("describe", lambda net, X: net.describe(), PluginError,
     r"^a learner's describe names 'classes', which its network writes itself: name it "
     r"otherwise$"),
    ("header", lambda net, X: net.to_state(), PluginError,
     r"^a learner's to_state names 'labels', which its network writes itself"),
    ("reserved", lambda net, X: net.to_state(), PluginError,
     r"^a learner's to_state names 'progressive_x', which its network writes itself"),
    ("arrays", lambda net, X: net.to_state(), PluginError,
     r"^a learner's to_state names 'calibration_a', which its network writes itself"),
    ("restore", lambda net, X: LearnerNetwork.from_state(*net.to_state(), "m.snowpy"),
     ModelFileError, r"^m.snowpy: the learner's state is invalid \(ValueError: the table "
     r"is torn\)$"),
])
def test_what_a_learner_answers_in_the_wrong_form_is_refused_in_one_line(mode, call, error,
                                                                         match):
    X, y = problem()
    with _plugged("misbehaving", _Misbehaving):
        net = LearnerNetwork("misbehaving", shuffle=False).fit(X, y)
        _Misbehaving.mode = mode
        try:
            with pytest.raises(error, match=match):
                call(net, X)
        finally:
            _Misbehaving.mode = None


def test_a_model_file_without_the_figures_loads_with_none(table):
    X, y = problem()
    header, arrays = LearnerNetwork(table, epochs=2).fit(X, y).to_state()
    for name in ("mistakes", "updates", "examples_seen", "indicator"):
        header["learner"].pop(name)
    loaded = LearnerNetwork.from_state(header, arrays)
    assert loaded.mistakes_ == [] and loaded.updates_ == []
    assert loaded.n_examples_seen_ == 0 and loaded.engine_.indicator is False


def test_a_learner_that_leaves_its_scores_before_learning_unwritten_is_refused(table):
    class Silent(Table):
        def learn(self, examples, order, before=None):
            return super().learn(examples, order, None)  # (before left as given: NaN)

    X, y = problem()
    with _plugged("silent", Silent):
        with pytest.raises(PluginError, match="^rule 'silent': its learner left scores "
                                              "before learning unwritten or not finite$"):
            LearnerNetwork("silent", calibrate="progressive").fit(X, y)


def test_what_a_learner_network_asks_of_its_rule_is_said_whole():
    X, y = problem()
    with pytest.raises(ConfigurationError, match=r"^a LearnerNetwork needs rule=, a rule whose "
                                                 r"state is a learner \(snowpy plugins lists "
                                                 r"the rules\)$"):
        LearnerNetwork(None).fit(X, y)
    with pytest.raises(ConfigurationError, match=r"^rule 'perceptron' keeps a weight table: "
                                                 r"use snowpy.Network \(or "
                                                 r"snowpy.SnowClassifier, which picks it\)$"):
        LearnerNetwork("perceptron").fit(X, y)


def test_a_learner_networks_figures_through_a_report_and_an_early_stop(table):
    """The figures are the same through a progress report (each call given the mistakes
    since the last, at every multiple of a report's ``every`` too); a fit that stops
    early fits its progressive sigmoids; a network started without labels is
    single-label."""
    X, y = problem()
    X, y = sp.vstack([X] * 3).tocsr(), np.concatenate([y] * 3)
    calls = []

    class EveryFive(snowpy.Progress):
        every = 5

        def __call__(self, epoch, done, total, mistakes):
            calls.append((epoch, done, mistakes))

    reported = LearnerNetwork(table, epochs=3, shuffle=False).fit(X, y, progress=EveryFive())
    plain = LearnerNetwork(table, epochs=3, shuffle=False).fit(X, y)
    assert reported.mistakes_ == plain.mistakes_ == [2, 0]
    assert reported.updates_ == plain.updates_ == [2, 0]
    assert [done for epoch, done, _ in calls if epoch == 0] == [1, 2, 4, 5, 8, 10, 15,
                                                                 16, 18]
    assert sum(m for epoch, _, m in calls if epoch == 0) == 2
    assert [m for epoch, done, m in calls if epoch == 0 and done <= 4] == [0, 1, 1]
    stopped = LearnerNetwork(table, epochs=5, calibrate="progressive", shuffle=False).fit(X, y)
    assert len(stopped.mistakes_) == 2 and stopped.calibration_ is not None
    assert LearnerNetwork(table).start(3).multilabel_ is False


def test_a_learner_network_refuses_blocks_in_one_line():
    class Blocks:  # (the Blocks protocol: examples a block at a time)
        n, nnz, width, labels, multilabel = 2, 2, 2, ["a", "b"], False

        def epoch(self, salt):
            yield sp.csr_matrix(np.eye(2)), ["a", "b"], None

    with pytest.raises(ConfigurationError) as refused:
        LearnerNetwork(TABLE).fit(Blocks())
    assert str(refused.value) == "a LearnerNetwork learns from a matrix, not from blocks"
    with pytest.raises(ConfigurationError) as refused:  # (nor its stream's targets)
        LearnerNetwork(TABLE).partial_fit(sp.csr_matrix(np.eye(2)), ["a", "b"],
                                          targets=[["a"], ["b"]])
    assert str(refused.value) == ("targets= (SNoW's sequential model) is not available to "
                                  "a learner's rule: every target scores every example")


def test_an_exception_a_learners_compiled_similarity_could_not_raise_stops_the_training(
        table):
    """A C callback cannot raise: numba hands its exception to ``sys.unraisablehook``.
    While the network's driver runs a learner, such an exception is collected and the
    training stops, naming the rule, where it had been printed and the training gone on."""
    import sys

    class CPUContext:
        pass

    class Raising(Table):
        def learn(self, examples, order, before=None):
            sys.unraisablehook(types.SimpleNamespace(object=CPUContext(),
                                                     exc_value=ValueError("gave up")))
            return super().learn(examples, order, before)

    X, y = problem()
    with _plugged("raising", Raising):
        with pytest.raises(PluginError, match=r"^the learner of rule 'raising' raised "
                                              r"ValueError: gave up \(1 time\(s\)\); "
                                              r"training stopped$"):
            LearnerNetwork("raising", shuffle=False).fit(X, y)


def test_a_learner_network_driven_as_a_network_counts_its_figures_alike(table):
    """The driver runs a learner's epochs as a Network's: a partial_fit is an entry of the
    figures, and a run of learn_one after it opens an entry of its own (where it had been
    added to the partial_fit's)."""
    X, y = problem()
    net = LearnerNetwork(table, shuffle=False).partial_fit(X, y)
    assert net.mistakes_ == [2] and net.n_examples_seen_ == 6
    net.learn_one({0: 1.0, 2: 1.0}, "a")
    net.learn_one({1: 1.0, 2: 1.0}, "b")
    assert len(net.mistakes_) == 2 and net.n_examples_seen_ == 8
    net.partial_fit(X[:2], y[:2])
    assert len(net.mistakes_) == 3 and net.n_examples_seen_ == 10
    net.learn_one({0: 1.0, 2: 1.0}, "a")  # (not added to the partial_fit's entry)
    assert len(net.mistakes_) == 4 and net.n_examples_seen_ == 11
