"""Calibration: the fitted sigmoid recovers known probabilities; probabilities behave."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

import snowpy
from snowpy import SnowClassifier
from snowpy.calibration import Calibration, fit_sigmoid, fit_slope, fit_stacking
from snowpy.cli import app
from snowpy.exceptions import CalibrationWarning, ConfigurationError, NotFittedError
from snowpy.metrics import expected_calibration_error, log_loss

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "corpora" / "demo" / "train.tsv"
runner = CliRunner()


def run(*args, input: str | None = None, **kwargs):
    return runner.invoke(app, [str(a) for a in args], input=input, **kwargs)


@pytest.mark.parametrize("a,b,scale", [(-2.0, 0.5, 1.0), (-0.5, -1.0, 10.0),
                                       (-8.0, 3.0, 0.01)])
def test_sigmoid_recovers_known_probabilities(a, b, scale):
    rng = np.random.default_rng(1)
    scores = rng.normal(scale=scale, size=40000)
    truth = 1 / (1 + np.exp(a * scores / scale * scale + b))
    positive = rng.random(scores.size) < truth
    fitted_a, fitted_b = fit_sigmoid(scores, positive)
    fitted = 1 / (1 + np.exp(fitted_a * scores + fitted_b))
    assert np.max(np.abs(fitted - truth)) < 0.02


def test_the_compiled_fit_is_platts_optimum_and_a_warm_start_reaches_it_sooner():
    """The compiled Newton fit stops where the gradient of Platt's smoothed log loss
    vanishes (checked here in numpy, in the original scores); started from the last fit
    of a window that moved on a little, it reaches the same optimum in fewer steps."""
    from snowpy._core import platt

    rng = np.random.default_rng(4)
    scores = rng.normal(3.0, 5.0, 3000)
    positive = rng.random(3000) < 1 / (1 + np.exp(0.7 * scores - 1.2))
    flags = positive.view(np.uint8)
    a, b, cold_steps = platt.fit(scores, flags, 0.0, 0.0, False, 100)
    n_pos = positive.sum()
    targets = np.where(positive, (n_pos + 1) / (n_pos + 2), 1 / (scores.size - n_pos + 2))
    p = 1 / (1 + np.exp(a * scores + b))
    gradient = [np.sum((targets - p) * scores), np.sum(targets - p)]
    assert np.allclose(gradient, 0.0, atol=1e-3) and 0.6 < a < 0.8 and 1.0 < -b < 1.4
    moved = np.r_[scores[300:], rng.normal(3.0, 5.0, 300)]  # a tenth more, a tenth gone
    moved_flags = np.r_[flags[300:], (rng.random(300) < 0.5).view(np.uint8)]
    cold = platt.fit(moved, moved_flags, 0.0, 0.0, False, 100)
    warm = platt.fit(moved, moved_flags, a, b, True, 100)
    assert abs(warm[0] - cold[0]) < 1e-6 and abs(warm[1] - cold[1]) < 1e-6
    assert warm[2] < cold[2] and cold_steps >= 4


def test_the_compiled_division_check_agrees_with_numpy():
    """What decides the temperature (the accuracy and the plain division's mean top
    probability over the examples with one true label), in one compiled pass."""
    from snowpy._core import platt
    from snowpy.calibration import sigmoid

    rng = np.random.default_rng(8)
    scores = rng.normal(size=(500, 6))
    positives = rng.random((500, 6)) < 0.2  # some rows with 0 or several true labels
    a, b = np.full(6, -1.3), np.full(6, 0.4)
    counted, accuracy, plain = platt.division(scores, positives.view(np.uint8), a, b)
    single = positives.sum(axis=1) == 1
    logits = -(scores[single] * a + b)
    p = sigmoid(logits)
    assert counted == single.sum() > 50
    assert accuracy == np.mean(logits.argmax(1) == positives[single].argmax(1))
    assert plain == pytest.approx(np.mean(p.max(1) / p.sum(1)), rel=1e-12)


@pytest.mark.parametrize("positives", [0, 1, 2])
def test_tiny_classes_give_finite_parameters(positives):
    scores = np.array([-1.0, 0.0, 1.0, 2.0, 3.0])
    labels = np.arange(5) >= 5 - positives
    a, b = fit_sigmoid(scores, labels)
    assert np.isfinite(a) and np.isfinite(b)
    p = 1 / (1 + np.exp(a * scores + b))
    assert np.all((p > 0) & (p < 1))
    a, b = fit_sigmoid(np.zeros(3), np.array([True, False, False]))  # constant scores
    assert np.isfinite(a) and np.isfinite(b)


def test_probabilities_sum_to_one_and_are_monotone():
    calibration = Calibration(np.array([-1.0, -2.0, -0.5]), np.array([0.0, 1.0, -1.0]),
                              normalize="sum", method="cv")
    scores = np.random.default_rng(0).normal(size=(200, 3)) * 50  # large scores: no overflow
    p = calibration.probabilities(scores)
    assert np.all(np.isfinite(p)) and np.allclose(p.sum(axis=1), 1.0)
    ramp = np.zeros((50, 3))
    ramp[:, 1] = np.linspace(-5, 5, 50)
    assert np.all(np.diff(calibration.probabilities(ramp)[:, 1]) > 0)
    with pytest.raises(ConfigurationError, match="covers 3 targets"):
        calibration.probabilities(np.zeros((1, 4)))


def separable(seed=0, n=600, classes=4):
    rng = np.random.default_rng(seed)
    centres = rng.random((classes, 80)) < 0.2
    y = rng.integers(0, classes, n)
    noise = rng.random((n, 80)) < 0.08
    X = sp.csr_matrix((centres[y] ^ noise).astype(float))
    return X, y


def test_network_calibration_is_calibrated_and_leaves_predictions_alone():
    X, y = separable()
    plain = snowpy.Network("balanced-winnow", thickness=1.0).fit(X[:400], y[:400])
    calibrated = snowpy.Network("balanced-winnow", thickness=1.0, calibrate="cv")
    calibrated.fit(X[:400], y[:400])
    np.testing.assert_array_equal(plain.predict(X[400:]), calibrated.predict(X[400:]))
    p = calibrated.predict_proba(X[400:])
    assert np.allclose(p.sum(axis=1), 1.0)
    index = np.searchsorted(calibrated.classes_, y[400:])
    assert log_loss(p, index) < 0.5 and expected_calibration_error(p, index) < 0.1
    with pytest.raises(NotFittedError, match="train it with calibrate='cv'"):
        plain.predict_proba(X)


def test_the_sigmoids_are_scikit_learns_platt_fit_of_the_same_scores():
    """An independent reference, not a loose floor (log loss < 0.5 held with Platt's B
    negated): a single-label network's shared sigmoid is Platt's fit of all its (score,
    is-true) pairs as scikit-learn's ``_sigmoid_calibration`` fits them, to 1e-6; a
    multi-label network's, of each target's with ``B = 0`` (probability 1/2 at the
    threshold), the minimum of the same smoothed log loss that scipy finds."""
    from scipy.optimize import minimize_scalar
    from sklearn.calibration import _sigmoid_calibration

    X, y = separable(seed=5, n=900)
    net = snowpy.Network("perceptron", calibrate="progressive").fit(X[:600], y[:600])
    calibration = net.calibration_
    scores, positives = net.engine_.progressive.arrays()
    assert calibration.normalize == "sum" and scores.shape == (600, 4)
    a, b = _sigmoid_calibration(scores.ravel(), positives.ravel().astype(int))
    np.testing.assert_allclose(calibration.a, a, rtol=1e-6)
    np.testing.assert_allclose(calibration.b, b, rtol=1e-6, atol=1e-9)
    labels = [[str(v)] + (["even"] if v % 2 == 0 else []) for v in y[:600]]
    multi = snowpy.Network("perceptron", calibrate="progressive").fit(X[:600], labels)
    scores, positives = multi.engine_.progressive.arrays()
    assert multi.calibration_.normalize == "none"
    assert not multi.calibration_.b.any()
    for t in range(scores.shape[1]):
        s, y = scores[:, t], positives[:, t]
        target = np.where(y, (y.sum() + 1) / (y.sum() + 2), 1 / ((~y).sum() + 2))
        a = minimize_scalar(lambda a: np.sum(np.logaddexp(0, -a * s) + target * a * s),
                            bounds=(-100, 0), method="bounded",
                            options={"xatol": 1e-10}).x
        np.testing.assert_allclose(multi.calibration_.a[t], a, rtol=1e-5)


def test_holdout_and_a_class_with_one_example():
    X, y = separable(seed=3)
    y = y.copy()
    y[0] = 9  # a class seen once
    net = snowpy.Network("perceptron", calibrate="holdout:4").fit(X, y)
    p = net.predict_proba(X)
    assert np.all(np.isfinite(p)) and np.allclose(p.sum(axis=1), 1.0)


def test_multilabel_probabilities_are_per_label():
    # 60 distinct examples (a faint feature of its own each): calibration folds keep
    # identical examples together, so 20 copies of 3 examples would leave folds that
    # never saw an example like the one held out
    X = sp.csr_matrix(np.hstack([np.tile(np.eye(3), (20, 1)), 0.01 * np.eye(60)]))
    y = [["a"], ["a", "b"], []] * 20
    net = snowpy.Network("perceptron", theta=0.5, calibrate="cv").fit(X, y)
    p = net.predict_proba(np.hstack([np.eye(3), np.zeros((3, 60))]))
    assert p.shape == (3, 2) and p[1, 1] > 0.5 and p[2].max() < 0.5


def test_a_labels_probability_stays_within_the_targets_its_sigmoid_was_fitted_to(tmp_path):
    # each label's sigmoid rose past the held-out scores it was fitted on: a short
    # document's strong words scored beyond them and printed 1.0000 (Reuters' grain,
    # wheat, corn for five words); Platt's smoothed targets bound it now
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(400, 2))
    positives = np.c_[scores[:, 0] + 0.3 * rng.normal(size=400) > 1.0, scores[:, 1] > 2.3]
    calibration = Calibration.fit(scores, positives, normalize="none", method="cv")
    n = positives.sum(axis=0)
    far = calibration.probabilities(np.array([[50.0, 50.0], [-50.0, -50.0]]))
    assert np.array_equal(far[0], (n + 1) / (n + 2))  # (0.99..., 0.9...: not 1)
    assert far[1, 0] == 1 / (400 - n[0] + 2) and far[1, 1] >= 1 / (400 - n[1] + 2)
    inside = calibration.probabilities(scores)
    assert np.array_equal(inside >= 0.5, scores >= 0)  # (a set is still every p >= 1/2)
    net = snowpy.Network("perceptron", calibrate="cv").fit(
        sp.csr_matrix(np.hstack([np.tile(np.eye(3), (20, 1)), 0.01 * np.eye(60)])),
        [["a"], ["a", "b"], []] * 20)
    net.save(tmp_path / "m.snowpy")
    low, high = snowpy.load(tmp_path / "m.snowpy").calibration_.bounds
    assert high.tolist() == [41 / 42, 21 / 22] and low.tolist() == [1 / 22, 1 / 42]


def test_progressive_calibration_costs_no_extra_training(tmp_path):
    X, y = separable(seed=5, n=900)
    net = snowpy.Network("balanced-winnow", thickness=1.0, calibrate="progressive")
    net.fit(X[:600], y[:600])
    assert net.calibration_.method == "progressive"
    p = net.predict_proba(X[600:])
    index = np.searchsorted(net.classes_, y[600:])
    assert np.allclose(p.sum(axis=1), 1.0) and log_loss(p, index) < 0.5


def test_progressive_calibration_while_streaming_and_after_loading(tmp_path):
    X, y = separable(seed=6, n=1200)
    labels = np.array(["a", "b", "c", "d"])[y]
    stream = snowpy.Network("perceptron", calibrate="progressive")
    twin = snowpy.Network("perceptron", calibrate="progressive")
    for start in range(0, 600, 100):
        stream.partial_fit(X[start:start + 100], labels[start:start + 100])
        twin.partial_fit(X[start:start + 100], labels[start:start + 100])
    stream.partial_fit(X[600:610], ["new"] * 10)  # a new label: the window grows a column
    twin.partial_fit(X[600:610], ["new"] * 10)
    p = stream.predict_proba(X[700:])
    assert p.shape[1] == 5 and np.allclose(p.sum(axis=1), 1.0)
    loaded = snowpy.load(stream.save(tmp_path / "stream.snowpy"))
    for net in (loaded, twin):
        net.partial_fit(X[610:700], labels[610:700])
    np.testing.assert_array_equal(loaded.predict_proba(X[700:]), twin.predict_proba(X[700:]))


def test_a_hedging_division_is_sharpened_by_a_temperature_and_kept_on_file(tmp_path):
    """Sixty targets whose sigmoid hedges: the plain division gives a mean top
    probability far below the accuracy; the temperature brings it to the accuracy. Where
    the division is about right, the temperature stays 1 (plain division)."""
    rng = np.random.default_rng(0)
    n, k = 4000, 60
    truth = rng.integers(0, k, n)
    scores = rng.normal(0.0, 1.0, (n, k))
    scores[np.arange(n), truth] += 3.0  # right 73% of the time; the division hedges
    positives = np.zeros((n, k), dtype=bool)
    positives[np.arange(n), truth] = True
    calibration = Calibration.fit(scores, positives, normalize="sum", method="cv")
    plain = Calibration(calibration.a, calibration.b, normalize="sum", method="cv")
    accuracy = np.mean(scores.argmax(1) == truth)
    assert plain.probabilities(scores).max(1).mean() < accuracy - 0.15
    assert calibration.temperature > 1.3  # measured 1.47
    assert abs(calibration.probabilities(scores).max(1).mean() - accuracy) < 0.01
    assert log_loss(calibration.probabilities(scores), truth) < \
        log_loss(plain.probabilities(scores), truth)
    np.testing.assert_array_equal(calibration.probabilities(scores).argmax(1),
                                  plain.probabilities(scores).argmax(1))  # same ranking
    # separable scores: the division is not hedging, T stays 1
    scores[np.arange(n), truth] += 6.0
    assert Calibration.fit(scores, positives, normalize="sum", method="cv").temperature == 1.0
    # the temperature is part of the model file
    from snowpy import SnowClassifier

    rows = [line.split("\t", 1) for line in
            TRAIN.read_text().splitlines() if line]
    clf = SnowClassifier(calibrate="cv").fit([t for _, t in rows], [lab for lab, _ in rows])
    clf.network_.calibration_.temperature = 1.75
    clf.save(tmp_path / "m.snowpy")
    assert snowpy.load(tmp_path / "m.snowpy").network_.calibration_.temperature == 1.75


def test_a_softmax_calibration_recovers_the_temperature_of_its_data():
    """For rules whose scores are log-likelihoods (Naive Bayes: relative_scores): the
    labels drawn from softmax(0.5 s) give back a slope near 0.5, whatever level each
    example's scores sit at (shifting a row changes nothing)."""
    from snowpy.calibration import Calibration

    rng = np.random.default_rng(0)
    scores = rng.normal(scale=4.0, size=(6000, 4))
    z = 0.5 * scores
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    truth = np.array([rng.choice(4, p=row) for row in p])
    positives = np.zeros_like(scores, dtype=bool)
    positives[np.arange(truth.size), truth] = True
    shifted = scores - rng.uniform(0, 5000, size=(6000, 1))  # a level per example
    calibration = Calibration.fit(shifted, positives, normalize="softmax", method="cv")
    assert -calibration.a[0] == pytest.approx(0.5, abs=0.05)
    probabilities = calibration.probabilities(shifted)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    np.testing.assert_allclose(probabilities, p, atol=0.05)


def test_a_label_met_by_partial_fit_after_calibrating_keeps_probabilities(demo_rows, tmp_path):
    # item 3: "the calibration covers 18 targets, the scores have 20" everywhere after save
    rows = demo_rows
    texts, labels = [t for _, t in rows], [lab for lab, _ in rows]
    clf = SnowClassifier(calibrate="cv").fit(texts, labels)
    with pytest.warns(CalibrationWarning, match="came after calibrating"):
        clf.partial_fit(["a brand new kind of message", "another new one"],
                        ["novel", "newer"])
    proba = clf.predict_proba(texts[:10])
    assert proba.shape == (10, 7)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    path = tmp_path / "grown.snowpy"
    clf.save(path)
    assert run("predict", path, input="a brand new kind of message\n").exit_code == 0
    result = run("evaluate", path, TRAIN, "--json")
    assert result.exit_code == 0, result.output
    assert np.isfinite(json.loads(result.stdout)["log_loss"])
    # the warning is said once, when the labels arrive, not on every later call
    with warnings.catch_warnings():
        warnings.simplefilter("error", CalibrationWarning)
        clf.partial_fit(["a brand new kind of message"], ["novel"])


@pytest.mark.parametrize("sampled", [False, True])
def test_the_temperature_is_the_root_of_its_own_equation(monkeypatch, sampled):
    """Where the division hedges (its mean top probability more than HEDGING below the
    accuracy), T solves mean_i max_t p_t^T / sum_k p_k^T = accuracy over the examples of one
    true label, found here by scipy's brentq on the formula written out (mutation testing
    left 43 changes of fit_temperature alive); where it does not hedge T is 1; and T stays
    within (1, 8]. ``sampled``: more examples than a pass holds (a sample stands for
    them: the other code path)."""
    from scipy.optimize import brentq

    import snowpy.calibration as calibration_module
    from snowpy.calibration import HEDGING, Calibration

    if sampled:  # 999 examples a pass, 1000 here: every example of one label (940) is
        # still in the sample, the same equation (4 * 1000 kept the one-pass path)
        monkeypatch.setattr(calibration_module, "POOLED_PAIRS", 4 * 999)
    rng = np.random.default_rng(3)
    n, k = 1000, 4
    truth = rng.integers(0, k, n)
    scores = rng.normal(scale=0.5, size=(n, k))
    scores[np.arange(n), truth] += 1.5
    positives = np.zeros((n, k), dtype=bool)
    positives[np.arange(n), truth] = True
    positives[:40] = False  # (examples of no label: left out of the equation)
    positives[40:60, 0] = positives[40:60, 1] = True  # (and of two labels)
    single = positives.sum(axis=1) == 1

    def top(t, a, b):
        log_p = -np.logaddexp(0.0, a * scores[single] + b)
        z = t * log_p
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return float(np.mean(1.0 / e.sum(axis=1)))

    def accuracy(a, b):
        return float(np.mean((-(a * scores[single] + b)).argmax(axis=1)
                             == positives[single].argmax(axis=1)))

    hedging = Calibration(np.full(k, -3.0), np.full(k, 2.0), normalize="sum", method="cv")
    a, b = hedging.a, hedging.b
    assert top(1.0, a, b) < accuracy(a, b) - HEDGING  # (the case the temperature is for)
    expected = np.exp(brentq(lambda log_t: top(np.exp(log_t), a, b) - accuracy(a, b),
                             0.0, np.log(8), xtol=1e-13))
    assert hedging.fit_temperature(scores, positives) == pytest.approx(expected, rel=1e-9)
    sharp = Calibration(np.full(k, -10.0), np.full(k, 7.0), normalize="sum", method="cv")
    assert top(1.0, sharp.a, sharp.b) > accuracy(sharp.a, sharp.b) - HEDGING
    assert sharp.fit_temperature(scores, positives) == 1.0
    flat = Calibration(np.full(k, -0.01), np.zeros(k), normalize="sum", method="cv")
    assert top(8.0, flat.a, flat.b) < accuracy(flat.a, flat.b)  # (8 is not enough)
    assert flat.fit_temperature(scores, positives) == pytest.approx(8.0, rel=1e-12)


def test_with_fewer_than_two_examples_of_one_label_the_temperature_is_one():
    """The equation needs examples of exactly one true label: with none or one, T stays 1
    (the scores of a hedging division otherwise; two are enough to sharpen it)."""
    from snowpy.calibration import Calibration

    hedging = Calibration(np.full(3, -3.0), np.full(3, 2.0), normalize="sum", method="cv")
    scores = np.array([[1.5, 0.2, 0.1], [0.1, 1.4, 0.3], [0.0, 0.2, 1.6]])
    for n_single in (0, 1):
        positives = np.zeros((3, 3), dtype=bool)
        positives[np.arange(n_single), np.arange(n_single)] = True
        positives[n_single:, :2] = True  # (the rest: two labels each)
        assert hedging.fit_temperature(scores, positives) == 1.0
    two = np.eye(3, dtype=bool)
    two[2, :2] = True
    assert hedging.fit_temperature(scores, two) > 1.0


# ---------------------------------------------------------------- the parts, one by one
# (from mutation testing, docs/testing.md: each value below is computed independently of
# snowpy.calibration, from the formula its docstring states)

def _one_label_data(n=1000, k=4, seed=3):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n)
    scores = rng.normal(scale=0.5, size=(n, k))
    scores[np.arange(n), truth] += 1.5
    positives = np.zeros((n, k), dtype=bool)
    positives[np.arange(n), truth] = True
    return scores, positives


def _reference_temperature(scores, positives, a, b):
    """T by brentq on mean max softmax(T log p) = accuracy, 1 where the division's mean top
    probability is within HEDGING of the accuracy, 8 where 8 is not enough."""
    from scipy.optimize import brentq

    from snowpy.calibration import HEDGING

    single = positives.sum(axis=1) == 1
    logits = -(scores[single] * a + b)
    log_p = -np.logaddexp(0.0, -logits)
    accuracy = float(np.mean(logits.argmax(1) == positives[single].argmax(1)))

    def top(t):
        z = t * log_p
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return float(np.mean(1.0 / e.sum(axis=1)))

    if top(1.0) > accuracy - HEDGING:
        return 1.0
    if top(8.0) <= accuracy:
        return 8.0
    return float(np.exp(brentq(lambda log_t: top(np.exp(log_t)) - accuracy, 0.0, np.log(8),
                               xtol=1e-13)))


def test_beyond_a_pass_the_temperature_is_fitted_on_a_seeded_sample(monkeypatch):
    """More examples of one label than a pass holds (POOLED_PAIRS // targets): T is fitted
    on a seeded sample of them without replacement (numpy's default_rng(0), sorted), which
    here gives another T than all of them would."""
    import snowpy.calibration as calibration_module

    scores, positives = _one_label_data()
    positives[:60] = False  # 60 examples of no label: never in the sample
    # (a sigmoid per target, though a single-label network shares one: the sample's
    # accuracy is taken with each target's own)
    hedging = Calibration([-3.0, -2.5, -3.5, -3.0], [2.0, 1.5, 2.5, 2.2], normalize="sum",
                          method="cv")
    every = _reference_temperature(scores, positives, hedging.a, hedging.b)
    monkeypatch.setattr(calibration_module, "POOLED_PAIRS", 1202)  # 300 examples of 4
    single = np.flatnonzero(positives.sum(axis=1) == 1)
    sample = np.sort(np.random.default_rng(0).choice(single, 300, replace=False))
    expected = _reference_temperature(scores[sample], positives[sample], hedging.a, hedging.b)
    assert abs(expected - every) > 1e-3
    assert hedging.fit_temperature(scores, positives) == pytest.approx(expected, rel=1e-9)
    # no fewer than two examples, however many targets (POOLED_PAIRS // 4 = 1 here)
    monkeypatch.setattr(calibration_module, "POOLED_PAIRS", 7)
    two = np.sort(np.random.default_rng(0).choice(single, 2, replace=False))
    three = np.sort(np.random.default_rng(0).choice(single, 3, replace=False))
    flat = Calibration(np.full(4, -1.0), np.full(4, 1.0), normalize="sum", method="cv")
    expected = _reference_temperature(scores[two], positives[two], flat.a, flat.b)
    assert abs(expected - _reference_temperature(scores[three], positives[three], flat.a,
                                                 flat.b)) > 1e-3
    assert flat.fit_temperature(scores, positives) == pytest.approx(expected, rel=1e-9)
    # two examples of one label in the sample are enough to fit T on; one is not
    monkeypatch.setattr(calibration_module, "POOLED_PAIRS", 8)  # 2 examples a pass
    few = np.zeros_like(positives)
    few[[5, 9], [1, 2]] = True
    few[[6, 7, 8], :2] = True  # (two labels: not in the equation)
    scores[5], scores[9] = [0.1, 1.6, 0.2, 0.0], [0.0, 0.1, 1.5, 0.2]
    expected = _reference_temperature(scores, few, hedging.a, hedging.b)
    assert expected > 1.0
    assert hedging.fit_temperature(scores, few) == pytest.approx(expected, rel=1e-9)
    few[9] = False
    assert hedging.fit_temperature(scores, few) == 1.0


@pytest.mark.parametrize("sharp", [False, True])
def test_an_example_whose_every_probability_underflows_is_counted_in_logs(sharp):
    """Examples whose every sigmoid underflows to 0 (their scores far below the others'):
    the division is 0/0 for them, so the mean top probability is taken in logs, where
    each still has a largest probability."""
    scores, positives = _one_label_data()
    scores[:5] = -400.0 + np.arange(4)  # logits of about -1200 (-4000 when sharp)
    a, b = (-10.0, 7.0) if sharp else (-3.0, 2.0)
    calibration = Calibration(np.full(4, a), np.full(4, b), normalize="sum", method="cv")
    expected = _reference_temperature(scores, positives, calibration.a, calibration.b)
    assert (expected == 1.0) == sharp
    assert calibration.fit_temperature(scores, positives) == pytest.approx(expected, rel=1e-9)


def test_the_softmax_slope_is_the_least_capped_log_loss_against_platts_targets():
    """``normalize="softmax"``: one ``c`` for ``softmax(c * scores)``, the least mean log
    loss over the examples of one true label against Platt's smoothed targets (the true
    label (n + 1) / (n + 2), each other 1 / ((n + 2)(k - 1))), each example's loss capped at
    3 log k; found by golden-section search on log c in [1e-4, 1e2], here by scipy."""
    from scipy.optimize import minimize_scalar
    from scipy.special import log_softmax

    scores, positives = _one_label_data(n=400, k=5, seed=11)
    scores[:30] *= -6.0  # confidently wrong examples: their losses meet the cap
    positives[30:40, 0] = True  # (two labels: left out)
    single = positives.sum(axis=1) == 1
    s, truth = scores[single], positives[single].argmax(1)
    n, k = s.shape
    targets = np.full(s.shape, 1.0 / ((n + 2) * (k - 1)))
    targets[np.arange(n), truth] = (n + 1) / (n + 2)

    def loss(log_c):
        each = -np.sum(targets * log_softmax(np.exp(log_c) * s, axis=1), axis=1)
        return np.mean(np.minimum(each, 3 * np.log(k)))

    found = minimize_scalar(loss, bounds=(np.log(1e-4), np.log(1e2)), method="bounded",
                            options={"xatol": 1e-11})
    capped = np.sum(-np.sum(targets * log_softmax(np.exp(found.x) * s, axis=1), axis=1)
                    > 3 * np.log(k))
    assert capped >= 10  # (the cap is in play)
    calibration = Calibration.fit(scores, positives, normalize="softmax", method="cv")
    assert calibration.a == pytest.approx(np.full(5, -np.exp(found.x)), rel=1e-7)
    assert calibration.b.tolist() == [0.0] * 5 and calibration.method == "cv"
    # two targets are a softmax too; with fewer than two examples of one label, c is 1
    two = Calibration.fit(scores[:, :2], positives[:, :2], normalize="softmax", method="cv")
    assert two.b.tolist() == [0.0, 0.0] and two.a[0] == two.a[1] != -1.0
    lonely = np.zeros_like(positives)
    lonely[0, 2] = True
    assert Calibration.fit(scores, lonely, normalize="softmax", method="cv").a.tolist() \
        == [-1.0] * 5
    lonely[1, 3] = True  # two are enough
    assert Calibration.fit(scores, lonely, normalize="softmax", method="cv").a[0] != -1.0


def test_one_target_under_a_softmax_gets_platts_sigmoid():
    """A softmax over one target would say 1 always: one target gets its own sigmoid."""
    scores, positives = _one_label_data(n=300, k=1)
    positives[::3] = False
    calibration = Calibration.fit(scores, positives, normalize="softmax", method="cv")
    order = np.lexsort((positives[:, 0], scores[:, 0]))
    assert (calibration.a[0], calibration.b[0]) == fit_sigmoid(scores[order, 0],
                                                               positives[order, 0])


def test_a_fit_with_integer_flags_is_the_fit_with_booleans():
    """0/1 integers say what booleans say (the compiled fit reads bytes)."""
    scores, positives = _one_label_data(n=300, k=3)
    as_ints = positives.astype(np.int64)
    assert fit_sigmoid(scores[:, 0], as_ints[:, 0]) == fit_sigmoid(scores[:, 0], positives[:, 0])
    hedging = Calibration(np.full(3, -3.0), np.full(3, 2.0), normalize="sum", method="cv")
    assert hedging.fit_temperature(scores, as_ints) == hedging.fit_temperature(scores,
                                                                             positives)


def test_a_warm_start_is_where_newtons_method_begins():
    """``start=(A, B)``: one Newton step from the optimum stays there; from Platt's own
    start, or from (B, B), one step does not reach it."""
    rng = np.random.default_rng(6)
    scores = rng.normal(2.0, 3.0, 2000)
    positive = rng.random(2000) < 1 / (1 + np.exp(-1.1 * scores + 0.8))
    best = fit_sigmoid(scores, positive)
    assert fit_sigmoid(scores, positive, start=best, max_iter=1) == pytest.approx(best,
                                                                                 rel=1e-9)
    for start in (None, (best[1], best[1])):
        one_step = fit_sigmoid(scores, positive, start=start, max_iter=1)
        assert abs(one_step[0] - best[0]) > 1e-3


def test_calibration_starts_each_sigmoid_from_the_earlier_fit(monkeypatch):
    """``Calibration.fit(start=earlier)`` hands the earlier sigmoid of each target to the
    compiled fit (one shared by every target: the first), when the earlier one covers as
    many targets under the same normalisation; else Platt's start. Multi-label sigmoids
    (``B = 0``, fitted by ``fit_slope``) start from the earlier slopes, to the same
    optimum."""
    import snowpy.calibration as calibration_module
    from snowpy._core import platt

    calls = []

    class Spy:
        division = staticmethod(platt.division)

        @staticmethod
        def fit(scores, flags, a, b, warm, max_iter):
            calls.append((a, b, warm))
            return platt.fit(scores, flags, a, b, warm, max_iter)

    monkeypatch.setattr(calibration_module, "_platt", Spy)
    scores, positives = _one_label_data(n=200, k=3)
    earlier = Calibration([-1.5, -2.5, -3.5], [0.5, 1.5, 2.5], normalize="none", method="cv")
    cold = Calibration.fit(scores, positives, normalize="none", method="cv")
    warm = Calibration.fit(scores, positives, normalize="none", method="cv", start=earlier)
    assert calls == [] and not warm.b.any()
    np.testing.assert_allclose(warm.a, cold.a, rtol=1e-6)
    for t, a in enumerate(cold.a):
        assert calibration_module.fit_slope(scores[:, t], positives[:, t], start=a,
                                            max_iter=1) == pytest.approx(a, rel=1e-9)
    shared = Calibration([-1.5, -1.5, -1.5], [0.5, 0.7, 0.9], normalize="sum", method="cv")
    Calibration.fit(scores, positives, normalize="sum", method="cv", start=shared)
    assert calls == [(-1.5, 0.5, True)]
    for other, normalize in [(earlier, "sum"), (shared.extended(4), "sum")]:
        calls.clear()
        Calibration.fit(scores, positives, normalize=normalize, method="cv", start=other)
        assert calls and all(call == (0.0, 0.0, False) for call in calls)


def test_held_out_scores_fit_alike_in_any_order():
    """Taken in sorted order, a fit's sums are the same sums whatever the order of the
    examples: the same sigmoids to the bit (shared and per target)."""
    scores, positives = _one_label_data(n=3000, k=5, seed=21)
    scores = scores * 13.7 + 0.1
    order = np.random.default_rng(2).permutation(3000)
    for normalize in ("sum", "none"):
        one = Calibration.fit(scores, positives, normalize=normalize, method="cv")
        other = Calibration.fit(scores[order], positives[order], normalize=normalize,
                                method="cv")
        assert one.a.tobytes() == other.a.tobytes() and one.b.tobytes() == other.b.tobytes()
        assert one.temperature == other.temperature


def test_what_each_normalisation_fits():
    """Single-label ("sum"): one sigmoid shared by the targets (two targets too), and a
    temperature where the division hedges; multi-label ("none"): a sigmoid per target
    through 1/2 at the threshold and no temperature, on the same scores. Two targets whose scores share a level that varies
    from example to example, the true one a little higher: the shared sigmoid says about
    the same for both, the accuracy is 1."""
    rng = np.random.default_rng(5)
    truth = rng.integers(0, 2, 400)
    scores = rng.normal(scale=10.0, size=(400, 1)) + np.zeros((400, 2))
    scores[np.arange(400), truth] += 0.1
    positives = np.zeros((400, 2), dtype=bool)
    positives[np.arange(400), truth] = True
    shared = Calibration.fit(scores, positives, normalize="sum", method="holdout")
    assert shared.a[0] == shared.a[1] and shared.b[0] == shared.b[1]
    assert shared.method == "holdout"
    expected = _reference_temperature(scores, positives, shared.a, shared.b)
    assert expected > 1.5 and shared.temperature == pytest.approx(expected, rel=1e-9)
    each = Calibration.fit(scores, positives, normalize="none", method="holdout")
    assert each.a[0] != each.a[1] and each.temperature == 1.0
    for t in (0, 1):
        order = np.lexsort((positives[:, t], scores[:, t]))
        assert (each.a[t], each.b[t]) == (fit_slope(scores[order, t], positives[order, t]),
                                          0.0)


def test_a_seeded_sample_of_pairs_fits_a_shared_sigmoid_beyond_the_limit(monkeypatch):
    """More (score, is-true) pairs than POOLED_PAIRS: a uniform sample of them, drawn with
    replacement by default_rng(0); at the limit, every pair."""
    import snowpy.calibration as calibration_module

    scores, positives = _one_label_data(n=40, k=4)
    flat_s, flat_p = scores.ravel(), positives.ravel()

    def shared_fit(s, p):
        order = np.lexsort((p, s))
        return fit_sigmoid(s[order], p[order])

    for limit, expected in [(160, shared_fit(flat_s, flat_p)),
                            (50, shared_fit(*(x[np.random.default_rng(0).integers(0, 160, 50)]
                                              for x in (flat_s, flat_p))))]:
        monkeypatch.setattr(calibration_module, "POOLED_PAIRS", limit)
        fitted = Calibration.fit(scores, positives, normalize="sum", method="cv")
        assert (fitted.a[0], fitted.b[0]) == expected


def test_a_calibration_extended_to_new_targets_gives_them_the_median_sigmoid():
    calibration = Calibration([-1.0, -3.0, -2.0], [0.5, 1.5, 1.0], normalize="sum",
                              method="holdout", temperature=2.0)
    assert calibration.extended(3) is calibration
    one_more = calibration.extended(4)
    assert one_more.a.tolist() == [-1.0, -3.0, -2.0, -2.0]
    assert one_more.b.tolist() == [0.5, 1.5, 1.0, 1.0]
    assert (one_more.normalize, one_more.method, one_more.temperature) == ("sum", "holdout",
                                                                           2.0)
    empty = Calibration(np.zeros(0), np.zeros(0), normalize="none", method="cv")
    assert empty.extended(2).a.tolist() == [-1.0, -1.0]
    assert empty.extended(2).b.tolist() == [0.0, 0.0]


def test_a_calibration_refuses_what_it_cannot_be():
    with pytest.raises(ConfigurationError) as caught:
        Calibration([-1.0], [0.0], normalize="max", method="cv")
    assert str(caught.value) == "normalize must be one of ('sum', 'softmax', 'none')"
    for bad in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ConfigurationError) as caught:
            Calibration([-1.0], [0.0], normalize="sum", method="cv", temperature=bad)
        assert str(caught.value) == f"temperature must be a positive number, got {bad}"
    calibration = Calibration(np.array([-1.0, -2.0], dtype=np.float32), [0, 1],
                              normalize="sum", method="cv")
    assert calibration.a.dtype == calibration.b.dtype == np.float64
    with pytest.raises(ConfigurationError) as caught:
        calibration.probabilities(np.zeros((1, 3)))
    assert str(caught.value) == ("the calibration covers 2 targets, the scores have 3 (labels "
                                 "were added after calibrating: train again with calibration)")


@pytest.mark.parametrize("temperature", [1.0, 2.5])
def test_probabilities_are_the_division_of_p_to_the_temperature_in_logs(temperature):
    """``p_t^T / sum_k p_k^T``: for T = 1 the plain division (to the bit); a row whose
    every ``p`` underflows to 0 is divided in logs, where its order stays, and rows far
    apart do not underflow one another."""
    from scipy.special import expit, log_expit, softmax

    calibration = Calibration(np.full(3, -2.0), np.full(3, 1.0), normalize="sum",
                              method="cv", temperature=temperature)
    scores = np.array([[0.3, 1.2, -0.4], [-400.0, -399.5, -401.0], [0.0, 0.0, 0.0]])
    logits = -(scores * -2.0 + 1.0)
    expected = softmax(temperature * log_expit(logits), axis=1)
    got = calibration.probabilities(scores)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert got[1].argmax() == 1 and got[2].tolist() == [1 / 3] * 3
    if temperature == 1.0:
        p = expit(logits[[0, 2]])
        assert calibration.probabilities(scores[[0, 2]]).tolist() == \
            (p / p.sum(axis=1, keepdims=True)).tolist()


def test_a_calibration_is_stored_whole_and_refused_when_damaged():
    calibration = Calibration([-1.0, -2.0], [0.5, 0.25], normalize="sum", method="holdout",
                              temperature=1.5)
    header, arrays = calibration.header(), calibration.arrays()
    assert header == {"normalize": "sum", "method": "holdout", "temperature": 1.5}
    again = Calibration.from_file(header, arrays, "m.snowpy")
    assert (again.a.tolist(), again.b.tolist()) == ([-1.0, -2.0], [0.5, 0.25])
    assert (again.normalize, again.method, again.temperature) == ("sum", "holdout", 1.5)
    older = Calibration.from_file({"normalize": "none"}, arrays, "m.snowpy")  # (0.1's files)
    assert (older.method, older.temperature) == ("cv", 1.0)
    for damaged, why in [({"calibration_a": np.zeros((2, 2)), "calibration_b": np.zeros((2, 2))},
                          "shapes differ"),
                         ({"calibration_a": np.zeros(2), "calibration_b": np.zeros(3)},
                          "shapes differ"),
                         ({"calibration_a": np.zeros(2)}, "'calibration_b'")]:
        with pytest.raises(snowpy.exceptions.ModelFileError) as caught:
            Calibration.from_file(header, damaged, "m.snowpy")
        assert str(caught.value) == f"m.snowpy: the calibration is invalid ({why})"


def _row_set(X):
    X = sp.csr_matrix(X)
    return sorted(tuple(X.indices[X.indptr[i]:X.indptr[i + 1]].tolist()) for i in
                  range(X.shape[0]))


@pytest.mark.parametrize("calibrate, folds", [("cv:3", 3), ("holdout:4", 1)])
def test_each_calibration_fold_weighs_its_rows_by_its_own_training_documents(calibrate,
                                                                           folds):
    """Where the folds are made (``Network.fit(refold=...)``, the classifier's front end
    passing ``Featurizer.refold``): each fold's weighing is counted from its training rows
    and their labels alone, never a held-out row or label, and weighs both the rows its
    network learns and the held-out rows it scores; the held-out rows of the folds are
    every row once (cv) or one fold's (holdout)."""
    rng = np.random.default_rng(5)
    X = sp.random(120, 300, density=0.05, format="csr", random_state=6)
    X.data[:] = 1.0
    X = sp.csr_matrix(X + sp.csr_matrix((np.ones(120), (np.arange(120), np.arange(120))),
                                        shape=(120, 300)))  # (every row distinct)
    y = rng.choice(["a", "b", "c"], size=120)
    counted, weighed = [], []

    def refold(rows, labels):
        counted.append((_row_set(rows), list(labels)))

        def weigh(these):
            weighed.append((len(counted), _row_set(these)))
            return these
        return weigh

    snowpy.Network("perceptron", calibrate=calibrate, epochs=2).fit(X, y, refold=refold)
    assert len(counted) == folds and len(weighed) == 2 * folds
    every = _row_set(X)
    label_of = {row: label for row, label in zip(
        [tuple(X.indices[X.indptr[i]:X.indptr[i + 1]].tolist()) for i in range(120)], y)}
    held_out = []
    for fold, (rows, labels) in enumerate(counted, start=1):
        (first, learned), (second, held) = weighed[2 * fold - 2:2 * fold]
        assert first == second == fold and learned == rows  # (the fold's own rows)
        assert sorted(rows + held) == every and not set(rows) & set(held)
        assert sorted(labels) == sorted(label_of[row] for row in rows)
        held_out += held
    assert len(held_out) == (120 if folds > 1 else 30)
    assert len(set(held_out)) == len(held_out)


def test_a_classifier_calibrates_on_folds_weighed_by_their_own_documents(monkeypatch):
    """The classifier hands its front end's ``refold`` to the folds (with idf): each is
    counted from the fold's training documents and labels alone."""
    from snowpy.text import Featurizer

    texts, labels = [], []
    for line in TRAIN.read_text(encoding="utf-8").splitlines()[:90]:
        label, text = line.split("\t", 1)
        labels.append(label)
        texts.append(text)
    counted = []
    real = Featurizer.refold

    def refold(self, rows, fold_labels):
        counted.append(list(fold_labels))
        return real(self, rows, fold_labels)

    monkeypatch.setattr(Featurizer, "refold", refold)
    SnowClassifier(idf=True, relevance=0.5, calibrate="cv:3", epochs=2).fit(texts, labels)
    assert len(counted) == 3
    assert sorted(len(c) for c in counted) == sorted(90 - n for n in (30, 30, 30))
    assert all(sorted(set(c)) == sorted(set(labels)) for c in counted)


def test_the_stacking_weight_is_the_logistic_regressions_ratio_of_the_two_inputs():
    """fit_stacking: the logistic regression of the score and the evidence (sklearn's,
    barely regularised, on the same smoothed targets' labels) gives w = c_e / c_s; 0 when
    the scores do not rise with the labels."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(3)
    s, e = rng.normal(size=(2, 5000))
    y = rng.random(5000) < 1 / (1 + np.exp(-(1.5 * s - 0.6 * e + 0.3)))
    model = LogisticRegression(C=1e6).fit(np.c_[s, e], y)
    assert fit_stacking(s, e, y) == pytest.approx(model.coef_[0, 1] / model.coef_[0, 0],
                                                  rel=2e-3)
    assert fit_stacking(-s, e, y) == 0.0  # (scores that fall with the labels)
    through = LogisticRegression(C=1e6, fit_intercept=False).fit(np.c_[s, e], y)
    assert fit_stacking(s, e, y, intercept=False) == pytest.approx(
        through.coef_[0, 1] / through.coef_[0, 0], rel=2e-3)


def test_a_calibration_with_evidence_fits_the_sigmoids_on_the_stacked_scores():
    """Calibration.fit(evidence=...): one weight shared by a single-label network's
    targets (fitted on the pooled triples), one per target of a multi-label network; the
    sigmoids are the ones fitted on the stacked scores; stored and read back, extended to
    a new target with no weight, refused when not one finite weight a target."""
    rng = np.random.default_rng(4)
    scores, evidence = rng.normal(size=(2, 400, 3))
    truth = np.argmax(scores + 0.8 * evidence + rng.normal(scale=0.5, size=(400, 3)), axis=1)
    positives = np.eye(3, dtype=bool)[truth]
    stacked = Calibration.fit(scores, positives, normalize="sum", method="cv",
                              evidence=evidence)
    weight = stacked.evidence[0]
    assert stacked.evidence.tolist() == [weight] * 3 and 0.4 < weight < 1.6
    plain = Calibration.fit(scores + weight * evidence, positives, normalize="sum",
                            method="cv")
    assert (stacked.a.tolist(), stacked.b.tolist(), stacked.temperature) == (
        plain.a.tolist(), plain.b.tolist(), plain.temperature) and plain.evidence is None
    np.testing.assert_array_equal(stacked.stacked(scores, evidence), scores + weight * evidence)
    assert stacked.stacked(scores, None) is scores
    each = Calibration.fit(scores, positives, normalize="none", method="cv", evidence=evidence)
    assert len(set(each.evidence.tolist())) == 3
    again = Calibration.from_file(stacked.header(), stacked.arrays(), "m.snowpy")
    assert again.evidence.tolist() == stacked.evidence.tolist()
    assert stacked.extended(4).evidence.tolist() == [weight] * 3 + [0.0]
    assert stacked.without(1).evidence.tolist() == [weight] * 2
    for bad in (np.zeros(2), np.array([0.0, np.nan, 0.0]), np.zeros(3, np.int64)):
        with pytest.raises(snowpy.exceptions.ModelFileError, match="evidence weights"):
            Calibration.from_file(stacked.header(), {**stacked.arrays(),
                                                     "calibration_evidence": bad}, "m.snowpy")


def _demo() -> tuple[list[str], list[str]]:
    """The demo corpus's training texts and labels."""
    rows = [line.split("\t", 1) for line in TRAIN.read_text(encoding="utf-8").splitlines()]
    return [text for _, text in rows], [label for label, _ in rows]


def test_a_classifier_with_evidence_decides_from_the_stacked_scores_in_every_path(tmp_path):
    """evidence=True: the calibration folds' held-out evidence fits a weight, and predict,
    predict_proba, predict_one, predict_proba_one, decision_function and explain all read
    the stacked scores (the network's scores plus the weight times the evidence)."""
    texts, labels = _demo()
    clf = SnowClassifier(evidence=True, epochs=3).fit(texts, labels)
    weights = clf.network_.calibration_.evidence
    assert weights is not None and weights[0] != 0.0 and len(set(weights.tolist())) == 1
    rows = clf.rows(texts[:40])
    evidence = rows.evidence.by(clf.classes_.tolist())
    own = clf.network_.engine_.scores(rows, averaged=True)
    np.testing.assert_allclose(clf.target_scores(texts[:40]), own + weights * evidence,
                               rtol=1e-12)
    stacked = own + weights * evidence
    assert clf.predict(texts[:40]).tolist() == clf.classes_[stacked.argmax(1)].tolist()
    assert [clf.predict_one(t) for t in texts[:40]] == clf.predict(texts[:40]).tolist()
    proba = clf.predict_proba(texts[:40])
    np.testing.assert_allclose(proba, clf.network_.calibration_.probabilities(stacked))
    one = [clf.predict_proba_one(t) for t in texts[:40]]
    np.testing.assert_allclose([[p[c] for c in clf.classes_] for p in one], proba, rtol=1e-12)
    why = clf.explain(texts[0], top_k=1, features=None)
    target = why["targets"][0]
    total = target["bias"]["contribution"] - target["theta"] + target["evidence"][
        "contribution"] + sum(f["contribution"] for f in target["features"])
    assert abs(total - target["score"]) < 1e-9 and target["evidence"]["weight"] == weights[0]
    with pytest.raises(ConfigurationError, match="a cloud votes"):
        SnowClassifier("winnow+perceptron", evidence=True).fit(texts, labels)
    for calibrate in (None, "progressive"):  # (no weight to stack it with: refused)
        with pytest.raises(ConfigurationError, match="cross-fitted calibration"):
            SnowClassifier(evidence=True, calibrate=calibrate).fit(texts, labels)
    result = run("train", TRAIN, "-o", tmp_path / "m.snowpy", "--evidence", "--calibrate",
                 "none")
    assert result.exit_code == 1 and "a fit in memory makes with --calibrate cv or " \
        "--calibrate holdout; this one has --calibrate none" in result.stderr \
        and not (tmp_path / "m.snowpy").exists()
    unstacked = SnowClassifier(epochs=3).fit(texts, labels)
    assert unstacked.network_.calibration_.evidence is None
    assert unstacked.rows(texts[:2]).evidence is None


def test_a_classifier_with_evidence_keeps_it_when_copied_and_learns_no_more(tmp_path):
    """A pickled or copied classifier keeps its log-count ratios (it predicted from the
    stacked sigmoids on scores without the evidence); the ratios and the weight are
    fitted once, so partial_fit, learn_one and snowpy train --from refuse to learn more
    (a file saved after them did not load, or predicted otherwise)."""
    import copy
    import pickle

    texts, labels = _demo()
    clf = SnowClassifier(evidence=True, epochs=2).fit(texts, labels)
    for other in (pickle.loads(pickle.dumps(clf)), copy.deepcopy(clf)):
        np.testing.assert_array_equal(other.target_scores(texts[:30]),
                                      clf.target_scores(texts[:30]))
    for learn in (lambda: clf.partial_fit(texts[:3], labels[:3]),
                  lambda: clf.learn_one(texts[0], "a new label"),
                  lambda: clf.partial_fit_rows(clf.rows(texts[:3]), labels[:3])):
        with pytest.raises(ConfigurationError, match="^evidence=True is fitted once, by fit"):
            learn()
    clf.save(tmp_path / "m.snowpy")
    result = run("train", TRAIN, "--from", tmp_path / "m.snowpy", "-o", tmp_path / "n.snowpy")
    assert result.exit_code == 1 and f"--from {tmp_path / 'm.snowpy'}: --evidence is fitted " \
        "once, by fit" in result.stderr and not (tmp_path / "n.snowpy").exists()


def test_evidence_lifts_sentence_polarity_above_the_scores_alone(corpora, monkeypatch):
    """A real corpus: sentence polarity, a seeded 80/20 split. Stacked with the Naive
    Bayes evidence the defaults score at least 0.785 (0.789 measured; 0.782 without)."""
    from snowpy import corpora as registered

    monkeypatch.setenv("SNOWPY_DATA", str(corpora))

    documents = list(registered.load("sentence-polarity", "all"))
    order = np.random.default_rng(0).permutation(len(documents))
    cut = int(0.8 * len(documents))
    train, test = [documents[i] for i in order[:cut]], [documents[i] for i in order[cut:]]
    clf = SnowClassifier(evidence=True).fit([d.text for d in train], [d.label for d in train])
    accuracy = clf.score([d.text for d in test], [d.label for d in test])
    assert accuracy >= 0.785, accuracy
