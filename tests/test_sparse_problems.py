"""The sparse network learns what the full network learns (issue 31), on sparse noisy
problems of the kind SNoW was built for (:mod:`snowpy.experiments.noisy_sparse`):
every built-in rule at its defaults, against the same rule over every feature
(``links="all"``) and against snowpy's Perceptron."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import snowpy
from snowpy.experiments.noisy_sparse import Shape, make

#: The built-in rules learned from mistakes (Naive Bayes counts; it is checked apart).
RULES = ("perceptron", "thick-separator", "winnow", "balanced-winnow", "aggressive",
         "passive-aggressive", "normalised-winnow")
#: Those held to the Perceptron. Normalised Winnow is not: an exponentiated-gradient step
#: normalised over every feature, it trails the Perceptron by 10 to 30 points where
#: the noise is dense (164 noise features of 1,000), over the full network as well, at
#: any learning rate and margin tried (docs/rules.md).
HELD_TO_THE_PERCEPTRON = RULES[:-1]


def accuracy(rule: str, X, y, cut: int, **options) -> float:
    net = snowpy.Network(rule, epochs=10, seed=0, **options).fit(X[:cut], y[:cut].tolist())
    return float(np.mean(net.predict(X[cut:]) == y[cut:]))


def test_the_issues_problem_at_the_defaults():
    """20 classes, 20,000 features, 40 noise features and 2 of its class's 10 per
    example, 10% of the labels flipped: Winnow and Balanced Winnow learned nothing at
    the former defaults (0.12 and 0.15 here, chance 0.05); every rule at its defaults
    now beats scikit-learn's Perceptron (0.82, 10 epochs) and is within a point of
    itself over every feature."""
    X, y = make(Shape(), 0)
    cut = 4000
    for rule in RULES:
        at_defaults, full = accuracy(rule, X, y, cut), accuracy(rule, X, y, cut, links="all")
        assert at_defaults >= 0.85 and abs(at_defaults - full) <= 0.01, rule
    # what the former defaults gave, SNoW's sparse mode with its initial weight:
    collapsed = accuracy("winnow", X, y, cut, links="signed", thickness=0.0,
                         initial_weight=3 * 4.0 / (X[:cut].getnnz(axis=1).mean() + 1))
    assert collapsed < 0.2


def test_naive_bayes_is_the_same_over_every_feature():
    """Naive Bayes counts every example; a feature never seen with a target weighs its
    smoothing whatever the link policy, so the links change nothing. (Its smoothing, a
    log probability of -15 for a feature never seen with a target, is LBJava's: on noise
    features it is the whole score, 0.12 on the problem above; docs/rules.md.)"""
    X, y = make(Shape(classes=5, features=5000, noise=20, examples=1500), 3)
    assert accuracy("naive-bayes", X, y, 1000) == accuracy("naive-bayes", X, y, 1000,
                                                          links="all")


def allowance(shape: Shape) -> float:
    """How far below snowpy's Perceptron a rule may score: 2 points (the issue's
    property), except where examples have a dozen active features or fewer and labels
    are flipped. There a rule's steps on a few weights are large against what a flipped
    label undoes, and the rules part from the Perceptron by more than 2 points both ways
    (2 classes, 6 active, 20% flipped: Winnow +2.8, thick separator +3.3, Balanced
    Winnow -2.5; aggressive -2.4 with 9 classes, 6 active): on 80 draws of that corner Balanced
    Winnow trailed by more than 2 points in 3 (-2.2, -2.9, -4.7). Milder factors close
    its gap (1.2, 0.8: 0.677 against the Perceptron's 0.657 on one draw) but cost 20
    Newsgroups 1.3 points (0.841 against 0.854), so the defaults stay and that corner
    is held to 5 points: a miss of the issue's property, said in its note and in
    docs/rules.md."""
    few_and_noisy = shape.noise + shape.informative <= 12 and shape.flip > 0
    return 0.05 if few_and_noisy else 0.02


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@example(classes=2, features=1000, noise=5, informative=1, flip=0.2, real=True, seed=0)
@example(classes=7, features=1000, noise=7, informative=1, flip=0.2, real=False, seed=1)
@given(classes=st.integers(2, 50), features=st.integers(1000, 100_000),
       noise=st.integers(5, 200), informative=st.integers(1, 5),
       flip=st.sampled_from([0.0, 0.05, 0.1, 0.2]), real=st.booleans(),
       seed=st.integers(0, 2**16))
def test_every_rule_at_its_defaults_learns_what_the_full_network_learns(
        classes, features, noise, informative, flip, real, seed):
    """The property of issue 31, on a family of problems: at its defaults every rule is
    within a point of the same rule over every feature (``links="all"``), and never
    more than 2 points below snowpy's Perceptron (3,000 held-out examples: a standard
    error under a point)."""
    shape = Shape(classes=classes, features=features, noise=noise,
                  informative=informative, flip=flip, real=real, examples=4500)
    X, y = make(shape, seed)
    cut = 1500
    perceptron = accuracy("perceptron", X, y, cut)
    for rule in RULES:
        at_defaults = perceptron if rule == "perceptron" else accuracy(rule, X, y, cut)
        full = accuracy(rule, X, y, cut, links="all")
        assert abs(at_defaults - full) <= 0.01, (rule, shape.name)
        if rule in HELD_TO_THE_PERCEPTRON:
            assert at_defaults >= perceptron - allowance(shape), (rule, shape.name,
                                                                         perceptron)


@pytest.mark.parametrize("rule", ["winnow", "balanced-winnow", "perceptron"])
def test_the_default_links_are_the_full_network_stored_sparsely(rule):
    """At the default policy a network learns exactly what ``links="all"`` learns (the
    same scores, bit for bit, before discarding), with links only where weights moved."""
    X, y = make(Shape(classes=8, features=3000, noise=30, examples=900), 5)
    sparse = snowpy.Network(rule, epochs=5, seed=0, discard=None).fit(X, y.tolist())
    full = snowpy.Network(rule, epochs=5, seed=0, discard=None, links="all").fit(X, y.tolist())
    np.testing.assert_array_equal(sparse.decision_function(X), full.decision_function(X))
    assert sparse.n_links_ < full.n_links_


def test_the_benchmark_table_measures_what_the_sparse_network_saves():
    """``run`` (``benchmarks/bench_sparse_problems.py``'s table): one row per shape,
    rule and policy, with the links kept against the full table and the file's size."""
    from snowpy.experiments.noisy_sparse import run

    shape = Shape(classes=4, features=2000, noise=20, examples=600)
    rows = run(rules=("winnow", "perceptron"), policies=("touched", "all"),
               shapes=(shape,)).rows
    assert [(r["rule"], r["links"]) for r in rows] == [
        ("winnow", "touched"), ("winnow", "all"), ("perceptron", "touched"),
        ("perceptron", "all")]
    for touched, full in (rows[:2], rows[2:]):
        assert touched["accuracy"] == full["accuracy"] > 0.5
        assert 0 < touched["n_links"] < touched["full_links"]
        assert touched["model_kb"] > 0
