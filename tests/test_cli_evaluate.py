"""`snowpy evaluate` (cli/evaluate.py) and its report (cli/report.py): figures, calibration,
unknown labels, confusion matrices and plots."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from snowpy.cli import app

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "corpora" / "demo" / "train.tsv"
runner = CliRunner()


def run(*args, input: str | None = None, **kwargs):
    return runner.invoke(app, [str(a) for a in args], input=input, **kwargs)


def test_multilabel_evaluate_reports_calibration(multilabel_model):
    # item 13: evaluate left out log loss and ECE for calibrated multi-label models
    model, corpus = multilabel_model
    report = json.loads(run("evaluate", model, corpus, "--json").stdout)
    assert report["reliability_kind"] == "per label"
    assert 0 < report["log_loss"] < np.log(2) and 0 <= report["ece"] < 0.2
    assert report["subset_accuracy"] > 0.9
    # the Brier score is per document-label pair, as the log loss and the report's tag
    # say (it was summed over the labels: 0.2556 on Reuters, 0.0028 per pair)
    import snowpy

    clf = snowpy.load(model)
    rows = [json.loads(line) for line in Path(corpus).read_text().splitlines()]
    probabilities = clf.predict_proba([row["text"] for row in rows])
    truth = np.array([[label in row["label"] for label in clf.classes_] for row in rows])
    assert report["brier"] == pytest.approx(np.mean((probabilities - truth) ** 2), rel=1e-9)
    assert report["brier"] < 0.1


def test_evaluating_unknown_labels_explains_first_and_stays_finite(demo_rows, tmp_path):
    # item 6: numpy RuntimeWarnings, `log loss nan`, the explanation after the tables
    model = tmp_path / "m.snowpy"
    assert run("train", TRAIN, "-o", model, "--epochs", "3").exit_code == 0
    rows = demo_rows[:30]
    mixed = tmp_path / "mixed.tsv"
    mixed.write_text("".join(f"{'weird' if i < 10 else label}\t{text}\n"
                             for i, (label, text) in enumerate(rows)))
    unknown = tmp_path / "unknown.tsv"
    unknown.write_text("".join(f"weird\t{text}\n" for _, text in rows))
    for corpus, n_known in ((mixed, 20), (unknown, 0)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a RuntimeWarning would fail the command
            result = run("evaluate", model, corpus)
        assert result.exit_code == 0, result.output
        out = result.stdout
        assert "nan" not in out and "Warning" not in result.output
        note = out.index("note: 10 of 30" if n_known else "note: 30 of 30")
        assert note < out.index("accuracy") < out.index("precision")
        report = json.loads(run("evaluate", model, corpus, "--json").stdout)
        assert report["documents_with_unknown_labels"] == 30 - n_known
        # a document whose label the model never learned is a mistake in every average
        assert report["micro"]["f1"] == pytest.approx(report["accuracy"])
        assert report["per_class"]["weird"]["support"] == 30 - n_known
        if n_known:
            assert report["calibrated_documents"] == 20 and np.isfinite(report["log_loss"])
        else:
            assert "log_loss" not in report and "no probability figures" in out


def test_a_label_the_model_never_learned_counts_against_every_average():
    # a one-class model evaluated on other labels printed micro-F1 1.0 beside accuracy 0.2
    from snowpy import metrics

    report = metrics.classification_report(["a", "b", "b", "c", "c"], ["a"] * 5, ["a"])
    assert report["accuracy"] == 0.2 and report["micro"]["f1"] == pytest.approx(0.2)
    assert report["macro"]["classes"] == 3 and report["macro"]["f1"] == pytest.approx(1 / 9)
    both = metrics.multilabel_report([("a", "z"), ("a",)], [("a",), ("a", "y")], ["a"])
    assert both["micro"]["precision"] == pytest.approx(2 / 3)
    assert both["micro"]["recall"] == pytest.approx(2 / 3)
    assert both["per_class"]["z"]["support"] == 1 and both["subset_accuracy"] == 0.0


@pytest.fixture(scope="module")
def many_classes(tmp_path_factory) -> tuple[Path, Path]:
    """A 15-class model (past the 12 a terminal shows whole) and its corpus."""
    root = tmp_path_factory.mktemp("many")
    rng = np.random.default_rng(0)
    words = [[f"w{c}x{k}" for k in range(6)] for c in range(15)]
    shared = [f"common{k}" for k in range(30)]
    lines = []
    for i in range(600):
        c = i % 15
        text = " ".join(rng.choice(words[c], 3).tolist() + rng.choice(shared, 8).tolist()
                        + rng.choice(words[(c + 1) % 15], 2 if i % 4 == 0 else 0).tolist())
        lines.append(f"class{c:02d}\t{text}\n")
    corpus = root / "many.tsv"
    corpus.write_text("".join(lines))
    model = root / "many.snowpy"
    assert run("train", corpus, "-o", model, "--epochs", "2").exit_code == 0
    return model, corpus


def test_a_confusion_matrix_of_many_classes_is_folded_and_written(many_classes, tmp_path):
    # item 14: at 20 classes the confusion matrix silently vanished
    model, corpus = many_classes
    whole = tmp_path / "confusion.tsv"
    result = run("evaluate", model, corpus, "--confusion", whole)
    assert result.exit_code == 0, result.output
    assert "largest confusions of 15 classes" in result.stdout
    assert f"the whole 15x15 confusion matrix: {whole}" in result.stdout.replace("\n", "")
    rows = [line.split("\t") for line in whole.read_text().splitlines()]
    assert len(rows) == 16 and all(len(row) == 16 for row in rows)
    report = json.loads(run("evaluate", model, corpus, "--json").stdout)
    assert sum(map(int, (cell for row in rows[1:] for cell in row[1:]))) == 600
    assert [list(map(int, row[1:])) for row in rows[1:]] == report["confusion"]["matrix"]
    plain = run("evaluate", model, corpus).stdout.replace("\n", "")
    assert "--confusion FILE.tsv, --plot DIR" in plain


def test_evaluate_plots_for_the_users_corpus(many_classes, tmp_path):
    # `snowpy evaluate --plot DIR`: a confusion matrix and a reliability diagram
    import matplotlib  # noqa: F401  (a test extra: missing, the test fails)
    model, corpus = many_classes
    result = run("evaluate", model, corpus, "--plot", tmp_path / "figures")
    assert result.exit_code == 0, result.output
    for name in ("confusion.png", "reliability.png", "coverage.png"):
        figure = tmp_path / "figures" / name
        assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and figure.stat().st_size > 10_000
        assert f"wrote {figure}" in result.stderr.replace("\n", "")


def test_without_matplotlib_the_metrics_come_first(many_classes, tmp_path, monkeypatch):
    # item 17: a missing matplotlib aborted the evaluation before the metrics
    import sys

    model, corpus = many_classes
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    result = run("evaluate", model, corpus, "--reliability-diagram", tmp_path / "r.png")
    assert result.exit_code == 1
    assert "accuracy" in result.stdout and "log loss" in result.stdout
    assert "the figures need matplotlib: pip install '.[plot]' in snowpy's source folder" \
        in result.stderr
    assert not (tmp_path / "r.png").exists()


def test_macro_figures_cover_the_labels_in_the_truth_or_the_predictions(tmp_path):
    # aclImdb as distributed: train/{pos,neg,unsup}, test/{pos,neg}. The unsup folder is
    # learned as a third class that no test document has and (here) no prediction gives:
    # the macro averages are scikit-learn's, over the labels in the truth or predictions
    from sklearn.metrics import f1_score

    import snowpy

    rng = np.random.default_rng(0)
    words = {"pos": "good great superb lovely fine brilliant", "neg":
             "bad awful poor dull terrible boring", "unsup": "zap zip zop zup"}
    common = "movie film plot actor scene story the a it was".split()
    for split, labels, n in (("train", ("pos", "neg", "unsup"), 40), ("test", ("pos", "neg"),
                                                                       20)):
        for label in labels:
            folder = tmp_path / "imdb" / split / label
            folder.mkdir(parents=True)
            for i in range(n * (3 if label == "unsup" else 1)):
                mixed = words[label].split() + (words["neg" if label == "pos" else "pos"]
                                                .split()[:2] if i % 4 == 0 else [])
                (folder / f"{i}_7.txt").write_text(" ".join(
                    list(rng.choice(mixed, 4)) + list(rng.choice(common, 8))))
    model = tmp_path / "imdb.snowpy"
    trained = run("train", tmp_path / "imdb", "-o", model)
    assert trained.exit_code == 0, trained.output
    assert ("note: the class 'unsup' holds 120 of the 200 documents (neg 40, pos 40)"
            in trained.stderr)
    report = json.loads(run("evaluate", model, tmp_path / "imdb", "--json").stdout)
    texts = [p.read_text() for label in ("neg", "pos")
             for p in sorted((tmp_path / "imdb" / "test" / label).iterdir())]
    truth = ["neg"] * 20 + ["pos"] * 20
    predicted = snowpy.load(model).predict(texts).tolist()
    assert "unsup" not in predicted and predicted != truth  # (a mistake or more)
    assert report["macro"]["classes"] == 2
    assert report["macro"]["f1"] == pytest.approx(f1_score(truth, predicted, average="macro"))
    assert report["per_class"]["unsup"]["support"] == 0  # (still shown)
    out = run("evaluate", model, tmp_path / "imdb").stdout
    assert f"macro-F1 {report['macro']['f1']:.4f} (over the 2 labels in the truth" in out
    # (the note is training's: evaluating on the train split says nothing of learning)
    assert "holds 120" not in run("evaluate", model, tmp_path / "imdb", "--split",
                                  "train").stderr
