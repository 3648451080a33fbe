"""The kernel Perceptron plugin: conformance, the primal equivalence, kernels by hand,
the budget, what an update adds, and the classifier, its explanation, its service and the
command line."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import snowpy
from snowpy.exceptions import ConfigurationError
from snowpy.plugins import list_rules
from snowpy.testing import conformance_checks
from snowpy.network.learner import LearnerNetwork
from snowpy_kernel_perceptron import SupportVectors

DEMO = Path(__file__).resolve().parents[3] / "corpora" / "demo"


def _demo(ngrams=1):
    from snowpy.corpora import read_tsv

    train = list(read_tsv(DEMO / "train.tsv"))
    test = list(read_tsv(DEMO / "test.tsv"))
    return ([d.text for d in train], [d.label for d in train],
            [d.text for d in test], [d.label for d in test])


def test_registered_through_its_entry_point():
    provided = list_rules()["kernel-perceptron"]
    assert provided.plugin == "kernel-perceptron"
    assert provided.distribution.startswith("snowpy-kernel-perceptron")
    assert provided.record.learner


def test_written_over_snowpys_public_modules_only():
    """The plugin is a Learner (snowpy.rules' protocol) and imports none of snowpy's
    private or internal modules: only what a rule's author is given."""
    import ast

    import snowpy_kernel_perceptron

    public = {"snowpy", "snowpy.exceptions", "snowpy.numba_kernels", "snowpy.rules",
              "snowpy.rules.kernels"}
    imported = set()
    for path in Path(snowpy_kernel_perceptron.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    used = {name for name in imported if name.split(".")[0] == "snowpy"}
    assert used and used <= public, sorted(used - public)
    assert issubclass(SupportVectors, snowpy.rules.Learner)


def test_each_network_names_the_one_a_rule_learns_in():
    X = sp.csr_matrix(np.eye(2))
    with pytest.raises(ConfigurationError, match="^rule 'kernel-perceptron' keeps a learner "
                       "of its own: use snowpy.network.learner.LearnerNetwork"):
        snowpy.Network("kernel-perceptron").fit(X, ["a", "b"])
    with pytest.raises(ConfigurationError, match="^rule 'perceptron' keeps a weight table: "
                       "use snowpy.Network"):
        LearnerNetwork("perceptron").fit(X, ["a", "b"])


@pytest.mark.parametrize("params", [{}, {"kernel": "gaussian", "gamma": 0.1},
                                    {"kernel": "linear", "budget": 25}],
                         ids=["polynomial", "gaussian", "linear-budget"])
@pytest.mark.parametrize("check", conformance_checks(), ids=lambda check: check.__name__)
def test_conformance(check, params):
    check("kernel-perceptron", params)


@pytest.mark.parametrize("shuffle", [False, True])
def test_linear_kernel_makes_the_primal_perceptrons_mistakes(shuffle):
    """The dual Perceptron is the Perceptron (Freund and Schapire 1999). Binary features, step 1: every
    sum is a whole number, so the two agree exactly, mistake for mistake."""
    texts, labels, test_texts, _ = _demo()
    front = snowpy.Featurizer(bits=18, ngrams=1)
    X, X_test = front.transform(texts), front.transform(test_texts)
    dual = LearnerNetwork("kernel-perceptron", kernel="linear", budget=0, epochs=5,
                              shuffle=shuffle).fit(X, labels)
    primal = snowpy.Network("perceptron", learning_rate=1.0, bias=False, average=False,
                            shuffle=shuffle, epochs=5, links="touched", precision="float64",
                            discard=None).fit(X, labels)
    assert dual.mistakes_ == primal.mistakes_ and dual.mistakes_[0] > 10
    assert dual.updates_ == primal.updates_
    np.testing.assert_array_equal(dual.target_scores(X_test), primal.target_scores(X_test))


def test_kernels_by_hand():
    from snowpy_kernel_perceptron.plugin import similarity

    a_ids, a_vals = np.array([0, 2, 5]), np.array([1.0, 2.0, -1.0])
    b_ids, b_vals = np.array([2, 3, 5]), np.array([0.5, 4.0, 1.0])
    dot = 2.0 * 0.5 + (-1.0) * 1.0  # 0: features 2 and 5 shared
    assert similarity(a_ids, a_vals, b_ids, b_vals, np.array([0.0, 0, 0, 0])) == dot
    assert similarity(a_ids, a_vals, b_ids, b_vals, np.array([1.0, 3, 0.5, 2.0])) == \
        pytest.approx((0.5 * dot + 2.0) ** 3)
    squared = 1 + (2 - 0.5) ** 2 + 16 + (-1 - 1) ** 2  # ||a - b||^2
    assert similarity(a_ids, a_vals, b_ids, b_vals, np.array([2.0, 0, 0.1, 0])) == \
        pytest.approx(math.exp(-0.1 * squared))


def test_xor_needs_the_kernel():
    """Not linearly separable: the degree-2 kernel learns it, the Perceptron cannot."""
    X = sp.csr_matrix(np.array([[1.0, 0], [0, 1], [1, 1], [0, 0]]))
    xor = ["no", "no", "yes", "yes"]
    dual = LearnerNetwork("kernel-perceptron", degree=2, epochs=50, shuffle=False)
    assert dual.fit(X, xor).predict(X).tolist() == xor
    assert dual.mistakes_[-1] == 0
    primal = snowpy.Network("perceptron", bias=False, epochs=50, shuffle=False).fit(X, xor)
    assert primal.predict(X).tolist() != xor


def test_the_first_support_vector_by_hand():
    """All scores start at 0 >= theta: the first example ("a") is a mistake for target b
    (a negative claimed), and right for a; it becomes a support vector with alpha = (0, -1)
    (step 1). Next, x = the same example: f_b = -K(x, x) = -(1*2 + 1)^2 = -9 < 0."""
    X = sp.csr_matrix(np.array([[1.0, 1.0, 0], [0, 0, 1.0]]))
    net = LearnerNetwork("kernel-perceptron", degree=2, shuffle=False, epochs=1)
    net.partial_fit(X[:1], ["a"], classes=["a", "b"])
    state = net.to_state()[1]
    assert state["sv_ids"].tolist() == [0, 1] and state["sv_alpha"].tolist() == [[0.0, -1.0]]
    np.testing.assert_allclose(net.target_scores(X[:1]), [[0.0, -9.0]])


def test_partial_fit_is_the_networks_an_indicator_its_columns_a_switch_refused():
    """partial_fit is written once for every kind (snowpy.network.network): a stream of 0/1
    indicator rows has a target per column from the first call, even a column never set
    (as Network's), and a single-label y after it is refused."""
    X = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 1.0, 0]]))
    net = LearnerNetwork("kernel-perceptron", shuffle=False)
    net.partial_fit(X, np.array([[1, 0, 0], [0, 1, 0]]))
    assert net.classes_.tolist() == [0, 1, 2] and net.multilabel_
    assert net.predict(X).shape == (2, 3)
    with pytest.raises(ConfigurationError, match="trained multi-label; y must be"):
        net.partial_fit(X, ["a", "b"])
    with pytest.raises(ConfigurationError, match="X has 4 features"):
        net.partial_fit(sp.csr_matrix((1, 4)), np.array([[1, 0, 0]]))


@pytest.mark.parametrize("params", [{}, {"kernel": "linear", "budget": 25}],
                         ids=["polynomial", "linear-budget"])
def test_an_update_adds_a_support_vector_of_the_examples_features_only(params):
    """What snowpy's conformance suite asks of a weight table's update, asked of support
    vectors: the earlier ones keep their coefficients, the new one holds the example's
    features only (unless the budget is full: then the oldest gives its slot)."""
    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random((300, 80)) < 0.15).astype(float))
    y = rng.integers(0, 3, 300)
    net = LearnerNetwork("kernel-perceptron", epochs=1, **params).fit(X, y)
    before = net.to_state()[1]
    net.partial_fit(X[:1], [(y[0] + 1) % 3])
    assert net.updates_[-1] > 0, "a mislabelled example caused no update"
    after = net.to_state()[1]
    budget = net.learner_.budget
    if budget and before["sv_len"].size == budget:
        return
    kept = before["sv_len"].size
    np.testing.assert_array_equal(after["sv_alpha"][:kept], before["sv_alpha"])
    assert set(after["sv_ids"][before["sv_ids"].size:].tolist()) <= set(X[:1].indices.tolist())


def test_a_budget_bounds_the_support_vectors_and_drops_the_oldest():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random((600, 40)) < 0.2).astype(float))
    y = rng.integers(0, 3, 600)  # noise: a mistake on about every example
    net = LearnerNetwork("kernel-perceptron", budget=50, shuffle=False, epochs=1)
    net.fit(X, y)
    assert net.learner_.n_support == 50 and net.learner_.alpha.shape[0] == 50  # memory stays bounded
    assert sum(net.mistakes_) > 300
    held = net.to_state()[1]
    # the 50 support vectors are the last 50 examples that caused an update, in a ring
    oldest = net.learner_.ring[1]
    ring = np.r_[oldest:50, 0:oldest]
    rows = [tuple(held["sv_ids"][sum(held["sv_len"][:s]):sum(held["sv_len"][:s + 1])])
            for s in ring]
    examples = [tuple(X[i].indices) for i in range(600)]
    where = [max(i for i, e in enumerate(examples) if e == row) for row in rows]
    # the same stream one example at a time says which examples caused an update
    step = LearnerNetwork("kernel-perceptron", budget=50, shuffle=False, epochs=1)
    updated = []
    for i in range(600):
        step.partial_fit(X[i], [y[i]], classes=[0, 1, 2])
        if step.updates_[-1]:
            updated.append(i)
    assert where == updated[-50:]  # the ring, oldest first, holds the last 50 of them


def test_classifier_online_and_files(tmp_path):
    texts, labels, test_texts, test_labels = _demo()
    clf = snowpy.SnowClassifier("kernel-perceptron", ngrams=1, degree=2).fit(texts, labels)
    assert isinstance(clf.network_.learner_, SupportVectors)
    assert clf.score(test_texts, test_labels) >= 0.85
    proba = clf.predict_proba(test_texts)
    assert np.allclose(proba.sum(axis=1), 1.0)
    again = snowpy.load(clf.save(tmp_path / "kp.snowpy"))
    np.testing.assert_array_equal(again.predict_proba(test_texts), proba)
    stream = snowpy.SnowClassifier("kernel-perceptron", ngrams=1, calibrate="progressive")
    for text, label in zip(texts, labels):
        stream.learn_one(text, label)
    assert stream.score(test_texts, test_labels) >= 0.8
    assert sum(stream.predict_proba_one(test_texts[0]).values()) == pytest.approx(1.0)


def test_trains_from_the_command_line(tmp_path):
    script = shutil.which("snowpy")
    if script is None:
        pytest.skip("the snowpy script is not installed")
    model = tmp_path / "kp.snowpy"
    result = subprocess.run([script, "train", str(DEMO / "train.tsv"), "-o", str(model),
                             "--rule", "kernel-perceptron", "--kernel", "gaussian",
                             # (rows of length 1 at the default front end: squared
                             # distances from 0 to 2)
                             "--gamma", "5", "--budget", "300", "--json"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["rule"] == "kernel-perceptron" and summary["rule_params"]["budget"] == 300
    evaluated = subprocess.run([script, "evaluate", str(model), str(DEMO / "test.tsv"),
                                "--json"], capture_output=True, text=True, timeout=600)
    assert evaluated.returncode == 0 and json.loads(evaluated.stdout)["accuracy"] >= 0.85
    inspected = subprocess.run([script, "inspect", str(model), "--json"],
                               capture_output=True, text=True, timeout=600)
    assert json.loads(inspected.stdout)["support_vectors"] <= 300
    shown = subprocess.run([script, "inspect", str(model)], capture_output=True, text=True,
                           timeout=600)
    assert shown.returncode == 0 and "support vectors: " in shown.stdout


def test_a_saved_progressive_window_goes_on_where_it_stood(tmp_path):
    """A dual network's model file keeps its progressive window as a network's does:
    its scores and where it stands between fits, so that a loaded stream refits its
    sigmoids when the one never saved would."""
    texts, labels, test_texts, _ = _demo()
    stream = snowpy.SnowClassifier("kernel-perceptron", ngrams=1, calibrate="progressive")
    for text, label in zip(texts[:300], labels[:300]):
        stream.learn_one(text, label)
    window = stream.network_.engine_.progressive
    assert window.since_fit > 0
    again = snowpy.load(stream.save(tmp_path / "stream.snowpy"))
    kept = again.network_.engine_.progressive
    assert (kept.since_fit, kept.low, kept.filled) == (window.since_fit, window.low,
                                                        window.filled)
    for model in (stream, again):
        for text, label in zip(texts[300:], labels[300:]):
            model.learn_one(text, label)
    np.testing.assert_array_equal(again.predict_proba(test_texts),
                                  stream.predict_proba(test_texts))


def test_explained_by_its_support_vectors():
    texts, labels, _, _ = _demo()
    clf = snowpy.SnowClassifier("kernel-perceptron", epochs=2, calibrate=None,
                                ngrams=(1, 1)).fit(texts, labels)
    document = "my parcel never arrived and I want a refund"
    why = clf.explain(document, top_k=2, features=None)
    scores = clf.target_scores([document])[0]
    classes = list(clf.classes_)
    assert why["kind"] == "learner"
    for target in why["targets"]:
        total = sum(v["contribution"] for v in target["support_vectors"]) - target["theta"]
        assert total == pytest.approx(scores[classes.index(target["label"])], abs=1e-9)
        assert target["support_vectors"]
    # stacked with the Naive Bayes evidence (evidence=True), the evidence is one more term
    stacked = snowpy.SnowClassifier("kernel-perceptron", epochs=2, ngrams=(1, 1),
                                    evidence=True).fit(texts, labels)
    why = stacked.explain(document, top_k=2, features=None)
    scores = stacked.target_scores([document])[0]
    for target in why["targets"]:
        total = sum(v["contribution"] for v in target["support_vectors"]) \
            - target["theta"] + target["evidence"]["contribution"]
        assert total == pytest.approx(scores[classes.index(target["label"])], abs=1e-9)
        assert target["residual"] == pytest.approx(0.0, abs=1e-9)


def test_a_service_learns(tmp_path):
    """A classifier over a network of support vectors keeps learning when served: its
    width is the front end's, 2^bits."""
    pytest.importorskip("starlette")
    from snowpy.serving import Service

    texts, labels, test_texts, test_labels = _demo()
    snowpy.SnowClassifier(rule="kernel-perceptron", calibrate=None).fit(
        texts[:200], labels[:200]).save(tmp_path / "dual.snowpy")
    service = Service(tmp_path / "dual.snowpy", tmp_path / "state")
    assert service.closed is None and service.health()["learning"] == "open"
    assert service.learn(list(zip(test_texts[:3], test_labels[:3])))["learned"] == 3
    service.journal.close()


def test_a_file_of_the_former_dual_network_loads_and_scores_as_it_did():
    """A model file the plugin's own network wrote (kind ``dual``, snowpy 0.1) loads as
    a learner's network and scores as it did: XOR's four rows, budget 10, written by
    ``DualNetwork("kernel-perceptron", degree=2, epochs=50, shuffle=False, budget=10,
    calibrate=None)``."""
    X = sp.csr_matrix(np.array([[1.0, 0], [0, 1], [1, 1], [0, 0]]))
    net = snowpy.load(Path(__file__).parent / "dual-0.1.snowpy")
    assert isinstance(net, LearnerNetwork) and net.learner_.n_support == 10
    np.testing.assert_array_equal(net.target_scores(X), [[-2, 1], [-2, 1], [-6, 5], [-2, 1]])
    assert net.mistakes_[:8] == [1, 4, 2, 3, 4, 4, 4, 2] and len(net.mistakes_) == 50
    assert net.classes_.tolist() == ["no", "yes"]


def test_a_learner_is_checked_where_it_meets_the_network():
    """What a learner gives the network is checked there, in one line: a file whose
    coefficients do not match its labels, a learner whose state takes a name the network
    writes, scores of the wrong shape."""
    from snowpy.exceptions import ModelFileError, PluginError

    X = sp.csr_matrix(np.array([[1.0, 0], [0, 1], [1, 1], [0, 0]]))
    net = LearnerNetwork("kernel-perceptron", epochs=2, calibrate=None).fit(
        X, ["no", "no", "yes", "yes"])
    header, arrays = net.to_state()
    arrays["sv_alpha"] = np.hstack([arrays["sv_alpha"], arrays["sv_alpha"]])
    with pytest.raises(ModelFileError, match="support vectors are inconsistent"):
        LearnerNetwork.from_state(header, arrays, "m.snowpy")
    learner = net.learner_
    learner.to_state = lambda: ({"labels": []}, {})
    with pytest.raises(PluginError, match="names 'labels', which its network writes"):
        net.to_state()
    learner.scores = lambda examples: np.zeros((examples.n, 5))
    with pytest.raises(PluginError, match=r"scores must be an array of shape \(4, 2\)"):
        net.target_scores(X)
