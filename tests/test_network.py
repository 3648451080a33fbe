"""The Network estimator: semantics against a plain-numpy reference, and its API."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import scipy.sparse as sp

import snowpy
from snowpy.base import is_fitted
from snowpy.network.driver import example_keys, keyed_order
from snowpy.exceptions import ConfigurationError, NotFittedError


def reference_train(X, labels, n_targets, *, rule, params, theta, bias, epochs, seed,
                    links="all"):
    """Straightforward one-vs-all training, one example and one target at a time.

    Returns the final and the averaged weights, [features + 1, targets]
    (row 0: bias), the mistakes of each epoch (winner-take-all) and which
    weights are links. With ``links="positive"`` (SNoW's sparse network) a
    weight exists once its feature is active in an example positive for the
    target, weighs 0 before, and only existing weights are updated.
    """
    keys = example_keys(sp.csr_matrix(X, dtype=np.float64), np.arange(X.shape[0] + 1),
                        np.asarray(labels))  # the engine shuffles by what examples are
    X = X.toarray()
    n, F = X.shape
    w0 = params.get("initial_weight", 0.0)
    positive = links == "positive"
    W = np.zeros((F + 1, n_targets)) if positive else np.full((F + 1, n_targets), w0)
    linked = np.zeros(W.shape, dtype=bool) if positive else np.ones(W.shape, dtype=bool)
    U = np.zeros_like(W)
    seen = 0
    rng = np.random.default_rng(seed)
    mistakes = []
    for _ in range(epochs):
        wrong = 0
        for i in keyed_order(keys, int(rng.integers(0, 2**63 - 1, dtype=np.int64))):
            x = np.r_[1.0 if bias else 0.0, X[i]]
            active = np.flatnonzero(x)
            activation = x @ W  # the prediction comes before any link of this example
            wrong += int(np.argmax(activation) != labels[i])
            if positive:  # then the active features are linked to the example's target
                fresh = active[~linked[active, labels[i]]]
                linked[fresh, labels[i]] = True
                W[fresh, labels[i]] = w0
                U[fresh, labels[i]] += seen * w0  # from 0 to w0 at this time
                activation = x @ W
            for t in range(n_targets):
                is_positive = t == labels[i]
                if is_positive and activation[t] >= theta or \
                        not is_positive and activation[t] < theta:
                    continue
                rows = active[linked[active, t]]
                old = W[rows, t].copy()
                if rule == "perceptron":
                    W[rows, t] += params["learning_rate"] * (1 if is_positive else -1) * x[rows]
                else:
                    factor = params["alpha"] if is_positive else params["beta"]
                    W[rows, t] *= factor ** x[rows]
                U[rows, t] += seen * (W[rows, t] - old)
            seen += 1
        mistakes.append(wrong)
    return W, W - U / seen, mistakes, linked


def random_problem(seed=0, n=60, F=30, T=3, binary=False):
    rng = np.random.default_rng(seed)
    dense = (rng.random((n, F)) < 0.2) * (1.0 if binary else rng.uniform(0.5, 2.0, (n, F)))
    labels = rng.integers(0, T, n)
    return sp.csr_matrix(dense), labels


@pytest.mark.parametrize("rule,params,theta", [
    ("perceptron", {"learning_rate": 0.5}, 0.0),
    ("winnow", {"alpha": 1.5, "beta": 0.7, "initial_weight": 0.3, "thickness": 0.0}, 1.0),
])  # (the plain mistake-driven rules: no thick separator, which Winnow's default has)
@pytest.mark.parametrize("links", ["all", "touched", "positive"])
def test_engine_matches_reference(rule, params, theta, links):
    X, labels = random_problem(binary=rule == "winnow")
    W, averaged, mistakes, linked = reference_train(
        X, labels, 3, rule=rule, params={k: v for k, v in params.items() if k != "thickness"},
        theta=theta, bias=True, epochs=4, seed=3,
        links="positive" if links == "positive" else "all")
    net = snowpy.Network(rule, epochs=4, seed=3, early_stop=False, links=links,
                         precision="float64", discard=None, theta=theta, **params).fit(X, labels)
    assert net.mistakes_ == mistakes
    columns = np.r_[-1, np.arange(X.shape[1])]  # the bias, then every feature
    for t in range(3):
        np.testing.assert_allclose(net.engine_.store.planes_of(columns, t)[:, 0], W[:, t], rtol=1e-12)
    np.testing.assert_allclose(net.intercept_, averaged[0] - theta, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(net.coef_, averaged[1:].T, rtol=1e-10, atol=1e-12)
    if links == "positive":  # a link exactly where a feature met a positive example
        assert net.n_links_ == linked.sum()


def test_decision_function_is_the_linear_activation_minus_theta():
    X, labels = random_problem(seed=1)
    for links in ("positive", "touched"):
        net = snowpy.Network("winnow", theta=2.0, links=links).fit(X, labels)
        expected = X @ net.coef_.T + net.intercept_
        np.testing.assert_allclose(net.decision_function(X), expected, rtol=1e-12)
        np.testing.assert_array_equal(net.predict(X), net.classes_[np.argmax(expected, axis=1)])


def test_positive_links_worked_example():
    """SNoW's sparse network: a feature never active in a positive example of a target
    has no link to it and contributes nothing to it, whatever the initial weight."""
    X = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]))
    net = snowpy.Network("winnow", links="positive", initial_weight=2.0, theta=3.0,
                         alpha=2.0, beta=0.5, average=False, bias=False, epochs=1,
                         shuffle=False, thickness=0.0).fit(X, ["a", "b"])
    # example 1 ("a"): links x0-a, x1-a at 2; a = 4 >= 3 right, b has no links: 0
    # example 2 ("b"): links x1-b, x2-b at 2; a = 2 (x1 only) < 3 right, b = 4 >= 3 right
    assert net.n_links_ == 4 and net.updates_ == [0]
    np.testing.assert_array_equal(net.coef_, [[2.0, 2.0, 0.0], [0.0, 2.0, 2.0]])
    # x2 never met an "a" example: with x2 alone, "a" scores 0 (below theta 3)
    np.testing.assert_array_equal(net.target_scores([[0.0, 0.0, 1.0]]), [[-3.0, -1.0]])
    assert net.decision_function([[0.0, 0.0, 1.0]]).tolist() == [2.0]  # binary: b over a
    # an unseen example of "a" with x2: a demotion of "b" on x2 only (x0 has no "b" link)
    net.partial_fit(sp.csr_matrix([[1.0, 0.0, 1.0]]), ["a"])
    np.testing.assert_array_equal(net.coef_, [[2.0, 2.0, 2.0], [0.0, 2.0, 2.0]])
    assert net.updates_[-1] == 0  # a = 2 + 2 = 4 >= 3 right; b = 2 < 3 right


def test_touched_predicts_like_all_on_unseen_features():
    X, labels = random_problem(seed=2, F=50)
    X_test, _ = random_problem(seed=9, F=50)  # has features never seen in training
    full = snowpy.Network("winnow", links="all", discard=None).fit(X, labels)
    touched = snowpy.Network("winnow", links="touched", discard=None).fit(X, labels)
    np.testing.assert_allclose(
        touched.decision_function(X_test), full.decision_function(X_test), rtol=1e-12
    )
    assert touched.n_links_ <= full.n_links_
    # an example that causes no update creates no link under "touched"
    X = sp.csr_matrix(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]))
    quiet = snowpy.Network("perceptron", links="touched", average=False, epochs=1,
                           shuffle=False, discard=None).fit(X, ["a", "b", "a"])
    # 1: both targets at 0 >= 0: "a" right, "b" demoted on the bias and x0
    # 2: a = 0 >= 0 demoted (bias, x1); b = -0.1 < 0 promoted (bias, x1)
    # 3: a = -0.1 < 0 promoted on bias, x0, x2; b = -0.1 right: no link for x2-b
    assert quiet.n_links_ == 7
    assert snowpy.Network("perceptron", links="all", average=False, epochs=1,
                          shuffle=False, discard=None).fit(X, ["a", "b", "a"]).n_links_ == 8


def test_pool_growth_in_place_or_by_copy_keeps_every_weight():
    """The pool grows in place when nothing else holds it, else by a copy; training in
    blocks gives the network trained at once."""
    rng = np.random.default_rng(3)
    blocks = [sp.csr_matrix((np.ones(3000), rng.integers(0, 2**20, 3000), np.arange(0, 3001, 30)),
                            shape=(100, 2**20)) for _ in range(3)]
    labels = [rng.integers(0, 4, 100) for _ in range(3)]
    whole = snowpy.Network("balanced-winnow").partial_fit(sp.vstack(blocks),
                                                          np.concatenate(labels))
    free, held = snowpy.Network("balanced-winnow"), snowpy.Network("balanced-winnow")
    for X, y in zip(blocks, labels):
        free.partial_fit(X, y)
        view = held.engine_.store.W[:10] if is_fitted(held) else None  # forces the copy
        held.partial_fit(X, y)
        if view is not None:
            assert np.isfinite(view).all()
    assert free.engine_.store.W.shape[0] > 4096  # it grew
    for net in (free, held):
        np.testing.assert_allclose(net.decision_function(blocks[0]),
                                   whole.decision_function(blocks[0]), rtol=1e-12)


def test_room_added_to_the_pool_is_not_brought_into_memory():
    """The pool's arrays grow with realloc (snowpy._core.block): the same block when
    nothing else holds the array, a new one (a copy) when a view does, and either way
    the room added is not written to, so it costs no memory until links land there
    (numpy's resize wrote zeros over it: 2 million idle slots of 20 bytes were resident
    at the end of 20 Newsgroups)."""
    from types import SimpleNamespace

    from snowpy.network.links import _resized

    def resident_mb():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status
                        if line.startswith("VmRSS")) / 1024

    holder = SimpleNamespace(W=np.arange(8, dtype=np.float32).reshape(4, 2))
    _resized(holder, "W", 16, None)  # a plain array: copied into a block
    block = id(holder.W.base)  # (its id only: a name for it would be a reference)
    np.testing.assert_array_equal(holder.W[:4].ravel(), np.arange(8))
    before = resident_mb()
    _resized(holder, "W", 16 * 2**20, None)  # 128 MB of room, in place
    assert id(holder.W.base) == block and holder.W.shape == (16 * 2**20, 2)
    if sys.platform.startswith("linux"):
        assert resident_mb() - before < 16  # (not the 128 MB added)
    np.testing.assert_array_equal(holder.W[:4].ravel(), np.arange(8))
    view = holder.W[:4]  # a view held: the block cannot move, the array is copied
    _resized(holder, "W", 32, None)
    assert id(view.base.base) == block and holder.W.base is not view.base.base
    np.testing.assert_array_equal(view.ravel(), np.arange(8))
    np.testing.assert_array_equal(holder.W[:4], view)
    _resized(holder, "W", 2, 0)  # cut
    assert holder.W.tolist() == [[0, 1], [2, 3]]


def test_memory_follows_the_links():
    """Memory grows with links and rows, not with features x targets or the width of X."""
    F, T = 2**32, 50
    rng = np.random.default_rng(0)
    cols = rng.choice(2**20, size=5000, replace=False)
    X = sp.csr_matrix((np.ones(8000), (np.repeat(np.arange(1000), 8), rng.choice(cols, 8000))),
                      shape=(1000, F))
    labels = rng.integers(0, T, 1000)
    net = snowpy.Network("perceptron", average=False, links="positive", discard=None,
                         precision="float64").fit(X, labels)
    pairs = {(c, t) for i, t in enumerate(labels) for c in X[i].indices}
    assert net.n_links_ == len(pairs) + T  # one per (feature, label) met, and the biases
    store = net.engine_.store
    seen = np.unique(X.indices).size
    assert store.n_rows == seen + 1
    # links: a target, a weight; rows: start, size, room and the feature map (<= 80 bytes)
    per_link, per_row = 4 + 8, 16 + 80
    assert store.nbytes() <= 3 * (per_link * max(net.n_links_, 4096) + per_row * max(seen, 1024))
    full = snowpy.Network("perceptron", average=False, links="all", discard=None).fit(X, labels)
    assert full.n_links_ == (seen + 1) * T


def test_fixed_seed_is_deterministic_and_seeds_differ():
    X, labels = random_problem(seed=4)
    a = snowpy.Network("balanced-winnow", seed=5).fit(X, labels).engine_.effective_weights()
    b = snowpy.Network("balanced-winnow", seed=5).fit(X, labels).engine_.effective_weights()
    c = snowpy.Network("balanced-winnow", seed=6).fit(X, labels).engine_.effective_weights()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_partial_fit_grows_a_target_for_a_new_label():
    X, labels = random_problem(seed=5)
    names = np.array(["x", "y", "z"])[labels]
    net = snowpy.Network("perceptron").partial_fit(X[:30], names[:30])
    before = net.engine_.effective_weights().copy()
    assert sorted(net.classes_.tolist()) == sorted(set(names[:30]))
    net.partial_fit(X[:2], ["new", "x"])
    assert "new" in net.classes_.tolist()
    assert net.decision_function(X).shape == (X.shape[0], len(net.classes_))
    assert before.shape[1] == len(net.classes_) - 1


def test_labels_keep_their_type():
    X, labels = random_problem(seed=6)
    assert snowpy.Network("winnow").fit(X, labels).predict(X).dtype == np.int64
    mixed = np.array([1, "one"], dtype=object)[labels % 2]
    assert set(snowpy.Network("winnow").fit(X, mixed).predict(X).tolist()) <= {1, "one"}


def test_multilabel_example_updates_all_its_targets():
    X = sp.csr_matrix(np.array([[1.0, 1.0, 0.0]]))
    net = snowpy.Network("perceptron", theta=0.5, learning_rate=1, average=False, epochs=1)
    net.fit(X, [["earn", "acq"]])
    assert net.engine_.promotions.tolist() == [1, 1]
    assert net.predict(X) == [("acq", "earn")]
    assert net.multilabel_


def test_multilabel_learns_label_sets():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random((300, 40)) < 0.15).astype(float))
    y = [tuple(label for label, cols in (("a", [0, 1]), ("b", [2, 3])) if X[i, cols].sum())
         for i in range(300)]
    net = snowpy.Network("balanced-winnow", epochs=20).fit(X, y)
    assert net.score(X, y) > 0.95


def test_targets_restrict_what_an_example_trains_and_predicts():
    X = sp.csr_matrix(np.eye(3))
    net = snowpy.Network("perceptron", theta=0.5, average=False, epochs=1, shuffle=False)
    net.fit(X, ["a", "b", "c"], targets=[["a", "b"], ["a", "b"], ["a", "b", "c"]])
    # "c" was outside the first two examples' subsets: only the third trained it
    assert net.engine_.promotions[2] + net.engine_.demotions[2] == 1
    assert net.predict(X, targets=[["b"], ["b"], ["a"]]).tolist() == ["b", "b", "a"]


def test_bias_is_a_learned_threshold():
    X = sp.csr_matrix(np.zeros((4, 2)))  # no features: only the bias can separate
    net = snowpy.Network("perceptron", average=False).fit(X, ["a", "a", "a", "b"])
    assert net.predict(X).tolist() == ["a"] * 4
    without = snowpy.Network("perceptron", average=False, bias=False).fit(X, ["a", "a", "a", "b"])
    assert without.intercept_.tolist() == [0.0, 0.0]


def test_early_stop_after_an_epoch_without_update():
    X = sp.csr_matrix(np.eye(4))
    net = snowpy.Network("perceptron", epochs=50).fit(X, ["a", "b", "c", "d"])
    assert net.updates_[-1] == 0 and len(net.updates_) < 50
    full = snowpy.Network("perceptron", epochs=50, early_stop=False).fit(X, ["a", "b", "c", "d"])
    assert len(full.updates_) == 50


def test_each_builtin_rule_learns_a_separable_multiclass_problem():
    rng = np.random.default_rng(1)
    centers = rng.random((4, 60)) < 0.15
    rows = np.repeat(np.arange(4), 50)
    noise = rng.random((200, 60)) < 0.03
    X = sp.csr_matrix((centers[rows] | noise).astype(float))
    for rule in ("perceptron", "winnow", "balanced-winnow", "thick-separator", "aggressive",
                 "passive-aggressive"):
        net = snowpy.Network(rule, epochs=10).fit(X, rows)
        assert net.score(X, rows) >= 0.97, rule


def test_get_and_set_params_follow_scikit_learn():
    net = snowpy.Network("winnow", alpha=1.5, epochs=3)
    params = net.get_params()
    assert params["alpha"] == 1.5 and params["epochs"] == 3 and params["rule"] == "winnow"
    clone = type(net)(**params)
    assert clone.get_params() == params
    net.set_params(beta=0.6, seed=4)
    assert net.get_params()["beta"] == 0.6 and net.seed == 4
    assert repr(net) == "Network(rule='winnow', epochs=3, seed=4, alpha=1.5, beta=0.6)"


@pytest.mark.parametrize("call,error,fragment", [
    (lambda: snowpy.Network().predict([[1.0]]), NotFittedError, "not trained yet"),
    (lambda: snowpy.Network().fit([[np.nan]], ["a"]), ConfigurationError, "NaN or infinity"),
    (lambda: snowpy.Network().fit([[1.0], [2.0]], ["a"]), ConfigurationError,
     "X has 2 rows but y has 1 entries"),
    (lambda: snowpy.Network(epochs=0).fit([[1.0]], ["a"]), ConfigurationError,
     "epochs must be an integer from 1 to"),
    (lambda: snowpy.Network(links="some").fit([[1.0]], ["a"]), ConfigurationError,
     "links must be one of 'positive', 'touched', 'all', 'signed', got 'some'"),
    (lambda: snowpy.Network(eligibility=0).fit([[1.0]], ["a"]), ConfigurationError,
     "eligibility must be an integer >= 1"),
    (lambda: snowpy.Network(links="touched", eligibility="percent:10").fit([[1.0]], ["a"]),
     ConfigurationError, "only links='positive' counts"),
    (lambda: snowpy.Network(precision="float16").fit([[1.0]], ["a"]), ConfigurationError,
     "precision must be one of 'float64', 'float32'"),
    (lambda: snowpy.Network().fit("some text", ["a"]), ConfigurationError,
     "for raw text use snowpy.SnowClassifier"),
    (lambda: snowpy.Network().fit([[1.0]], [None]), ConfigurationError,
     "a label must be a string"),
    (lambda: snowpy.Network().fit([[1.0], [1.0]], ["a", ["b"]]), ConfigurationError,
     "mixes single labels and collections"),
    (lambda: snowpy.Network().fit([[1.0, 0.0]], ["a"]).predict([[1.0]]), ConfigurationError,
     "X has 1 features, but Network is expecting 2 features as input"),
])
def test_user_errors_are_clear(call, error, fragment):
    with pytest.raises(error) as raised:
        call()
    assert fragment in str(raised.value)


def test_bias_strength_is_configurable():
    X = sp.csr_matrix(np.array([[0.1, 0.0], [0.0, 0.1]]))
    net = snowpy.Network("perceptron", bias=0.1, average=False, learning_rate=1, epochs=1,
                         shuffle=False, links="all", precision="float64",
                         discard=None).fit(X, ["a", "b"])
    # 1st example: activations 0, 0 -> "a" correct at theta 0, "b" demoted: bias_b = -0.1
    # 2nd: a = 0 >= 0 demoted (bias_a = -0.1); b = -0.01 < 0 promoted (bias_b = 0)
    np.testing.assert_allclose(net.engine_.effective_weights()[0], [-0.1, 0.0])
    np.testing.assert_allclose(net.target_scores(X), X @ net.coef_.T + net.intercept_)
    with pytest.raises(ConfigurationError, match="bias must be true, false or a non-negative"):
        snowpy.Network(bias=-1).fit(X, ["a", "b"])


def test_constraint_classification_worked_example():
    """SNoW's -O + (Har-Peled, Roth and Zimak): on an example of label y, every target
    scoring at least y's is demoted and y promoted, once; one-vs-all instead demotes a
    target that claims the example (activation >= theta). Perceptron, rate 1, theta 0,
    no bias, one pass over e0 -> a, e1 -> b, e2 -> c (all activations 0 at first)."""
    X = np.eye(3)
    options = dict(theta=0.0, learning_rate=1.0, bias=False, average=False, shuffle=False,
                   epochs=1, links="all")
    constraint = snowpy.Network("perceptron", multiclass="constraint", **options)
    constraint.fit(X, ["a", "b", "c"])
    # e0: b and c tie with a at 0 -> a +1 on x0, b and c -1 on x0; likewise e1, e2
    assert constraint.coef_.tolist() == [[1, -1, -1], [-1, 1, -1], [-1, -1, 1]]
    ova = snowpy.Network("perceptron", multiclass="ova", **options).fit(X, ["a", "b", "c"])
    # e0: a claims it (0 >= 0): right; b and c claim it too: demoted to -1 on x0
    assert ova.coef_.tolist() == [[0, -1, -1], [-1, 0, -1], [-1, -1, 0]]
    assert constraint.mistakes_ == ova.mistakes_ == [2]  # ties go to the first target


# ------------------------------------------------- predictions from target scores
def _numbered(n):
    """``n`` examples of one feature, example i at strength i + 1 (fewer columns than
    rows: a mix-up of the two shows)."""
    return sp.csr_matrix(np.arange(1.0, n + 1.0).reshape(-1, 1))


def _scored(net, scores):
    """``net`` answering ``scores[i]`` for example i of :func:`_numbered`: every
    prediction derives from ``target_scores``."""
    scores = np.asarray(scores, dtype=np.float64)
    net.target_scores = lambda X: scores[sp.csr_matrix(X).toarray()[:, 0].astype(int) - 1]
    return net


_SCORES = [[0.0, -1e-9, 0.5], [1.0, 1.0, 1.0], [-1.0, -1.0, -1.0], [0.9, 0.0, -0.1],
           [-0.2, 0.3, 0.0]]


def test_a_multilabel_prediction_claims_every_target_at_or_above_the_threshold(monkeypatch):
    monkeypatch.setattr(snowpy.network.network, "_PREDICT_BLOCK", 2)  # blocks of 2 rows
    X = _numbered(5)
    net = _scored(snowpy.Network("perceptron").fit(X, [("a",), ("b",), ("c",), (), ()]),
                  _SCORES)
    assert net.predict(X) == [("a", "c"), ("a", "b", "c"), (), ("a", "b"), ("b", "c")]
    # targets restrict each example's claims; a label the network never met is ignored
    targets = [["a"], ["b", "c"], ["a"], ["b", "z"], ["a", "b", "c"]]
    assert net.predict(X, targets=targets) == [("a",), ("b", "c"), (), ("b",), ("b", "c")]
    with pytest.raises(ConfigurationError) as refused:
        net.predict(X, targets=targets[:4])
    assert str(refused.value) == "X has 5 rows but targets has 4 entries"
    truth = [("a", "c"), ("a", "b", "c"), ("a",), ("b",), ("c", "b")]
    assert net.score(X, truth) == 0.6  # sets: ("c", "b") is ("b", "c")


def test_an_indicator_network_predicts_and_scores_an_indicator_matrix(monkeypatch):
    monkeypatch.setattr(snowpy.network.network, "_PREDICT_BLOCK", 2)
    X = _numbered(5)
    y = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    net = _scored(snowpy.Network("perceptron").fit(X, y), _SCORES)
    predicted = net.predict(X)
    assert predicted.dtype == np.int64
    assert predicted.tolist() == [[1, 0, 1], [1, 1, 1], [0, 0, 0], [1, 1, 0], [0, 1, 1]]
    truth = np.array([[1, 0, 1], [1, 1, 1], [1, 0, 0], [0, 1, 0], [0, 1, 1]])
    assert net.score(X, truth) == 0.6


def test_a_single_label_prediction_is_the_best_allowed_target(monkeypatch):
    monkeypatch.setattr(snowpy.network.network, "_PREDICT_BLOCK", 2)
    X = _numbered(5)
    net = _scored(snowpy.Network("perceptron").fit(X, ["a", "b", "c", "a", "b"]), _SCORES)
    assert net.predict(X).tolist() == ["c", "a", "a", "a", "b"]
    targets = [["a", "b"], ["c"], ["b", "c"], ["z", "c"], ["a"]]
    assert net.predict(X, targets=targets).tolist() == ["a", "c", "b", "c", "a"]
    assert net.score(X, ["c", "a", "b", "b", "b"]) == 0.6


def test_normalised_scores_are_each_rows_softmax_and_abstention_reads_their_margin():
    X = _numbered(4)
    scores = np.array([[1000.0, 999.0, 0.0], [0.0, -1.0, -3.0], [2.0, 2.0, 0.0],
                       [0.5, 3.0, 2.5]])
    net = _scored(snowpy.Network("perceptron").fit(X, ["a", "b", "c", "a"]), scores)
    expected = np.exp(scores - scores.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(net.normalised_scores(X), expected, rtol=1e-12)
    shares = np.sort(expected, axis=1)
    margins = shares[:, -1] - shares[:, -2]  # 0.462, 0.462, 0 (a tie), 0.245
    assert margins[2] == 0.0
    predicted = net.predict(X, abstain=0.3)
    assert predicted.dtype == object
    assert predicted.tolist() == ["a", "a", None, None]
    assert net.predict(X, abstain=0.0).tolist() == ["a", "a", "a", "b"]  # a tie answers
    assert net.predict(X, abstain=1.0).tolist() == [None] * 4
    targets = [["b", "c"], ["c"], ["a", "b"], ["a", "c"]]
    assert net.predict(X, targets=targets, abstain=0.3).tolist() == ["b", "c", None, None]
    for margin in (-0.1, 1.5):
        with pytest.raises(ConfigurationError) as refused:
            net.predict(X, abstain=margin)
        assert str(refused.value) == \
            f"abstain must be a probability margin from 0 to 1, got {margin}"


def test_one_label_never_abstains_and_a_multilabel_network_refuses_to():
    X = sp.csr_matrix(np.eye(2))
    with pytest.warns(UserWarning, match="one class only"):
        one = snowpy.Network("perceptron").fit(X, ["a", "a"])
    assert one.predict(X, abstain=1.0).tolist() == ["a", "a"]
    sets = snowpy.Network("perceptron").fit(X, [("a",), ("b",)])
    with pytest.raises(ConfigurationError) as refused:
        sets.predict(X, abstain=0.5)
    assert str(refused.value) == ("abstain applies to single-label networks (a multi-label "
                                  "network already answers no label at all)")


def test_predict_proba_exists_exactly_when_the_network_is_calibrated():
    X = sp.csr_matrix(np.eye(6))
    y = ["a", "b", "a", "b", "a", "b"]
    assert hasattr(snowpy.Network(calibrate="cv"), "predict_proba")  # (before fitting)
    for calibrate in (None, "none"):
        assert not hasattr(snowpy.Network(calibrate=calibrate), "predict_proba")
        assert not hasattr(snowpy.Network(calibrate=calibrate).fit(X, y), "predict_proba")
    with pytest.raises(NotFittedError) as refused:
        snowpy.Network().predict_proba(X)
    assert str(refused.value) == (
        "'Network' has no attribute 'predict_proba' here: this model has no calibration; "
        "train it with calibrate='cv' to get probabilities (or calibrate='holdout', or "
        "calibrate='progressive')")
    calibrated = snowpy.Network(calibrate="cv").fit(X, y)
    np.testing.assert_array_equal(calibrated.normalised_scores(X), calibrated.predict_proba(X))
    given = snowpy.Network().fit(X, y)  # sigmoids given to a network trained without
    given.calibration_ = calibrated.calibration_
    assert hasattr(given, "predict_proba")
    np.testing.assert_array_equal(given.predict_proba(X), calibrated.predict_proba(X))


def test_a_rule_object_under_an_installed_rules_name_is_refused():
    import dataclasses

    from snowpy.plugins import get_rule

    X, y = sp.csr_matrix(np.eye(2)), ["a", "b"]
    installed = get_rule("perceptron")
    same = snowpy.Network(installed, average=False).fit(X, y)  # the installed rule itself
    assert same.coef_.tolist() == snowpy.Network("perceptron", average=False).fit(
        X, y).coef_.tolist()
    other = dataclasses.replace(installed, summary="another perceptron")
    with pytest.raises(ConfigurationError) as refused:
        snowpy.Network(other).fit(X, y)
    assert str(refused.value) == (
        "rule 'perceptron' given as an object is not the installed rule of that name (a "
        "model file names its rule, and would load as the installed one): give it a name "
        "of its own")
    own = dataclasses.replace(installed, name="my-perceptron")
    assert snowpy.Network(own).fit(X, y).engine_.rule == "my-perceptron"


def test_a_pickled_network_learning_a_stream_leaves_its_driver_behind():
    import pickle

    X, y = sp.csr_matrix(np.eye(3)), ["a", "b", "c"]
    net = snowpy.Network("perceptron", average=False).partial_fit(X, y)
    assert "_driver" in net.__dict__
    copy = pickle.loads(pickle.dumps(net))
    assert "_driver" not in copy.__dict__
    assert copy.coef_.tolist() == net.coef_.tolist()
    assert copy.partial_fit(X, y).coef_.tolist() == net.partial_fit(X, y).coef_.tolist()
    loaded = snowpy.Network.from_state(*net.to_state())  # (no driver, nor before fitting)
    for driverless in (loaded, snowpy.Network("winnow")):
        assert "_driver" not in driverless.__dict__
        assert pickle.loads(pickle.dumps(driverless)).get_params() == driverless.get_params()


def test_partial_fit_weighs_and_restricts_its_examples_as_fit_does():
    X = sp.csr_matrix(np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]))
    y = ["a", "b", "c"]
    weighed = snowpy.Network("perceptron", average=False).partial_fit(
        X, y, sample_weight=[2, 0, 1])
    copies = snowpy.Network("perceptron", average=False).partial_fit(
        X[[0, 0, 2]], ["a", "a", "c"])
    assert weighed.coef_.tolist() == copies.coef_.tolist()
    assert weighed.n_examples_seen_ == 3
    restricted = snowpy.Network("perceptron", average=False).partial_fit(
        X, y, targets=[["a"], ["a", "b"], ["c"]])
    # each example trains only the targets it names: of all six updates the whole
    # example would make, only "a"'s demotion by the second example is left
    assert restricted.engine_.promotions.tolist() == [0, 0, 0]
    assert restricted.engine_.demotions.tolist() == [1, 0, 0]
    reports = []
    everything = snowpy.Network("perceptron", average=False).partial_fit(
        X, y, progress=lambda *report: reports.append(report))
    assert reports == [(0, 1, 3, 0), (0, 2, 3, 1), (0, 3, 3, 1)]  # (epoch, done, of, mistakes)
    assert everything.engine_.promotions.tolist() == [0, 1, 1]
    assert everything.engine_.demotions.tolist() == [1, 1, 1]


def test_partial_fit_of_an_indicator_matrix_keeps_predicting_one():
    X = sp.csr_matrix(np.eye(3))
    y = np.array([[1, 0, 0], [0, 1, 1], [0, 0, 1]])
    net = snowpy.Network("perceptron", theta=0.5, average=False)
    for _ in range(3):
        net.partial_fit(X, y)
    assert net.classes_.tolist() == [0, 1, 2]
    assert net.predict(X).tolist() == y.tolist()
    assert net.score(X, y) == 1.0


def test_partial_fit_refuses_the_other_kind_of_labels_in_one_line():
    X = sp.csr_matrix(np.eye(2))
    sets = snowpy.Network("perceptron").partial_fit(X, [("a",), ("a", "b")])
    before = sets.coef_.tolist()
    sets.partial_fit(X[:0], [])  # no examples: nothing to tell the kind by, nothing learned
    assert sets.coef_.tolist() == before and sets.multilabel_
    with pytest.raises(ConfigurationError) as refused:
        sets.partial_fit(X, ["a", "b"])
    assert str(refused.value) == "this network was trained multi-label; y must be multi-label too"
    single = snowpy.Network("perceptron").partial_fit(X, ["a", "b"])
    with pytest.raises(ConfigurationError) as refused:
        single.partial_fit(X, [("a",), ("b",)])
    assert str(refused.value) == ("this network was trained single-label; y must be "
                                  "single-label too")
    with pytest.raises(ConfigurationError) as refused:
        single.partial_fit(X, None)
    assert str(refused.value) == "Network requires y to be passed, but the target y is None"


def test_a_started_network_has_its_targets_and_no_link_before_any_example():
    # Winnow's initial weight is theta / rho, rho the features per example with the
    # bias: 1 + 1 by default
    net = snowpy.Network("winnow", links="touched", theta=6.0).start(40, ["b", "a"])
    assert net.classes_.tolist() == ["b", "a"] and net.n_links_ == 0
    assert net.n_features_in_ == 40 and not net.multilabel_
    assert net.engine_.store.n_targets == 2
    assert net.engine_.store.absent == 3.0
    assert net.engine_.target_counts().tolist() == [[0, 0], [0, 0]]
    wider = snowpy.Network("winnow", links="touched", theta=6.0).start(
        40, ["a"], multilabel=True, mean_active=3.0)
    assert wider.multilabel_ and wider.engine_.store.absent == 1.5
    unbiased = snowpy.Network("winnow", links="touched", theta=6.0, bias=False).start(
        40, ["a"])  # rho: the features alone
    assert unbiased.engine_.store.absent == 6.0


def test_link_counts_are_whole_numbers_for_every_column_asked_for():
    X = sp.csr_matrix(np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0]]))
    net = snowpy.Network("perceptron", links="positive", average=False, discard=None).fit(
        X, ["a", "b"])
    counts = net.link_counts()
    assert counts.dtype == np.int64
    assert dict(zip(net.feature_ids_.tolist(), counts.tolist())) == {0: 1, 1: 1, 2: 2}
    asked = net.link_counts([2, 0, 3, 9])  # 3: never seen; 9: past the width
    assert asked.dtype == np.int64 and asked.tolist() == [2, 1, 0, 0]
    assert net.link_counts([9]).tolist() == [0]
    none = net.link_counts([])
    assert none.dtype == np.int64 and none.tolist() == []


def test_a_network_description_that_is_no_mapping_is_refused_as_an_empty_one():
    from snowpy.exceptions import ModelFileError

    for header in ({"network": "junk"}, {"network": ["options"]}, {}):
        with pytest.raises(ModelFileError) as refused:
            snowpy.Network.from_state(header, {})
        assert str(refused.value) == \
            "model: the network description is invalid (KeyError: 'options')"
    with pytest.raises(NotFittedError) as refused:
        snowpy.Network().n_links_
    assert str(refused.value) == \
        "this Network is not trained yet; call fit or partial_fit first"


def test_fit_weighs_its_examples_and_keeps_every_column_of_an_indicator_matrix():
    X = sp.csr_matrix(np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]))
    options = dict(average=False, shuffle=False, epochs=2, early_stop=False)
    weighed = snowpy.Network("perceptron", **options).fit(X, ["a", "b", "c"],
                                                          sample_weight=[2, 0, 1])
    copies = snowpy.Network("perceptron", **options).fit(X[[0, 0, 2]], ["a", "a", "c"])
    assert weighed.coef_.tolist() == copies.coef_.tolist() and weighed.n_examples_seen_ == 6
    y = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0]])  # the last column never set
    net = snowpy.Network("perceptron", **options).fit(X, y)
    assert net.classes_.tolist() == [0, 1, 2] and net.predict(X).shape == (3, 3)
    with pytest.raises(ConfigurationError) as refused:
        snowpy.Network().fit(X)
    assert str(refused.value) == "Network requires y to be passed, but the target y is None"


_BEYOND = ("is beyond the largest weight magnitude kept ({}): activations could never reach "
           "it; choose a value of the scale of the feature strengths")


@pytest.mark.parametrize("make, X, message", [
    (lambda: snowpy.Network("winnow"), [[1.0, -1.0]],
     "Negative values in data passed to Network: rule 'winnow' takes feature strengths of 0 "
     "or more (its promotion alpha ** v would demote); shift or binarise the features, or "
     "use balanced-winnow or perceptron"),
    (lambda: snowpy.Network("perceptron", precision="float32", theta=1e39), [[1.0]],
     "theta=1e+39 " + _BEYOND.format("1e+30")),
    (lambda: snowpy.Network("perceptron", precision="float32", theta=-2e30), [[1.0]],
     "theta=-2e+30 " + _BEYOND.format("1e+30")),
    (lambda: snowpy.Network("thick-separator", precision="float32", thickness=1e39), [[1.0]],
     "thickness=1e+39 " + _BEYOND.format("1e+30")),
    (lambda: snowpy.Network("thick-separator", precision="float32",
                            negative_thickness=1e39), [[1.0]],
     "negative_thickness=1e+39 " + _BEYOND.format("1e+30")),
    (lambda: snowpy.Network("perceptron", precision="float32", initial_weight=1e39), [[1.0]],
     "rule 'perceptron': initial weight 1e+39 exceeds the largest magnitude kept (1e+30); "
     "lower theta or set initial_weight"),
    (lambda: snowpy.Network(__import__("snowpy.plugins").plugins.get_rule("winnow")),
     [[0.0, -1.0]],  # (the rule given as its spec: named by its name)
     "Negative values in data passed to Network: rule 'winnow' takes feature strengths of 0 "
     "or more (its promotion alpha ** v would demote); shift or binarise the features, or "
     "use balanced-winnow or perceptron"),
    (lambda: snowpy.Network(5), [[1.0]], "rule must be a rule's name or a RuleSpec, got 5"),
])
def test_what_a_network_cannot_learn_is_refused_in_one_line(make, X, message):
    with pytest.raises(ConfigurationError) as refused:
        make().fit(sp.csr_matrix(X), ["a"])
    assert str(refused.value) == message


def test_what_a_network_can_learn_at_its_bounds_is_learned():
    X, y = sp.csr_matrix([[1.0, -1.0], [0.0, 2.0]]), ["a", "b"]
    assert snowpy.Network("perceptron").fit(X, y).n_links_ > 0  # negative strengths: fine
    winnow = snowpy.Network("winnow", epochs=1).fit(sp.csr_matrix([[0.0, 2.0], [1.0, 0.0]]),
                                                    y)  # (strengths of 0 or more: fine)
    assert winnow.n_examples_seen_ == 2
    stored_zero = sp.csr_matrix((np.array([0.0, 2.0]), np.array([0, 1]), np.array([0, 1, 2])),
                                shape=(2, 2))  # (a strength of 0 kept in the matrix)
    assert stored_zero.data.min() == 0.0
    assert snowpy.Network("winnow", epochs=1).fit(stored_zero, y).n_examples_seen_ == 2
    # an unknown rule is named as such, not taken for one that refuses negative strengths
    with pytest.raises(snowpy.exceptions.UnknownNameError, match="^unknown update rule "
                                                                 "'no-such-rule'; choose"):
        snowpy.Network("no-such-rule").partial_fit(X, y)
    for rule, params in (("perceptron", {"theta": 1e30}), ("perceptron", {"theta": -1e30}),
                         ("thick-separator", {"thickness": float("inf")})):
        net = snowpy.Network(rule, precision="float32", **params).fit(X, y)
        assert net.rule_params_[next(iter(params))] == next(iter(params.values()))
    at_the_bound = snowpy.Network("perceptron", precision="float32", initial_weight=1e30)
    assert at_the_bound.fit(X, y).engine_.store.absent == pytest.approx(1e30)
    with pytest.raises(ConfigurationError) as refused:
        snowpy.Network("perceptron", multiclass="constraint").fit(X, [("a",), ("b",)])
    assert str(refused.value) == "multiclass='constraint' needs one label per example"
    with pytest.raises(ConfigurationError) as refused:
        snowpy.Network("perceptron").fit(X, y).predict(sp.csr_matrix([[1.0]]))
    assert str(refused.value) == ("X has 1 features, but Network is expecting 2 features as "
                                  "input (the width it was trained with)")


def test_accuracy_compares_labels_of_mixed_types_as_they_are():
    X, y = sp.csr_matrix(np.eye(3)), [1, "a", 2.5]
    net = snowpy.Network("perceptron", average=False).fit(X, y)
    assert net.predict(X).tolist() == [1, "a", 2.5]
    assert net.score(X, y) == 1.0  # (not "1", "a", "2.5": the labels as strings)
    assert net.score(X, ["1", "a", 2.5]) == pytest.approx(2 / 3)


def test_a_refit_starts_afresh_whatever_a_stream_held_on_threads():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random((40, 12)) < 0.4).astype(float))
    y = [str(i % 4) for i in range(40)]
    net = snowpy.Network("perceptron", n_jobs=2, average=False).partial_fit(X[:20], y[:20])
    assert net._driver.held is not None  # (the stream's parts, held on its threads)
    net.fit(X[20:], y[20:])
    fresh = snowpy.Network("perceptron", n_jobs=2, average=False).fit(X[20:], y[20:])
    assert net.n_examples_seen_ == fresh.n_examples_seen_ == 200
    np.testing.assert_array_equal(net.coef_, fresh.coef_)
    np.testing.assert_array_equal(net.engine_.promotions, fresh.engine_.promotions)


def test_a_network_refuses_a_rule_that_keeps_a_learner_of_its_own():
    from snowpy.rules import RuleSpec, theta_param

    spec = RuleSpec(name="own-learner", build=lambda params, context: None,
                    params=(theta_param(0.0),), summary="a rule with its own learner",
                    learner=True)
    with pytest.raises(ConfigurationError) as refused:
        snowpy.Network(spec).fit(sp.csr_matrix(np.eye(2)), ["a", "b"])
    assert str(refused.value) == (
        "rule 'own-learner' keeps a learner of its own: use "
        "snowpy.network.learner.LearnerNetwork (or SnowClassifier, which picks it)")


def test_fit_without_a_copy_writes_the_rows_over_the_indices_and_learns_the_same():
    """``fit(..., copy=False)``: X is the fit's own, the network's rows of its features
    written over its indices (no second array of them), the same network learned; a
    cloud's members each read X as it was given, whatever ``copy`` says."""
    rng = np.random.default_rng(3)
    X = sp.random(120, 40, density=0.2, format="csr", random_state=4, dtype=np.float64)
    X.indices = X.indices.astype(np.int32)
    y = rng.integers(0, 3, 120)
    keys = np.arange(120, dtype=np.uint64) * np.uint64(7919)
    options = dict(epochs=3, calibrate="cv:2", shuffle=True, seed=0)
    copied = snowpy.Network(**options).fit(X, y, shuffle_keys=keys)
    own = X.copy()
    written = snowpy.Network(**options).fit(own, y, shuffle_keys=keys, copy=False)
    assert not np.array_equal(own.indices, X.indices)  # (the rows took their place)
    assert np.array_equal(own.data, X.data)
    assert np.array_equal(written.coef_, copied.coef_)
    assert np.array_equal(written.predict_proba(X), copied.predict_proba(X))
    alone = dict(options, calibrate=None)  # (no keys made: the shuffle's made from X's
    without_keys = X.copy()                 #  features as it learns, X kept)
    learned = snowpy.Network(**alone).fit(without_keys, y, copy=False)
    assert np.array_equal(without_keys.indices, X.indices)
    assert np.array_equal(learned.coef_, snowpy.Network(**alone).fit(X, y).coef_)
    folded = X.copy()  # (the folds' keys, made from the features first, shuffle it)
    assert np.array_equal(snowpy.Network(**options).fit(folded, y, copy=False).coef_,
                          snowpy.Network(**options).fit(X, y).coef_)
    shared = X.copy()
    cloud = snowpy.Cloud(("perceptron", "winnow"), epochs=2, calibrate=None)
    cloud.fit(shared, y, shuffle_keys=keys, copy=False)
    assert np.array_equal(shared.indices, X.indices)
    members = snowpy.Cloud(("perceptron", "winnow"), epochs=2, calibrate=None)
    assert np.array_equal(cloud.predict(X), members.fit(X, y, shuffle_keys=keys).predict(X))
