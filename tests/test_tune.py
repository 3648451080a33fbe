"""``snowpy tune`` (issue 34.2): a search within a budget, scored on a validation split
carved from the training data, resumable from a study file, with a report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import optuna

import snowpy  # noqa: E402
import snowpy.tuning as tuning  # noqa: E402
from snowpy.cli import app  # noqa: E402
from snowpy.presets import MULTILABEL  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ROWS = [line.split("\t", 1) for line in
        (ROOT / "corpora" / "demo" / "train.tsv").read_text().splitlines() if line]
TEXTS, LABELS = [t for _, t in ROWS], [label for label, _ in ROWS]


class _Clock:
    """A clock that advances a second at every reading: the budget counts readings."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 1.0
        return self.now


def test_a_search_stops_within_its_budget_and_beats_or_keeps_the_defaults(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(tuning, "time", clock)
    seen = []
    result = tuning.tune(TEXTS, LABELS, budget=40, progress=seen.append)
    assert result.trials[0]["params"]["rule"] == "passive-aggressive"  # the defaults first
    assert result.baseline_score == result.trials[0]["score"]
    complete = [t for t in result.trials if t["state"] == "complete"]
    best = max(complete, key=lambda t: t["score"])  # (the first of equals: Optuna's best)
    assert result.best_score == best["score"] and result.best_params == best["params"]
    assert 2 <= len(result.trials) < 40 and seen[-1].elapsed <= 40
    assert result.metric == "accuracy"
    assert result.classifier.network_.calibration_ is not None  # trained on all, calibrated
    assert result.classifier.get_params()["rule"] == best["params"]["rule"]
    assert result.classifier.predict(["my parcel never arrived"])[0] == "shipping"


def test_a_multilabel_search_starts_from_the_multilabel_preset(monkeypatch):
    monkeypatch.setattr(tuning, "time", _Clock())
    labels = [[y] + (["money"] if y in ("billing", "account") else []) for y in LABELS]
    result = tuning.tune(TEXTS, labels, budget=12)
    first = result.trials[0]["params"]
    assert result.metric == "micro-F1"
    assert first["rule"] == MULTILABEL["rule"] and first["epochs"] == MULTILABEL["epochs"]
    assert first["negative_thickness"] == MULTILABEL["negative_thickness"]
    assert result.classifier.network_.multilabel_


def test_a_study_file_resumes_the_search(monkeypatch, tmp_path):
    study = tmp_path / "study.log"
    monkeypatch.setattr(tuning, "time", _Clock())
    first = tuning.tune(TEXTS, LABELS, budget=12, study=str(study))
    monkeypatch.setattr(tuning, "time", _Clock())
    second = tuning.tune(TEXTS, LABELS, budget=12, study=str(study))
    assert len(second.trials) > len(first.trials)
    assert [t["params"] for t in second.trials[:len(first.trials)]] == \
        [t["params"] for t in first.trials]
    assert second.best_score == max(t["score"] for t in second.trials
                                    if t["state"] == "complete")


def test_the_command_line_reads_the_train_split_only_and_writes_a_report(tmp_path):
    for split in ("train", "test"):
        for label, word in (("ham", "lunch"), ("spam", "prize")):
            folder = tmp_path / "c" / split / label
            folder.mkdir(parents=True)
            for i in range(15):
                token = "TESTONLY" if split == "test" else "train"
                (folder / f"{i}.txt").write_text(f"{word} {token} note {i % 4}")
    model, report = tmp_path / "m.snowpy", tmp_path / "r.html"
    result = CliRunner().invoke(app, ["tune", str(tmp_path / "c"), "-o", str(model),
                                      "--budget", "4s", "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert "split train: 30 documents, 2 classes" in result.output
    assert "tuned on 30 documents in" in result.output
    tuned = snowpy.load(model)
    assert tuned.predict(["prize"])[0] == "spam"
    page = report.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<td>complete</td>" in page
    never_seen = tuned.explain("TESTONLY", features=None)["targets"][0]["features"]
    assert [f["linked"] for f in never_seen if f["name"] == "testonly"] in ([False], [])
    if tuned.idf:  # (a word never counted has no strength: it is left out of the row)
        word = tuned.featurizer_.features_one("TESTONLY")[0]
        assert not np.isin(word, tuned.featurizer_.frequencies_.to_arrays()[0]).any()
    bad = CliRunner().invoke(app, ["tune", str(tmp_path / "c"), "-o", str(model),
                                   "--budget", "soon"])
    assert bad.exit_code == 1 and "--budget 'soon'" in bad.stderr


def test_the_best_setting_is_printed_as_a_train_command_that_trains_it(tmp_path):
    # tune printed options train rejects (--conjunctions none, --skipgrams, --norm,
    # --average False, the rule without --rule) and a line per trial
    from optuna.trial import FixedTrial

    from snowpy.tuning.space import described, suggest

    params = {"rule": "winnow", "ngrams": "1-3", "char_ngrams": "3-5", "skipgrams": 1,
              "conjunctions": "2", "bits": 18, "values": "log", "idf": True, "relevance": 0.5,
              "norm": "l2",
              "thickness": 2.5, "epochs": 3, "links": "touched", "average": False,
              "winnow:alpha": 1.2345678901234, "winnow:beta": 0.8}
    options = suggest(FixedTrial(params), multilabel=False)
    command = described(params, exact=True)
    assert "none" not in command and "False" not in command and "--rule winnow" in command
    demo = ROOT / "corpora" / "demo" / "train.tsv"
    model = tmp_path / "m.snowpy"
    result = CliRunner().invoke(app, ["train", str(demo), "-o", str(model),
                                      "--calibrate", "none", *command.split()])
    assert result.exit_code == 0, result.output
    trained = snowpy.load(model).get_params()
    expected = snowpy.SnowClassifier(**options).get_params()
    assert {k: trained[k] for k in expected if k not in ("calibrate", "n_jobs")} == \
        {k: v for k, v in expected.items() if k not in ("calibrate", "n_jobs")}
    result = CliRunner().invoke(app, ["tune", str(demo), "-o", str(tmp_path / "t.snowpy"),
                                      "--budget", "3s"])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    bests = [line.split(": best ")[1].split()[0] for line in lines if line.startswith("trial")]
    assert bests and all(a != b for a, b in zip(bests, bests[1:]))  # (when the best changes)
    assert lines[-1].startswith(f"snowpy train {demo} -o MODEL --rule ")


def test_a_multilabel_search_tries_the_preset_then_the_defaults_first():
    # (docs/tune.md; the defaults' trial said a negative thickness of 1 when the rule's
    # own became 0.75)
    from snowpy.tuning.space import first_trials

    preset, defaults = first_trials(multilabel=True)[:2]
    assert [(trial["negative_thickness"], trial["epochs"], trial["links"])
            for trial in (preset, defaults)] == [(0.2, 20, "touched"), (0.75, 10, "signed")]
