"""Each built-in rule on small hand-checked examples.

Single linear threshold units (multi-label with the one target "f"), no bias
and no averaging, so the weights after each step can be computed by hand.
The first example of each run is positive: it creates the target node.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import snowpy
from snowpy.exceptions import ConfigurationError, UnknownNameError
from snowpy.plugins import get_rule, list_rules


def unit(rule: str, **params) -> snowpy.Network:
    return snowpy.Network(rule, bias=False, average=False, links="all", precision="float64",
                          discard=None, **params)


def step(net: snowpy.Network, x, positive: bool) -> snowpy.Network:
    return net.partial_fit(sp.csr_matrix(np.atleast_2d(np.asarray(x, dtype=float))),
                           [["f"] if positive else []])


def planes(net: snowpy.Network) -> np.ndarray:
    """Raw weight planes of the one target, [features, planes]."""
    return net.engine_.store.planes_of(np.arange(net.n_features_in_), 0)


def test_balanced_winnow_two_planes():
    net = unit("balanced-winnow", alpha=2, beta=0.5, theta=1, initial_weight=2,
               negative_initial_weight=1)
    step(net, [1, 1, 0], True)  # activation (2-1)*2 = 2 >= 1: correct, no update
    assert net.updates_ == [0]
    step(net, [1, 0, 1], False)  # activation 2 >= 1: demote w+, promote w-
    np.testing.assert_array_equal(planes(net), [[1, 2], [2, 1], [1, 2]])
    step(net, [0, 1, 1], True)  # activation 1 - 1 = 0 < 1: promote w+, demote w-
    np.testing.assert_array_equal(planes(net), [[1, 2], [4, 0.5], [2, 1]])
    np.testing.assert_array_equal(net.coef_[0], [-1, 3.5, 1])
    assert net.decision_function([[0, 1, 1]])[0, 0] == pytest.approx(4.5 - 1)


def test_thick_separator_positive_and_negative_thickness():
    net = unit("thick-separator", learning_rate=1, theta=0, thickness=2, negative_thickness=1)
    for _ in range(3):  # activation 0, 1 < 2: two promotions; then 2 >= 2: correct
        step(net, [1, 0], True)
    assert net.updates_ == [1, 1, 0]
    for _ in range(3):  # activation 0 >= -1, -1 >= -1: two demotions; then -2 < -1
        step(net, [0, 1], False)
    assert net.updates_[3:] == [1, 1, 0]
    np.testing.assert_array_equal(net.coef_[0], [2, -2])
    # mistakes count the prediction (activation >= theta = 0), not the thickness
    assert net.mistakes_ == [0, 0, 0, 1, 0, 0]


def test_thickness_on_top_of_winnow():
    plain = unit("winnow", alpha=2, beta=0.5, theta=4, initial_weight=1, thickness=0)
    thick = unit("winnow", alpha=2, beta=0.5, theta=4, initial_weight=1, thickness=3)
    for net in (plain, thick):
        for _ in range(3):
            step(net, [1, 1, 1, 1], True)  # activation 4
    assert plain.updates_ == [0, 0, 0]
    assert thick.updates_ == [1, 0, 0]  # 4 < 4 + 3, then 8 >= 7
    np.testing.assert_array_equal(thick.coef_[0], [2, 2, 2, 2])


def test_aggressive_step_corrects_the_example():
    net = unit("aggressive", theta=0, margin=1)
    step(net, [1, 1], True)  # activation 0 >= 0: correct
    step(net, [1, 0], False)  # 0 >= 0: mistake; r = (0 - 1 - 0) / 1
    np.testing.assert_array_equal(net.coef_[0], [-1, 0])
    step(net, [1, 1], True)  # -1 < 0: r = (0 + 1 + 1) / 2 = 1
    np.testing.assert_array_equal(net.coef_[0], [0, 1])
    assert net.decision_function([[1, 1]])[0, 0] == pytest.approx(1.0)


def test_aggressive_seed_formula_with_zero_margin():
    """Seed 000 section 6.4: r = (theta - w.x) / x.x lands on the threshold."""
    net = unit("aggressive", theta=3, margin=0)
    step(net, [1, 2, 0], True)
    np.testing.assert_allclose(net.coef_[0], [3 / 5, 6 / 5, 0])
    assert net.decision_function([[1, 2, 0]])[0, 0] == pytest.approx(0.0)


@pytest.mark.parametrize("variant,second", [("pa-i", [-0.5, 0.5]), ("pa-ii", [-0.3, 0.5]),
                                             ("pa", [-0.5, 0.5])])
def test_passive_aggressive_variants(variant, second):
    c = 0.5 if variant != "pa-ii" else 100.0
    net = unit("passive-aggressive", C=c, theta=0, variant=variant)
    step(net, [1, 1], True)  # loss 1, tau = 1/2 (PA-II: 1 / (2 + 1/(2C)) ~ 0.4988)
    first = 0.5 if variant != "pa-ii" else 1 / (2 + 1 / (2 * c))
    np.testing.assert_allclose(net.coef_[0], [first, first])
    if variant == "pa-ii":
        net = unit("passive-aggressive", C=0.5, theta=0, variant=variant)
        step(net, [1, 1], True)  # tau = 1 / (2 + 1) = 1/3
        np.testing.assert_allclose(net.coef_[0], [1 / 3, 1 / 3])
        step(net, [2, 0], False)  # loss 1 + 2/3, tau = (5/3) / (4 + 1) = 1/3
        np.testing.assert_allclose(net.coef_[0], [1 / 3 - 2 / 3, 1 / 3])
        return
    step(net, [2, 0], False)  # activation 1: loss 2, tau = min(C, 2 / 4) = 0.5
    np.testing.assert_allclose(net.coef_[0], second)


def test_passive_aggressive_learns_a_negative_example_above_its_negative_thickness():
    # (docs/rules.md: a positive example while its hinge loss is positive, a negative one
    # while its activation is above theta - 0.75; at 1, one above theta - 1)
    net = unit("passive-aggressive", theta=0)
    step(net, [1, 0], True)  # loss 1, tau = min(1, 1 / 1): [1, 0]
    step(net, [1, 1], False)  # activation 1: loss 2, tau = min(1, 2 / 2): [0, -1]
    step(net, [1, 0.9], False)  # activation -0.9 < -0.75: passive
    step(net, [1, 0.5], False)  # -0.5: loss 0.5, tau = 0.5 / 1.25 = 0.4
    assert net.updates_ == [1, 1, 0, 1]
    np.testing.assert_allclose(net.coef_[0], [-0.4, -1.2])
    edge = unit("passive-aggressive", theta=0, negative_thickness=1)
    for x, positive in (([1, 0], True), ([1, 1], False), ([1, 0.9], False)):
        step(edge, x, positive)  # -0.9 >= -1: loss 0.1, tau = 0.1 / 1.81
    assert edge.updates_ == [1, 1, 1]
    np.testing.assert_allclose(edge.coef_[0], [-0.1 / 1.81, -1 - 0.09 / 1.81])


def test_a_rules_own_negative_thickness_holds_whatever_the_thickness_and_none_follows_it():
    # (docs/rules.md; None, which a file of before passive-aggressive's own 0.75 may hold,
    # was refused once the rule declared one)
    declared = get_rule("passive-aggressive").validate
    assert [declared(given)["negative_thickness"] for given in (
        {}, {"thickness": 0.5}, {"thickness": 0.5, "negative_thickness": None},
        {"negative_thickness": 2.0})] == [0.75, 0.75, 0.5, 2.0]
    assert get_rule("winnow").validate({"thickness": 2.0})["negative_thickness"] == 2.0
    net = snowpy.Network("passive-aggressive", negative_thickness=None).fit(
        sp.csr_matrix(np.eye(3)), ["a", "b", "c"])
    assert net.engine_.params["negative_thickness"] == 1.0


def test_winnow_r_floor():
    net = unit("winnow", alpha=2, beta=0.5, theta=0.4, initial_weight=1, floor=0.5,
               thickness=0)
    step(net, [0, 1], True)  # 1 >= 0.4: correct
    for _ in range(3):
        step(net, [1, 0], False)  # demoted once to the floor, then held there
    np.testing.assert_array_equal(net.coef_[0], [0.5, 1])
    assert net.updates_ == [0, 1, 1, 1]


def test_winnow_threshold_relative():
    net = unit("winnow", alpha=1.35, beta=0.8, theta=4, initial_weight=1, threshold_relative=True)
    step(net, [1, 1], True)  # activation 2: factor 1.35 * 4 / 2
    np.testing.assert_allclose(net.coef_[0], [2.7, 2.7])


def test_winnow_real_strengths_use_powers():
    net = unit("winnow", alpha=2, beta=0.5, theta=10, initial_weight=1)
    step(net, [0.5, 2.0, 0], True)
    np.testing.assert_allclose(net.coef_[0], [2**0.5, 4.0, 1.0])


def test_winnow_default_initial_weight_puts_the_average_example_at_threshold():
    X = sp.csr_matrix(np.array([[1, 1, 1, 0], [0, 1, 1, 1]], dtype=float))
    net = snowpy.Network("winnow").fit(X, ["a", "b"])
    rho = 3 + 1  # three active features and the bias
    assert net.rule_params_["initial_weight"] == pytest.approx(4.0 / rho)
    # SNoW's 3 theta / rho stays one parameter away
    snow = snowpy.Network("winnow", initial_weight=3 * 4.0 / rho)
    assert snow.fit(X, ["a", "b"]).rule_params_["initial_weight"] == 3.0


def test_every_builtin_rule_is_registered_through_the_hook():
    provided = list_rules()
    expected = {"perceptron", "winnow", "balanced-winnow", "thick-separator", "aggressive",
                "passive-aggressive"}
    assert expected <= set(provided)
    for name in expected:
        assert provided[name].plugin.startswith("snowpy.rules.")
        assert provided[name].record.reference  # each says where it comes from


def test_unknown_rule_lists_the_known_ones():
    with pytest.raises(UnknownNameError) as error:
        snowpy.Network("winow").fit([[1.0]], ["a"])
    message = str(error.value)
    assert "unknown update rule 'winow'" in message
    for name in ("balanced-winnow", "perceptron", "winnow"):
        assert name in message


@pytest.mark.parametrize("params,fragment", [
    ({"alpha": 0.9}, "alpha must be > 1.0, got 0.9"),
    ({"beta": 1.5}, "beta must be > 0.0 and < 1.0"),
    ({"alfa": 2}, "has no parameter 'alfa'; its parameters are: alpha, beta, theta"),
    ({"threshold_relative": "yes"}, "threshold_relative must be true or false"),
    ({"theta": float("nan")}, "theta must be a number, got nan"),
    ({"thickness": -1}, "thickness must be >= 0.0"),
])
def test_bad_rule_parameters_are_named(params, fragment):
    with pytest.raises(ConfigurationError, match=None) as error:
        snowpy.Network("winnow", **params).fit([[1.0]], ["a"])
    assert fragment in str(error.value)
    assert str(error.value).startswith("winnow") or "'winnow'" in str(error.value)


def test_param_parse_from_command_line_text():
    spec = get_rule("passive-aggressive")
    params = {p.name: p for p in spec.params}
    assert params["C"].parse("0.25", rule="pa") == 0.25
    assert params["variant"].parse("pa-ii", rule="pa") == "pa-ii"
    with pytest.raises(ConfigurationError, match="C must be a number, got 'lots'"):
        params["C"].parse("lots", rule="pa")


def test_winnow_r_raises_an_initial_weight_below_its_floor_to_the_floor():
    # the floor bounds every weight, the initial one too: a link starts at
    # max(initial_weight, floor), and is scored so before any update
    net = unit("winnow", alpha=2, beta=0.5, theta=0.4, initial_weight=0.1, floor=0.3,
               thickness=0)
    step(net, [1, 1], True)  # activation 0.6 >= 0.4 with links at the floor: no update
    np.testing.assert_array_equal(net.coef_[0], [0.3, 0.3])
    assert net.updates_ == [0]
    plain = unit("winnow", alpha=2, beta=0.5, theta=0.4, initial_weight=0.1, thickness=0)
    step(plain, [1, 1], True)  # activation 0.2 < 0.4: promoted, each 0.1 -> 0.2
    np.testing.assert_allclose(plain.coef_[0], [0.2, 0.2])


def test_snows_data_dependent_initial_weight_and_its_edges():
    from snowpy.rules.spec import BuildContext
    from snowpy.rules.winnow import auto_initial_weight

    def weight(multiple, theta, rho):
        return auto_initial_weight(multiple, theta, BuildContext(mean_active_features=rho,
                                                                 n_features=100))

    assert weight(1.0, 4.0, 8.0) == 0.5  # theta / rho
    assert weight(3.0, 4.0, 8.0) == 1.5  # SNoW's 3 theta / rho
    assert weight(1.0, 0.5, 1.0) == 0.5
    assert weight(1.0, 4.0, 0.5) == 4.0  # (fewer than one active feature counts as one)
    assert weight(1.0, 0.0, 8.0) == 1.0 and weight(1.0, -2.0, 8.0) == 1.0  # no threshold


@pytest.mark.parametrize("rule, params, absent", [
    ("perceptron", {"initial_weight": 0.2}, 0.2), ("perceptron", {}, 0.0),
    ("aggressive", {"initial_weight": -0.3}, -0.3), ("passive-aggressive", {}, 0.0),
    ("winnow", {"initial_weight": 0.75}, 0.75), ("winnow", {"theta": 6.0}, 1.5),
    ("normalised-winnow", {}, 1 / 40), ("normalised-winnow", {"initial_weight": 0.1}, 0.1),
])
def test_a_missing_link_weighs_the_rules_initial_weight(rule, params, absent):
    # (4 features active per example on average, 40 features: winnow's theta / rho, the
    # normalised Winnow's 1 / N)
    net = snowpy.Network(rule, links="touched", **params).start(40, ["a", "b"],
                                                                 mean_active=3.0)
    assert net.engine_.store.absent == pytest.approx(absent, rel=1e-6)


@pytest.mark.parametrize("rule, normalisation", [
    ("naive-bayes", "softmax"), ("perceptron", "sum"), ("winnow", "sum"),
    ("balanced-winnow", "sum"), ("passive-aggressive", "sum"), ("normalised-winnow", "sum"),
])
def test_only_relative_scores_are_calibrated_as_a_softmax(rule, normalisation):
    # (Naive Bayes' log-likelihoods follow the document's length: only their differences
    # mean something; a single-label network of another rule gets a sigmoid per target)
    net = snowpy.Network(rule).fit(sp.csr_matrix(np.eye(4)), ["a", "b", "a", "b"])
    assert net.engine_.kernel.normalisation(False) == normalisation
    assert net.engine_.kernel.normalisation(True) == "none"


@pytest.mark.parametrize("links", ["touched", "signed", "positive"])
def test_a_feature_naive_bayes_never_saw_with_a_target_weighs_the_smoothing(links):
    net = snowpy.Network("naive-bayes", links=links).fit(sp.csr_matrix(np.eye(4)),
                                                         ["a", "b", "a", "b"])
    assert net.engine_.store.absent == -15.0  # under every link policy
    assert snowpy.Network("perceptron", links=links, initial_weight=0.5).start(
        4, ["a"]).engine_.store.absent == (0.5 if links == "touched" else 0.0)


def test_every_multiplicative_rule_floors_an_underflow_and_counts_it():
    # a factor that underflows to 0 in one step (beta ** 2000) must not leave a weight at
    # exactly 0, where no promotion could revive it (Winnow: tests/test_numerics.py)
    X = sp.csr_matrix(np.array([[2000.0, 1.0], [0.0, 1.0]]))
    net = snowpy.Network("balanced-winnow", beta=0.5, alpha=1.5, theta=1.0, epochs=3,
                         bias=False, average=False, links="all", precision="float64")
    with pytest.warns(snowpy.NumericalWarning):  # (alpha ** 2000 overflows, clamped)
        net.fit(X, ["a", "b"])
    W = np.abs(net.engine_.store.W[net.engine_.store.live_slots()])
    assert net.engine_.underflows == 1 and W.min() == 1e-100
    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random((60, 12)) < 0.5) * 3.0)
    net = snowpy.Network("normalised-winnow", eta=400.0, epochs=20, early_stop=False,
                         precision="float64", discard=None, average=False, links="all")
    with np.errstate(all="ignore"):
        net.fit(X, np.array(["a", "b"])[np.arange(60) % 2])
    W = np.abs(net.engine_.store.W[net.engine_.store.live_slots()])
    assert net.engine_.underflows > 0 and W.min() >= 1e-100


def test_a_rule_is_given_as_an_object_as_well_as_by_name(tmp_path):
    """A rule given as a RuleSpec object (a River learner is an object you pass) learns
    what the rule of that name learns, registered or not; its model file names it, and
    loads where a plugin registers that name."""
    import dataclasses
    import types

    import numpy as np

    import snowpy
    from snowpy import hookimpl
    from snowpy.exceptions import ConfigurationError, ModelFileError
    from snowpy.plugins import get_rule, temporary_plugin

    mine = dataclasses.replace(get_rule("perceptron"), name="my-perceptron")
    texts = ["free prize now", "lunch at noon", "win cash now", "noon meeting"] * 3
    labels = ["spam", "ham", "spam", "ham"] * 3
    given = snowpy.SnowClassifier(rule=mine, epochs=3, calibrate=None).fit(texts, labels)
    named = snowpy.SnowClassifier(rule="perceptron", epochs=3, calibrate=None).fit(texts,
                                                                                   labels)
    np.testing.assert_array_equal(given.network_.coef_, named.network_.coef_)
    assert given.get_params()["rule"] is mine
    given.save(tmp_path / "m.snowpy")
    with pytest.raises(ModelFileError, match="my-perceptron"):
        snowpy.load(tmp_path / "m.snowpy")
    plugin = types.SimpleNamespace(snowpy_update_rules=hookimpl(lambda: [mine]))
    with temporary_plugin(plugin, "mine"):
        loaded = snowpy.load(tmp_path / "m.snowpy")
        assert loaded.network_.rule == "my-perceptron"
        assert loaded.predict(["free cash"]).tolist() == given.predict(["free cash"]).tolist()
    with pytest.raises(ConfigurationError, match="rule.s name or a RuleSpec"):
        snowpy.Network(rule=3).fit(np.eye(2), ["a", "b"])
