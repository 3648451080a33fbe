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
from snowpy.calibration import Calibration, fit_sigmoid
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
    is-true) pairs, and a multi-label network's, of each target's, as scikit-learn's
    ``_sigmoid_calibration`` fits them, to 1e-6."""
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
    for t in range(scores.shape[1]):
        a, b = _sigmoid_calibration(scores[:, t], positives[:, t].astype(int))
        np.testing.assert_allclose([multi.calibration_.a[t], multi.calibration_.b[t]],
                                   [a, b], rtol=1e-6, atol=1e-9)


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
    within [1/8, 8]. ``sampled``: more examples than a pass holds (a sample stands for
    them: the other code path)."""
    from scipy.optimize import brentq

    import snowpy.calibration as calibration_module
    from snowpy.calibration import HEDGING, Calibration

    if sampled:  # (every example still in the sample: the same equation)
        monkeypatch.setattr(calibration_module, "POOLED_PAIRS", 4 * 1000)
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
                             -np.log(8), np.log(8), xtol=1e-13))
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
