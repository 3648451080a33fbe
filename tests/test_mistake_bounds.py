"""Mistake bounds of the seed notes, checked on snowpy's implementation.

* Winnow on a k-disjunction of n attributes makes at most 2 + 3k(1 + log2 n)
  mistakes (seed 001, theorem; seed 002, proof), with alpha = 2, beta = 1/2,
  theta = n and unit initial weights.
* The Perceptron makes at most R^2 / gamma^2 mistakes on data separable with
  margin gamma by a unit vector, examples of norm at most R (Novikoff; seed
  003), and at most ((R + D) / gamma)^2 on non-separable data, D the norm of
  the margin deficits (Freund and Schapire; seed 003).

Training runs until an epoch makes no mistake, so the counts are the total
mistakes of the online algorithm, every epoch included. The theorems are about
the full network, every attribute at its initial weight from the start: SNoW's
``-s f``, ``links="all"``, and ``"touched"``, which learns identically and is the
default (each test runs at the default link policy too). They are about the plain
mistake-driven rules: no thick separator (Winnow's default has one, SNoW's).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import snowpy


def single_target(labels: np.ndarray) -> list[list[str]]:
    """One linear threshold unit: multi-label with the one target "f"."""
    return [["f"] if label else [] for label in labels]


def disjunction_data(n: int, k: int, m: int, rng: np.random.Generator):
    relevant = rng.choice(n, size=k, replace=False)
    p = 1 - 0.5 ** (1 / k)  # half of the examples positive
    X = (rng.random((m, n)) < p).astype(float)
    y = X[:, relevant].any(axis=1)
    first = int(np.flatnonzero(y)[0])  # a positive first creates the target node
    order = np.r_[first, np.delete(np.arange(m), first)]
    return sp.csr_matrix(X[order]), y[order]


@pytest.mark.parametrize("links", [None, "all", "touched"])  # None: the default
@pytest.mark.parametrize("n,k", [(64, 1), (256, 2), (1024, 4), (4096, 8), (8192, 3)])
def test_winnow_k_disjunction_bound(n, k, links):
    rng = np.random.default_rng(n + k)
    X, y = disjunction_data(n, k, m=600, rng=rng)
    net = snowpy.Network(
        "winnow", alpha=2, beta=0.5, theta=n, initial_weight=1, bias=False,
        average=False, shuffle=False, epochs=200, thickness=0,
        **({} if links is None else {"links": links}),
    ).fit(X, single_target(y))
    total = sum(net.mistakes_)
    bound = 2 + 3 * k * (1 + math.log2(n))
    assert net.mistakes_[-1] == 0, "did not converge"
    assert 0 < total <= bound
    assert sum(net.engine_.promotions) <= k * (1 + math.log2(n))  # mistakes on positives
    assert sum(net.updates_) == total  # zero thickness: an update is a mistake


def test_winnow_at_the_default_links_learns_what_the_full_network_learns():
    """Issue 31's disjunction: 6 of 4,096 attributes, alpha 2, beta 1/2, theta = n, unit
    initial weights, one pass, no averaging. At the default link policy Winnow makes the
    mistakes of the full network (98 on these examples; the bound is 236). SNoW's sparse
    mode, where a feature weighs nothing until it is linked from a positive example, is
    another algorithm: 104 here (152 against 25 on the issue's examples)."""
    rng = np.random.default_rng(6)
    X, y = disjunction_data(4096, 6, m=600, rng=rng)
    options = dict(alpha=2, beta=0.5, theta=4096, initial_weight=1, bias=False,
                   average=False, shuffle=False, epochs=1)
    default, full, sparse = (
        snowpy.Network("winnow", **options, **links).fit(X, single_target(y)).mistakes_[0]
        for links in ({}, {"links": "all"}, {"links": "positive"}))
    assert default == full <= 2 + 3 * 6 * (1 + math.log2(4096))
    assert sparse > full


def margin_data(d: int, m: int, gamma: float, rng: np.random.Generator, flip: float = 0.0):
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    X = rng.normal(size=(4 * m, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X *= rng.uniform(0.2, 1.0, size=(4 * m, 1))  # R = 1
    score = X @ u
    X, score = X[np.abs(score) >= gamma][:m], score[np.abs(score) >= gamma][:m]
    y = score > 0
    if flip:
        noisy = rng.random(len(y)) < flip
        y = np.where(noisy, ~y, y)
    first = int(np.flatnonzero(y)[0])
    order = np.r_[first, np.delete(np.arange(len(y)), first)]
    return X[order], y[order], u


@pytest.mark.parametrize("links", [{}, {"links": "all"}])  # the default, and SNoW -s f
@pytest.mark.parametrize("gamma", [0.3, 0.15, 0.08])
def test_perceptron_novikoff_bound(gamma, links):
    rng = np.random.default_rng(7)
    X, y, _ = margin_data(d=20, m=400, gamma=gamma, rng=rng)
    R = np.linalg.norm(X, axis=1).max()
    net = snowpy.Network(
        "perceptron", learning_rate=1.0, theta=0.0, bias=False, average=False,
        shuffle=False, epochs=500, **links,
    ).fit(X, single_target(y))
    assert net.mistakes_[-1] == 0
    assert 0 < sum(net.mistakes_) <= R**2 / gamma**2


@pytest.mark.parametrize("links", [{}, {"links": "all"}])
def test_perceptron_non_separable_bound(links):
    rng = np.random.default_rng(11)
    gamma = 0.2
    X, y, u = margin_data(d=20, m=300, gamma=gamma, rng=rng, flip=0.03)
    R = np.linalg.norm(X, axis=1).max()
    signed = np.where(y, 1.0, -1.0)
    D = np.sqrt(np.sum(np.maximum(0.0, gamma - signed * (X @ u)) ** 2))
    net = snowpy.Network(
        "perceptron", learning_rate=1.0, theta=0.0, bias=False, average=False,
        shuffle=False, epochs=1, early_stop=False, **links,
    ).fit(X, single_target(y))
    assert 0 < net.mistakes_[0] <= ((R + D) / gamma) ** 2


@pytest.mark.parametrize("n,k", [(64, 3), (1024, 3), (4096, 5)])
def test_normalised_winnow_bound(n, k):
    """Seed 003: at most 2 (R_inf / rho_inf)^2 ln N mistakes with eta = rho / R^2; snowpy's
    sparse rule (a per-target scale instead of touching every weight) makes exactly the
    mistakes of the notes' pseudo-code, and its normalised weights sum to 1."""
    from snowpy.experiments.common import positive_first
    from snowpy.experiments.normalised import majority_data, reference_mistakes
    from snowpy.rules.normalised_winnow import normalised_weights

    rng = np.random.default_rng(n + k)
    X, y = majority_data(n, k, 1500, rng)
    X, y = positive_first(X, y)
    rho = 1.0 / k  # v = 1 on the k relevant features: y (v . x) >= 1, ||v||_1 = k; R = 1
    net = snowpy.Network("normalised-winnow", eta=rho, bias=False, average=False,
                         shuffle=False, precision="float64", epochs=100, thickness=0,
                         discard=None).fit(sp.csr_matrix(X), single_target(y))
    assert net.mistakes_[-1] == 0, "did not converge"
    assert net.mistakes_ == reference_mistakes(X, y, rho, passes=100)
    assert 0 < sum(net.mistakes_) <= 2 * math.log(n) / rho**2
    weights = normalised_weights(net)  # every row once: seen features, bias, the unseen
    seen = weights[1:-1, 0].sum() + weights[-1, 0] * (n - net.feature_ids_.size)
    assert seen == pytest.approx(1.0, rel=1e-9)


def test_normalised_winnow_first_update_by_hand():
    """Four features at 1/4; a mistake on x = (1, -1, 1, 1), y = -1 with eta = ln 2 halves
    the weights of the features at +1 and doubles the other: (1/2, 2, 1/2, 1/2) / 3.5."""
    from snowpy.rules.normalised_winnow import normalised_weights

    X = sp.csr_matrix(np.array([[1.0, 1, 1, 1], [1.0, -1, 1, 1]]))
    net = snowpy.Network("normalised-winnow", eta=math.log(2), bias=False, average=False,
                         shuffle=False, precision="float64", epochs=1, thickness=0,
                         discard=None).fit(X, [["f"], []])
    assert net.mistakes_ == [1]  # the first is positive and right (w . x = 1 > 0)
    np.testing.assert_allclose(normalised_weights(net)[1:5, 0],
                               np.array([0.5, 2.0, 0.5, 0.5]) / 3.5, rtol=1e-12)
