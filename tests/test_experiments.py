"""Each experiment's table satisfies the bound it illustrates (small sizes), each bound
recomputed here from the seeds' formulas (never taken from the experiment's own table)."""

from __future__ import annotations

import numpy as np
import pytest

import math

from snowpy import experiments
from snowpy.exceptions import UnknownNameError


def test_attribute_efficiency_under_the_winnow_bound():
    result = experiments.run("attribute-efficiency", min_exponent=6, max_exponent=9,
                             examples=200)
    for row in result.rows:  # Littlestone: 2 + 3k(1 + log2 n), the target k of n attributes
        bound = 2 + 3 * row["k"] * (1 + math.log2(row["n"]))
        assert row["winnow_converged"] and row["winnow_mistakes"] <= bound
    assert result.rows[-1]["perceptron_mistakes"] > result.rows[-1]["winnow_mistakes"]
    assert result.rows[-1]["perceptron_mistakes"] > result.rows[0]["perceptron_mistakes"]


def test_margin_bounds_hold():
    result = experiments.run("margin", gammas=(0.4, 0.2, 0.1), examples=200)
    for row in result.rows:  # Novikoff: (R / gamma)^2; Freund-Schapire: ((R + D) / gamma)^2
        assert row["separable_mistakes"] <= (row["R"] / row["gamma"]) ** 2
        assert row["nonseparable_mistakes_one_pass"] <= \
            ((row["R_nonseparable"] + row["D"]) / row["gamma"]) ** 2


def test_winnow_r_recovers_from_drift():
    result = experiments.run("drift", n=200, examples=6000, period=500)
    last = result.rows[-1]
    assert last["winnow_r_mistakes"] < last["winnow_mistakes"]


def test_averaging_is_no_worse_at_the_end():
    result = experiments.run("averaging", examples=3000, test=1000)
    tail = result.rows[-5:]
    assert sum(r["averaged_error"] for r in tail) < sum(r["last_hypothesis_error"] for r in tail)


def test_learning_curve_falls(monkeypatch, tmp_path):
    monkeypatch.setenv("SNOWPY_DATA", str(tmp_path))  # no corpus there: the demo corpus
    result = experiments.run("learning-curve")
    for rule in ("perceptron", "balanced-winnow"):
        rows = [r for r in result.rows if r["rule"] == rule]
        assert rows[-1]["online_error"] < 0.5 < rows[1]["online_error"] + 0.5


def test_tables_figures_and_the_command(tmp_path):
    from typer.testing import CliRunner

    from snowpy.cli import app

    result = CliRunner().invoke(app, ["experiment", "margin", "--out", str(tmp_path),
                                      "--table", "json"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "margin.json").exists()
    import matplotlib  # noqa: F401  (a test extra: missing, the test fails)
    assert (tmp_path / "margin.png").stat().st_size > 10_000
    with pytest.raises(UnknownNameError, match="unknown experiment 'marginal'"):
        experiments.run("marginal")


def test_halving_stays_within_log2_of_the_class():
    # seed 000: Halving makes at most log2 |C| mistakes when the target is in C
    result = experiments.run("halving", sizes=(4, 8, 12), examples=300)
    for row in result.rows:
        assert 0 < row["mistakes"] <= math.log2(row["class_size"]) == row["attributes"]


def test_weighted_majority_stays_within_its_bounds():
    # seed 004: WM <= 2.41 (m + log2 N); randomized WM's expectation <= (m ln 2 + ln N) / (1/2)
    result = experiments.run("weighted-majority", pools=(8, 128, 1024), examples=400)
    for row in result.rows:
        m, n = row["best_expert_mistakes"], row["experts"]
        assert row["wm_mistakes"] <= 2.41 * (m + math.log2(n))
        assert row["rwm_expected_mistakes"] <= (m * math.log(2) + math.log(n)) / 0.5
        assert row["best_expert_mistakes"] <= 0.2 * 400  # the good expert (10% errors)


def test_the_halving_worked_example():
    from snowpy.experiments.experts import halving_mistakes

    # 2 attributes, 4 disjunctions {}, {x0}, {x1}, {x0, x1}; target x0
    X = np.array([[1, 0], [0, 1], [0, 0], [1, 1]], dtype=bool)
    # (1,0): {x0},{x0,x1} say yes, 2 of 4: a tie, predicted no -> mistake; {} and {x1} go
    # (0,1): {x0} says no, {x0,x1} yes: a tie, no: right; {x0,x1} goes. Then no mistake.
    assert halving_mistakes(X, X[:, 0]) == 1


def test_the_voted_perceptron_is_its_definition():
    # seed 003 (Freund and Schapire): sign(sum_k c_k sign(w_k . x)), worked by hand
    from snowpy.experiments.voted import VotedPerceptron

    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0]])
    vp = VotedPerceptron().partial_fit(X, [1, -1, 1, 1])
    # w0 = 0: mistake on x1 -> w1 = (1,0); x2: 0 -> mistake -> w2 = (1,-1); x3: 0 ->
    # mistake -> w3 = (2,0); x4: right. Survivals: w0 0, w1 1, w2 1, w3 2
    assert vp.vectors_.tolist() == [[0, 0], [1, 0], [1, -1], [2, 0]]
    assert vp.counts_.tolist() == [0, 1, 1, 2]
    # (0, 1): votes 0*0 + 1*0 + 1*(-1) + 2*0 = -1 -> -1; (1, 1): 0 + 1 + 0 + 2 = 3 -> +1
    assert vp.predict(np.array([[0.0, 1.0], [1.0, 1.0]])).tolist() == [-1, 1]


def test_averaging_experiment_draws_the_voted_perceptron():
    # measured at 6,000 examples: last hypothesis 0.204, voted 0.111, averaged 0.097
    result = experiments.run("averaging")
    final = result.rows[-1]
    assert final["voted_error"] < final["last_hypothesis_error"] - 0.05
    assert any(series.label == "voted Perceptron" for series in result.series)
