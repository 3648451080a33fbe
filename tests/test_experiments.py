"""Each experiment's table satisfies the bound it illustrates (small sizes)."""

from __future__ import annotations

import pytest

from snowpy import experiments
from snowpy.exceptions import UnknownNameError


def test_attribute_efficiency_under_the_winnow_bound():
    result = experiments.run("attribute-efficiency", min_exponent=6, max_exponent=9,
                             examples=200)
    for row in result.rows:
        assert row["winnow_converged"] and row["winnow_mistakes"] <= row["winnow_bound"]
    assert result.rows[-1]["perceptron_mistakes"] > result.rows[-1]["winnow_mistakes"]
    assert result.rows[-1]["perceptron_mistakes"] > result.rows[0]["perceptron_mistakes"]


def test_margin_bounds_hold():
    result = experiments.run("margin", gammas=(0.4, 0.2, 0.1), examples=200)
    for row in result.rows:
        assert row["separable_mistakes"] <= row["novikoff_bound"]
        assert row["nonseparable_mistakes_one_pass"] <= row["freund_schapire_bound"]


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
    pytest.importorskip("matplotlib")
    assert (tmp_path / "margin.png").stat().st_size > 10_000
    with pytest.raises(UnknownNameError, match="unknown experiment 'marginal'"):
        experiments.run("marginal")
