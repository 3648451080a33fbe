"""The Network estimator: semantics against a plain-numpy reference, and its API."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import scipy.sparse as sp

import snowpy
from snowpy.base import is_fitted
from snowpy.network.training import example_keys, keyed_order
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
