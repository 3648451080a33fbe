"""The command line, through typer's CliRunner and through the installed script."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest

import snowpy
from typer.testing import CliRunner

from snowpy.cli import app

ROOT = Path(__file__).resolve().parent.parent
TRAIN = str(ROOT / "corpora" / "demo" / "train.tsv")
TEST = str(ROOT / "corpora" / "demo" / "test.tsv")
runner = CliRunner()


def run(*args: str, input: str | None = None):
    return runner.invoke(app, list(args), input=input)


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "demo.snowpy"
    result = run("train", TRAIN, "-o", str(path), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["documents"] == 400 and summary["classes"] == 5 and summary["calibrated"]
    return path


def test_evaluate_predict_inspect_round(model, tmp_path):
    result = run("evaluate", str(model), TEST, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["accuracy"] >= 0.9 and report["documents"] == 120
    assert {"log_loss", "brier", "ece"} <= set(report) and report["log_loss"] < 0.5
    assert len(report["confusion"]["matrix"]) == 5
    table = run("evaluate", str(model), TEST)
    assert "accuracy" in table.stdout and "shipping" in table.stdout

    lines = "my parcel never arrived and tracking stopped\nI was charged twice this month\n"
    result = run("predict", str(model), input=lines)
    assert result.stdout.split() == ["shipping", "billing"]
    result = run("predict", str(model), "-k", "3", "--jsonl", input=lines)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows[0]["label"] == "shipping" and len(rows[0]["top"]) == 3
    assert sum(item["probability"] for item in rows[0]["top"]) <= 1.0 + 1e-6

    # trained without stored names (the default): numbered, named on demand from a corpus
    plain = run("inspect", str(model), "--top", "5")
    assert "features are numbered" in plain.stdout and "#" in plain.stdout
    assert not any(item["names"] for items in json.loads(run(
        "inspect", str(model), "--json").stdout)["top_features"].values() for item in items)
    export = tmp_path / "weights.json"
    result = run("inspect", str(model), "--top", "5", "--json", "--export", str(export),
                 "--corpus", TRAIN)
    info = json.loads(result.stdout)
    assert info["rule"] == "balanced-winnow" and len(info["classes"]) == 5
    assert all(len(v) == 5 for v in info["top_features"].values())
    assert all(item["names"] for item in info["top_features"]["billing"])
    assert "charged" in {name for item in info["top_features"]["billing"]
                         for name in item["names"]}
    weights = json.loads(export.read_text())
    assert len(weights["targets"]) == 5 and weights["targets"][0]["weights"]
    # the export lists links, not features x targets: one entry per link, with its names
    loaded = snowpy.load(model).network_
    assert sum(len(t["weights"]) for t in weights["targets"]) + 5 == loaded.n_links_
    assert weights["links"] == loaded.links == "signed"
    named = [w for t in weights["targets"] for w in t["weights"] if "names" in w]
    assert len(named) > 0.9 * (loaded.n_links_ - 5)  # named from the corpus, every link
    text_export = tmp_path / "weights.txt"
    assert run("inspect", str(model), "--export", str(text_export)).exit_code == 0
    text = text_export.read_text()
    assert text.startswith("# snowpy network: rule balanced-winnow")
    assert text.count("\n  ") == loaded.n_links_ - 5  # a line per link (biases apart)


def test_rule_parameters_on_the_command_line(tmp_path):
    path = tmp_path / "w.snowpy"
    result = run("train", TRAIN, "-o", str(path), "--rule", "winnow", "--alpha", "1.5",
                 "--beta=0.7", "--threshold-relative", "--calibrate", "none", "--epochs", "3",
                 "--json")
    assert result.exit_code == 0, result.output
    params = json.loads(result.stdout)["rule_params"]
    assert params["alpha"] == 1.5 and params["beta"] == 0.7 and params["threshold_relative"]


@pytest.mark.parametrize("args,code,fragment", [
    (["train", "missing.tsv", "-o", "x.snowpy"], 1, "missing.tsv: no such file or folder"),
    (["train", TRAIN, "-o", "x.snowpy", "--rule", "winow"], 1,
     "unknown update rule 'winow'; choose one of: aggressive, "),
    (["train", TRAIN, "-o", "x.snowpy", "--alpha", "0.5"], 1, "alpha must be > 1.0, got 0.5"),
    (["train", TRAIN, "-o", "x.snowpy", "--alfa", "2"], 1, "no such option --alfa"),
    (["train", TRAIN, "-o", "x.snowpy", "--epochs", "0"], 1, "epochs must be an integer from 1"),
    (["train", TRAIN, "-o", "x.snowpy", "--ngrams", "two"], 1, "--ngrams must look like 1-2"),
    (["train", TRAIN], 2, "Missing option"),
    (["train", "no-such-corpus", "-o", "x.snowpy"], 1, "unknown corpus 'no-such-corpus'"),
    (["evaluate", "missing.snowpy", TEST], 1, "missing.snowpy: no such model file"),
    (["frobnicate"], 2, "No such command"),
])
def test_bad_input_exit_codes_and_messages(tmp_path, args, code, fragment):
    os.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code == code
    assert fragment in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "x.snowpy").exists()


def test_malformed_corpus_and_model(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("spam\tok\nno tab here\nham\tfine\n")
    result = run("train", str(bad), "-o", str(tmp_path / "m.snowpy"))
    assert result.exit_code == 1 and "bad.tsv:2: expected 2 fields" in result.output
    result = run("train", str(bad), "-o", str(tmp_path / "m.snowpy"), "--on-error", "skip",
                 "--calibrate", "none")
    assert result.exit_code == 0 and "skipped 1 malformed record" in result.output
    garbage = tmp_path / "garbage.snowpy"
    garbage.write_bytes(b"definitely not a model")
    result = run("predict", str(garbage), input="x\n")
    assert result.exit_code == 1 and "not a readable snowpy model" in result.output


def test_plugins_and_corpus_commands():
    result = run("plugins", "--json")
    data = json.loads(result.stdout)
    rules = {r["name"]: r for r in data["rules"]}
    assert {"winnow", "perceptron", "balanced-winnow"} <= set(rules)
    assert any(p["name"] == "alpha" and p["default"] == 1.35
               for p in rules["winnow"]["parameters"])
    assert {e["name"] for e in data["extractors"]} >= {"words", "chars"}
    listing = json.loads(run("corpus", "list", "--json").stdout)
    assert "20newsgroups" in {row["name"] for row in listing}
    info = json.loads(run("corpus", "info", "trec", "--json").stdout)
    assert info["counts"] == {"train": 5452, "test": 500}
    assert run("--version").stdout.startswith("snowpy ")


def test_standard_input_corpus(tmp_path):
    text = Path(TRAIN).read_text()
    result = run("train", "-", "-o", str(tmp_path / "s.snowpy"), "--calibrate", "none",
                 "--quiet", input=text)
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def script() -> str:
    found = shutil.which("snowpy")
    if found is None:
        pytest.skip("the snowpy script is not installed")
    return found


def test_installed_script_round(script, tmp_path):
    model = tmp_path / "m.snowpy"
    steps = [[script, "train", TRAIN, "-o", str(model), "--quiet"],
             [script, "evaluate", str(model), TEST, "--json"]]
    for step in steps:
        result = subprocess.run(step, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["accuracy"] >= 0.9
    result = subprocess.run([script, "predict", str(model)], input="refund my money\n",
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and result.stdout.strip() == "billing"
    result = subprocess.run([script, "train", "nope.tsv", "-o", str(model)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    result = subprocess.run([script, "--debug", "train", "nope.tsv", "-o", str(model)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode != 0 and "Traceback" in result.stderr


def test_ctrl_c_leaves_the_model_and_saves_what_was_learned(script, tmp_path):
    rng = np.random.default_rng(0)
    words = np.array([f"w{i}" for i in range(3000)])
    with open(tmp_path / "big.tsv", "w") as out:
        for label in rng.integers(0, 8, 60000):
            out.write(f"c{label}\t{' '.join(words[rng.integers(0, 3000, 30)])}\n")
    model = tmp_path / "model.snowpy"
    model.write_bytes(b"the previous model")
    partial = tmp_path / "partial.snowpy"
    process = subprocess.Popen(
        [script, "train", str(tmp_path / "big.tsv"), "-o", str(model), "--epochs", "1000",
         "--no-early-stop", "--calibrate", "none", "--save-partial", str(partial)],
        stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in process.stderr:
        if line.strip().startswith("2 "):  # the second epoch has begun
            break
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=300)
    assert process.returncode == 130
    assert model.read_bytes() == b"the previous model"
    assert "what was learned so far is in" in rest
    from snowpy import load

    assert len(load(partial).network_.mistakes_) >= 1


def test_uncalibrated_one_epoch_model_evaluates_and_predicts(tmp_path):
    # a model saved without calibration loads as uncalibrated: evaluate reports no
    # probability metrics, predict prints scores, nothing fails
    path = tmp_path / "plain.snowpy"
    result = run("train", TRAIN, "-o", str(path), "--epochs", "1", "--calibrate", "none",
                 "--quiet")
    assert result.exit_code == 0, result.output
    result = run("evaluate", str(path), TEST, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["accuracy"] >= 0.85 and "log_loss" not in report
    result = run("predict", str(path), "-k", "2", input="my parcel never arrived\n")
    assert result.exit_code == 0 and result.stdout.split()[0] == "shipping"


def test_inference_only_model_from_the_command_line(model, tmp_path):
    slim = tmp_path / "slim.snowpy"
    result = run("train", TRAIN, "-o", str(slim), "--inference-only", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["inference_only"]
    assert slim.stat().st_size < model.stat().st_size
    full, small = (json.loads(run("evaluate", str(m), TEST, "--json").stdout)
                   for m in (model, slim))
    assert small["accuracy"] == full["accuracy"] and small["log_loss"] == full["log_loss"]
    info = json.loads(run("inspect", str(slim), "--json").stdout)
    assert info["inference_only"] and not json.loads(
        run("inspect", str(model), "--json").stdout)["inference_only"]


# ------------------------------------------------------------------ streaming
def _snowpy(*args: str) -> list[str]:
    import sys

    return [sys.executable, "-m", "snowpy", *args]


def _read_line(stream, seconds: float = 120.0) -> bytes:
    """One line from a child's output, or fail after ``seconds`` (no hang)."""
    import threading

    box: list[bytes] = []
    reader = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    assert box, f"no answer within {seconds} s"
    return box[0]


def test_predict_answers_each_line_before_the_next_is_written(model):
    """A filter: each answer comes back while the next line is not written yet, and
    matches what a batch prediction of the same lines says."""
    lines = [line.split("\t", 1)[1] for line in Path(TEST).read_text().splitlines()[:4]]
    expected = run("predict", str(model), TEST).stdout.splitlines()[:4]
    child = subprocess.Popen(_snowpy("predict", str(model), "--batch", "1"),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    try:
        answers = []
        for line in lines:
            child.stdin.write(line.encode() + b"\n")
            child.stdin.flush()
            answers.append(_read_line(child.stdout).decode().strip())
        child.stdin.close()
        assert child.wait(timeout=60) == 0
    finally:
        child.kill()
    assert answers == expected


def test_predict_into_a_closed_pipe_ends_quietly(model, tmp_path):
    """``snowpy predict ... | head -1``: the reader goes away, snowpy stops with status 0
    and says nothing."""
    many = tmp_path / "many.txt"
    many.write_text("the invoice is wrong\n" * 20000)
    child = subprocess.Popen(_snowpy("predict", str(model), str(many), "--batch", "1"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = _read_line(child.stdout)
    child.stdout.close()
    _, errors = child.communicate(timeout=120)
    assert first.strip() and child.returncode == 0
    assert errors == b""


def test_train_from_standard_input_is_a_stream(tmp_path):
    """``snowpy train -``: one pass, progressive accuracy at 1, 2, 4... and every 100,
    checkpoints every 100 documents, a model that predicts."""
    output = tmp_path / "stream.snowpy"
    result = run("train", "-", "-o", str(output), "--save-every", "100", "--report-every",
                 "150", input=Path(TRAIN).read_text())
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.stderr.splitlines()
            if line.strip() and line.split()[0].replace(",", "").isdigit()]
    assert [int(row[0]) for row in rows] == [1, 2, 4, 8, 16, 32, 64, 128, 150, 256, 300, 400]
    assert rows[0][1] == "1"  # nothing to predict the first document with: a mistake
    summary = run("train", "-", "-o", str(output), "--save-every", "100", "--json",
                  input=Path(TRAIN).read_text())
    data = json.loads(summary.stdout)
    assert data["stream"] and data["documents"] == 400 and data["checkpoints"] == 4
    assert data["calibrated"] and 0.8 < data["progressive_accuracy"] < 1.0
    clf = snowpy.load(output)
    texts = [line.split("\t", 1)[1] for line in Path(TEST).read_text().splitlines()]
    labels = [line.split("\t", 1)[0] for line in Path(TEST).read_text().splitlines()]
    assert clf.score(texts, labels) > 0.85
    assert set(clf.predict_proba_one(texts[0])) == set(clf.classes_)


@pytest.mark.parametrize("options,message", [
    (["--epochs", "3"], "a stream is learned in one pass"),
    (["--calibrate", "cv"], "needs the data twice"),
])
def test_a_stream_refuses_what_needs_the_data_twice(tmp_path, options, message):
    result = run("train", "-", "-o", str(tmp_path / "m.snowpy"), *options,
                 input=Path(TRAIN).read_text())
    assert result.exit_code == 1 and message in result.stderr
    assert not (tmp_path / "m.snowpy").exists()


def test_a_stream_learns_in_memory_that_does_not_grow_with_it(tmp_path):
    """Eight times the stream, the same peak memory: nothing of it is kept."""
    rng = np.random.default_rng(0)
    words = np.array([f"w{k}" for k in range(400)])

    def peak(n: int) -> float:
        labels = rng.integers(3, size=n)
        lines = "".join(f"c{label}\t{' '.join(rng.choice(words[label::3], 12))}\n"
                        for label in labels)
        done = subprocess.run(_snowpy("train", "-", "-o", str(tmp_path / f"{n}.snowpy"),
                                      "--json", "--no-keep-names"),
                              input=lines.encode(), capture_output=True, timeout=600)
        assert done.returncode == 0, done.stderr.decode()
        summary = json.loads(done.stdout)
        assert summary["documents"] == n and summary["progressive_accuracy"] > 0.95
        return summary["peak_memory_mb"]

    small, large = peak(10_000), peak(80_000)
    assert large < small + 20, (small, large)
