"""SNoW's outputs (issue 20): abstention (``-p k``) and the error file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import snowpy
from snowpy.cli import app
from snowpy.exceptions import ConfigurationError

ROOT = Path(__file__).resolve().parent.parent
TRAIN, TEST = (ROOT / "corpora" / "demo" / f"{s}.tsv" for s in ("train", "test"))
runner = CliRunner()


def rows(path: Path) -> tuple[list[str], list[str]]:
    pairs = [line.split("\t", 1) for line in path.read_text().splitlines() if line]
    return [t for _, t in pairs], [lab for lab, _ in pairs]


def test_abstention_worked_example():
    # two targets; softmax of the activations (no calibration): the margin decides
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    net = snowpy.Network("perceptron", theta=0.0, learning_rate=1.0, bias=False,
                         average=False, shuffle=False).fit(X[:2], ["a", "b"])
    shares = net.normalised_scores(X)
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    margins = np.abs(shares[:, 0] - shares[:, 1])
    assert margins[2] < 1e-12 < margins[0]  # the third example is a tie
    predicted = net.predict(X, abstain=0.1)
    assert predicted.tolist() == ["a", "b", snowpy.network.ABSTAIN]
    assert net.predict(X, abstain=0.0).tolist() == net.predict(X).tolist()
    with pytest.raises(ConfigurationError, match="from 0 to 1"):
        net.predict(X, abstain=2.0)


def test_abstaining_trades_coverage_for_accuracy():
    texts, labels = rows(TRAIN)
    test_texts, test_labels = rows(TEST)
    clf = snowpy.SnowClassifier().fit(texts, labels)
    truth = np.array(test_labels, dtype=object)
    coverage, accuracy = [], []
    for margin in (0.0, 0.5, 0.9):
        predicted = clf.predict(test_texts, abstain=margin)
        answered = predicted != None  # noqa: E711 - element-wise
        coverage.append(answered.mean())
        accuracy.append((predicted[answered] == truth[answered]).mean())
    assert coverage[0] == 1.0 and coverage[0] > coverage[1] > coverage[2] > 0.5
    assert accuracy[0] < accuracy[1] <= accuracy[2]  # measured 0.942, 0.956, 1.0


def test_the_command_line_abstains_and_writes_the_error_file(tmp_path):
    model = tmp_path / "m.snowpy"
    assert runner.invoke(app, ["train", str(TRAIN), "-o", str(model)]).exit_code == 0
    result = runner.invoke(app, ["predict", str(model), "--abstain", "0.99"],
                           input="hello\nI was charged twice on my card, refund me\n")
    assert result.exit_code == 0 and result.stdout.splitlines()[0] == "(abstain)"
    errors = tmp_path / "errors.jsonl"
    result = runner.invoke(app, ["evaluate", str(model), str(TEST), "--json",
                                 "--abstain", "0.5", "--errors", str(errors)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    texts, labels = rows(TEST)
    mistakes = [json.loads(line) for line in errors.read_text().splitlines()]
    assert len(mistakes) == report["errors_written"] == round((1 - report["accuracy"]) * 120)
    for mistake in mistakes:
        i = mistake["document"]
        assert mistake["text"] == texts[i] and mistake["true"] == labels[i]
        assert mistake["predicted"] != labels[i]
        activations = mistake["activations"]
        assert set(activations) == set(labels)
        assert max(activations, key=activations.get) == mistake["predicted"]
    a = report["abstain"]
    assert a["margin"] == 0.5 and 0 < a["coverage"] < 1
    assert a["accuracy_answered"] >= report["accuracy"]
    # the coverage-accuracy curve behind it: margins 0 to 1, coverage falling from 1
    curve = report["coverage_curve"]
    assert [p["margin"] for p in curve][:3] == [0.0, 0.05, 0.1] and curve[-1]["margin"] == 1
    assert curve[0]["coverage"] == 1.0 and curve[0]["accuracy"] == report["accuracy"]
    coverages = [p["coverage"] for p in curve]
    assert coverages == sorted(coverages, reverse=True)
    at_half = next(p for p in curve if p["margin"] == 0.5)
    assert at_half["coverage"] == a["coverage"]


def test_a_learning_curve_on_the_users_own_corpus(tmp_path):
    # SNoW's -c k: test every k examples as training goes, on a corpus of one's own
    model = tmp_path / "m.snowpy"
    result = runner.invoke(app, ["train", str(TRAIN), "-o", str(model), "--epochs", "2",
                                 "--calibrate", "none", "--no-early-stop", "--test", str(TEST),
                                 "--test-every", "150", "--json"])
    assert result.exit_code == 0, result.output
    curve = json.loads(result.stdout)["learning_curve"]
    # every 150 examples and at each epoch's end: 150, 300, 400 | 550, 700, 800
    assert [p["examples"] for p in curve] == [150, 300, 400, 550, 700, 800]
    assert [p["epoch"] for p in curve] == [1, 1, 1, 2, 2, 2]
    assert all(0.5 < p["accuracy"] <= 1.0 for p in curve)
    assert curve[-1]["accuracy"] >= curve[0]["accuracy"]
    # the last point measures the model saved: what evaluate measures of its file
    report = json.loads(runner.invoke(app, ["evaluate", str(model), str(TEST), "--json"]).stdout)
    assert report["accuracy"] == curve[-1]["accuracy"]
    # at the defaults too, where links are discarded and sigmoids fitted after the last
    # epoch (with Balanced Winnow, 0.9500 before them, 0.9417 after: the curve ended at
    # 0.9500)
    result = runner.invoke(app, ["train", str(TRAIN), "-o", str(model), "--test", str(TEST),
                                 "--test-every", "100", "--json"])
    curve = json.loads(result.stdout)["learning_curve"]
    report = json.loads(runner.invoke(app, ["evaluate", str(model), str(TEST), "--json"]).stdout)
    assert report["accuracy"] == curve[-1]["accuracy"] == pytest.approx(113 / 120)
    import matplotlib  # noqa: F401  (a test extra: missing, the test fails)
    figure = tmp_path / "curve.png"
    assert runner.invoke(app, ["train", str(TRAIN), "-o", str(model), "--epochs", "1",
                               "--test", str(TEST), "--curve", str(figure), "-q"]).exit_code == 0
    assert figure.read_bytes()[:4] == b"\x89PNG"


def test_a_curve_without_matplotlib_is_refused_before_training(tmp_path, monkeypatch):
    # it was drawn after training, and its failure said so and exited 0
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    model = tmp_path / "m.snowpy"
    result = runner.invoke(app, ["train", str(TRAIN), "-o", str(model), "--test", str(TEST),
                                 "--curve", str(tmp_path / "curve.png")])
    assert result.exit_code == 1 and not model.exists()
    assert result.output.strip() == ("snowpy: error: --curve needs matplotlib: pip install "
                                     "'.[plot]' in snowpy's source folder")
