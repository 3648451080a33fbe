"""The command line, through typer's CliRunner and through the installed script."""

from __future__ import annotations

import io
import json
import re
import os
import shutil
import sys
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import snowpy
from snowpy import SnowClassifier
from snowpy.cli import app
from snowpy.exceptions import ConfigurationError

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "corpora" / "demo" / "train.tsv"
TEST = ROOT / "corpora" / "demo" / "test.tsv"
runner = CliRunner()


def run(*args, input: str | None = None, **kwargs):
    return runner.invoke(app, [str(a) for a in args], input=input, **kwargs)


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "demo.snowpy"
    result = run("train", TRAIN, "-o", str(path), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["documents"] == 400 and summary["classes"] == 5 and summary["calibrated"]
    return path


#: What ``snowpy train`` learns from the demo corpus at the defaults: the model file's
#: arrays and its header but for the version fields, hashed. A change that reshapes the
#: code keeps it; a change that means to learn otherwise (a new default) sets it anew
#: and says so. (20 Newsgroups gave the same bytes before and after the engine object.
#: The default relevance, 0.25, and calibration folds weighed by their own documents
#: (Featurizer.refold) set it anew; with --relevance 0 the file differs from before them
#: in its relevance fields and its sigmoids' A and B only. The rows written in the order
#: of their features' ids set it anew: the same links, rows in another order. The
#: passive-aggressive rule's negative thickness, 0.75, set it anew. The evidence parameter
#: set it anew: its field, false, in the header's front end and classifier; the same
#: arrays, to the byte.)
DEMO_MODEL = "34dbf8e5392692c10678be7501ff15dc52a27ab982e53dbf66bb16e1af54f15f"


def test_the_demo_model_file_holds_what_it_held(model):
    import hashlib
    import zipfile

    import orjson

    archive = zipfile.ZipFile(model)
    header = orjson.loads(archive.read("header.json"))
    for versioned in ("format_version", "snowpy_version", "header_sha256"):
        header.pop(versioned)
    digest = hashlib.sha256(orjson.dumps(header, option=orjson.OPT_SORT_KEYS))
    for name in sorted(archive.namelist()):
        if name != "header.json":
            digest.update(name.encode())
            digest.update(archive.read(name))
    assert digest.hexdigest() == DEMO_MODEL


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
    assert info["rule"] == "passive-aggressive" and len(info["classes"]) == 5
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
    assert text.startswith("# snowpy network: rule passive-aggressive")
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
    (["train", TRAIN, "-o", "x.snowpy", "--rule", "balanced-winnow", "--alpha", "0.5"], 1,
     "alpha must be > 1.0, got 0.5"),
    (["train", TRAIN, "-o", "x.snowpy", "--alfa", "2"], 1, "no such option --alfa"),
    (["train", TRAIN, "-o", "x.snowpy", "--epoch", "2"], 1,  # (it named rule parameters)
     "no such option --epoch: did you mean --epochs? (rule 'passive-aggressive' takes: "),
    (["train", TRAIN, "-o", "x.snowpy", "--rule", "winnow", "--alpah", "2"], 1,
     "no such option --alpah: did you mean --alpha? (rule 'winnow' takes: "),
    (["train", TRAIN, "-o", "x.snowpy", "--epochs", "0"], 1, "epochs must be an integer from 1"),
    (["train", TRAIN, "-o", "x.snowpy", "--ngrams", "two"], 1, "--ngrams must look like 1-2"),
    (["train", TRAIN, "-o", "x.snowpy", "--ngrams", "3-1"], 1,  # (it named no option)
     "--ngrams must look like 1-2 or 3 (the shortest length first), got '3-1'"),
    (["inspect", "missing.snowpy", "--top", "-3"], 1, "-3 is not in the range x>=0"),
    (["train", TRAIN], 2, "Missing option"),
    (["train", "no-such-corpus", "-o", "x.snowpy"], 1, "unknown corpus 'no-such-corpus'"),
    (["evaluate", "missing.snowpy", TEST], 1, "missing.snowpy: no such model file"),
    (["frobnicate"], 2, "No such command"),
])
def test_bad_input_exit_codes_and_messages(tmp_path, monkeypatch, args, code, fragment):
    monkeypatch.chdir(tmp_path)  # (restored after: later tests read paths from the root)
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


def test_a_command_makes_only_itself(tmp_path):
    """A process that runs one command imports that command's module and no other's
    (snowpy train starts no server, tuner or explainer); --help lists every command."""
    ten = tmp_path / "ten.tsv"
    ten.write_text("".join(Path(TRAIN).read_text().splitlines(keepends=True)[:10]))
    code = ("import sys\nfrom snowpy.cli import app\n"
            "try:\n    app(sys.argv[1:], prog_name='snowpy')\nexcept SystemExit as end:\n"
            "    assert not end.code, end.code\n"
            "print(sorted(m for m in sys.modules if m.startswith('snowpy.cli.')))")
    done = subprocess.run([sys.executable, "-c", code, "train", str(ten), "-o",
                           str(tmp_path / "m.snowpy"), "--quiet"],
                          capture_output=True, text=True, check=True)
    from snowpy.cli import COMMANDS

    made = eval(done.stdout.strip().splitlines()[-1])
    assert "snowpy.cli.train" in made and len(COMMANDS) == 11
    assert not {f"snowpy.cli.{name}" for name in COMMANDS if name != "train"} & set(made)
    listed = run("--help").stdout
    assert all(f" {name} " in listed for name in ("train", "serve", "corpus", "experiment"))


def test_standard_input_corpus(tmp_path):
    text = Path(TRAIN).read_text()
    result = run("train", "-", "-o", str(tmp_path / "s.snowpy"), "--calibrate", "none",
                 "--quiet", input=text)
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def script() -> str:
    """The installed script, beside the interpreter running the suite (its venv's bin
    need not be on PATH): the installation is part of what is tested, never skipped."""
    beside = Path(sys.executable).with_name("snowpy")
    found = str(beside) if beside.exists() else shutil.which("snowpy")
    assert found is not None, f"no snowpy script beside {sys.executable} or on PATH"
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


def test_a_stream_learns_in_memory_that_does_not_grow_with_it(tmp_path, monkeypatch, capsys):
    """Four times the stream, the same memory held at its peak: nothing of the stream is
    kept beyond the blocks in hand (the one learned, those read ahead). Counted as the
    allocations live at the peak (numpy's arrays included), not as the process's
    resident memory, which the allocator's arenas move by tens of MB over a stream
    however little is held; both streams run long enough for the reading ahead to fill
    (a stream shorter than it reads ahead holds less at its peak). Keeping the texts
    would hold 120,000 * 260 bytes more."""
    import tracemalloc

    rng = np.random.default_rng(0)
    words = np.array([f"w{k}" for k in range(400)])

    def peak(n: int) -> float:
        labels = rng.integers(3, size=n)
        picked = words[labels[:, None] + 3 * rng.integers(133, size=(n, 48))]
        corpus = tmp_path / f"{n}.tsv"
        corpus.write_text("".join(f"c{label}\t{' '.join(row)}\n"
                                  for label, row in zip(labels, picked)))
        with corpus.open("rb") as stream:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stream))
            tracemalloc.start()
            try:  # (standard input read as it comes, not a copy of it as CliRunner gives)
                app(["train", "-", "-o", str(tmp_path / f"{n}.snowpy"), "--json",
                     "--no-keep-names"], standalone_mode=False)
                held = tracemalloc.get_traced_memory()[1] / 2**20
            finally:
                tracemalloc.stop()
        summary = json.loads(capsys.readouterr().out)
        assert summary["documents"] == n and summary["progressive_accuracy"] > 0.95
        return held

    small, large = peak(40_000), peak(160_000)
    assert large < small + 8, (small, large)


def test_error_hints_name_command_line_options(tmp_path):
    # item 15: hints said `errors='replace'`, `multilabel=True` on the command line
    # (a file is recognised as multi-label from its lines; a stream is read as it comes)
    result = run("train", "-", "--format", "fasttext", "-o", tmp_path / "m.snowpy",
                 input="__label__a more words\n__label__a __label__b some words\n")
    assert result.exit_code != 0
    assert "(read with --multilabel)" in result.stderr and "=True" not in result.stderr


def test_a_corpus_a_classifier_cannot_learn_from_is_refused(tmp_path):
    # item 5: a one-class corpus trained and predicted "ham 1.0000" for everything
    one = tmp_path / "one.tsv"
    one.write_text("ham\thello there\nham\tsee you soon\n")
    result = run("train", one, "-o", tmp_path / "m.snowpy")
    assert result.exit_code != 0
    assert "every document has the class 'ham'; a classifier needs at least two" \
        in result.stderr
    with pytest.warns(UserWarning, match="y holds one class only"):  # the library warns
        SnowClassifier(calibrate=None).fit(["hello there", "see you soon"], ["ham", "ham"])
    # a folder of files without class folders: nothing read, and said why
    flat = tmp_path / "flat"
    flat.mkdir()
    for i in range(3):
        (flat / f"{i}.txt").write_text("some words")
    result = run("train", flat, "-o", tmp_path / "m.snowpy")
    assert result.exit_code != 0
    assert "no documents found; 3 file(s) not in a class folder were not read" in result.stderr
    # files beside class folders are said, not lost silently
    for label in ("a", "b"):
        (flat / label).mkdir()
        (flat / label / "1.txt").write_text(f"{label} words")
    result = run("train", flat, "-o", tmp_path / "m.snowpy", "--epochs", "1",
                 "--calibrate", "none")
    assert result.exit_code == 0, result.output
    assert "2 documents, 2 classes" in result.stderr
    assert "note: " in result.stderr and "3 file(s) not in a class folder" in result.stderr


@pytest.mark.parametrize("rule", ["winnow", "balanced-winnow", "perceptron"])
def test_inspect_and_export_show_the_same_bias(tmp_path, rule):
    # item 7: inspect showed a bias of -1.01 where the export held -0.00998
    model = tmp_path / "m.snowpy"
    assert run("train", TRAIN, "-o", model, "--rule", rule, "--epochs", "3",
               "--calibrate", "none").exit_code == 0
    shown = json.loads(run("inspect", model, "--json").stdout)
    assert run("inspect", model, "--export", tmp_path / "links.json").exit_code == 0
    assert run("inspect", model, "--export", tmp_path / "links.txt").exit_code == 0
    exported = json.loads((tmp_path / "links.json").read_text())
    in_text = {line.split()[2]: float(line.split()[4]) for line in
               (tmp_path / "links.txt").read_text().splitlines() if line.startswith("target ")}
    assert exported["bias_strength"] == shown["bias_strength"]
    for target in exported["targets"]:
        assert target["bias"] == shown["bias_weight"][target["label"]]
        assert in_text[target["label"]] == pytest.approx(target["bias"], rel=1e-5)
    assert len({t["bias"] for t in exported["targets"]}) > 1  # learned, not all the default
    # the table says the same number (to its 4 significant digits)
    table = run("inspect", model).stdout.replace("\n", "")
    first = exported["targets"][0]
    assert f"{first['label']} (bias weight {first['bias']:.4g})" in table.replace("  ", " ") \
        or f"bias weight {first['bias']:.4g}" in table


def test_training_says_each_phase_and_compiles_nothing(tmp_path, monkeypatch):
    # items 11 and 12: the bar sat at 0/N through featurising and calibrating, and the
    # first run compiled for 11-21 s without a word; the core is compiled at install now
    from snowpy.cli.progress import TrainingReporter

    heard = []

    class Listening(TrainingReporter):
        def phase(self, name, total=None):
            heard.append((name, total))
            super().phase(name, total)

    monkeypatch.setattr("snowpy.cli.train.TrainingReporter", Listening)
    result = run("train", TRAIN, "-o", tmp_path / "m.snowpy", "--epochs", "2")
    assert result.exit_code == 0, result.output
    # (a clean label<TAB>text file is featurised as it is read: no phase of its own)
    assert heard == [("calibration fold 1 of 3", None),
                     ("calibration fold 2 of 3", None), ("calibration fold 3 of 3", None),
                     ("calibrating", None), ("training", 800), ("saving", None)]
    assert "compiling" not in result.stderr
    heard.clear()  # a corpus the Python reader reads (a folder here) is featurised after
    texts = tmp_path / "texts"
    for label in ("a", "b"):
        (texts / label).mkdir(parents=True)
        for i in range(5):
            (texts / label / f"{i}.txt").write_text(f"{label} words number {i}")
    result = run("train", texts, "-o", tmp_path / "m.snowpy", "--epochs", "2")
    assert result.exit_code == 0, result.output
    assert heard[0] == ("featurising", None) and heard[-1] == ("saving", None)


def test_the_training_rate_is_over_a_recent_window(monkeypatch):
    # item 11: the rate was since t = 0 (28 s of reading and featurising included)
    from snowpy.cli import progress

    clock = iter([0.0, 100.0, 100.5, 101.0, 101.5, 110.0, 112.0])
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    reporter = progress.TrainingReporter.__new__(progress.TrainingReporter)
    reporter.recent = progress.deque()
    # (the reporter's rate, private: what it prints is tested by the command's tests)
    reporter._rate(0)  # t = 0: the start; 100 s of reading and featurising follow
    rates = [reporter._rate(done) for done in (1000, 2000, 3000, 4000)]  # t = 100..101.5
    assert rates[-1] == "2,000 docs/s"  # 3000 in the last 1.5 s; since t = 0: 39 docs/s
    reporter._rate(4200)  # t = 110
    assert reporter._rate(5200) == "500 docs/s"  # t = 112: 1000 in the last 2 s


def test_memory_exhaustion_is_one_line():
    import typer

    from snowpy.cli.common import handles_errors

    small = typer.Typer()

    @small.command()
    @handles_errors
    def grow() -> None:
        raise MemoryError

    result = runner.invoke(small, [])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "out of memory" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_training_that_cannot_fit_is_refused_before_reading(tmp_path, monkeypatch):
    from snowpy.cli import memory

    corpus = tmp_path / "c.tsv"
    corpus.write_text("a\tsome words here\n" * 6000)  # 108,000 bytes
    monkeypatch.setattr(memory, "available_bytes", lambda: 30_000_000)
    wide = snowpy.SnowClassifier(ngrams=(1, 16), char_ngrams=(1, 32))
    # 108,000 / 6 words x 16 orders + 108,000 characters x 32 orders, 12 bytes each
    assert memory.estimate_bytes(108_000, wide) == (18_000 * 16 + 108_000 * 32) * 12
    result = run("train", corpus, "-o", tmp_path / "m.snowpy", "--ngrams", "1-16",
                 "--char-ngrams", "1-32")
    assert result.exit_code == 1 and "need up to 44.9 MB" in result.stderr
    assert "this machine has 30.0 MB free" in result.stderr and "Traceback" not in result.stderr
    assert not result.stderr.startswith("read ")  # (refused before the corpus is read)
    assert memory.check_memory(str(corpus), snowpy.SnowClassifier(ngrams=(1, 2))) is None
    monkeypatch.setattr(memory, "available_bytes", lambda: 600_000)
    said = memory.check_memory(str(corpus), snowpy.SnowClassifier(ngrams=(1, 2)))
    assert said is not None and said.startswith("warning:")


def test_absurd_values_are_refused_before_anything_is_written(fresh_model):
    # 15.1: --theta 1e308 gave NaN calibration, and the good model was replaced
    before = fresh_model.read_bytes()
    result = run("train", TRAIN, "-o", fresh_model, "--rule", "perceptron", "--theta", "1e308")
    assert result.exit_code == 1
    assert "theta=1e+308 is beyond the largest weight magnitude kept" in result.stderr
    assert fresh_model.read_bytes() == before
    with pytest.raises(ConfigurationError, match="beyond the largest"):
        snowpy.Network("winnow", theta=1e40).fit(np.eye(3), [0, 1, 0])


def test_output_paths_that_would_destroy_something_are_refused(fresh_model, tmp_path):
    # 15.2: -o the corpus, a device, a symbolic link, a folder
    corpus = tmp_path / "c.tsv"
    corpus.write_text(TRAIN.read_text())
    cases = [(corpus, "is the corpus"), (Path(os.devnull), "not a regular file"),
             (tmp_path, "a folder, not a model file")]
    link = tmp_path / "link.snowpy"
    link.symlink_to(fresh_model)
    cases.append((link, "a symbolic link"))
    for output, message in cases:
        result = run("train", corpus, "-o", output, "--epochs", "1")
        assert result.exit_code == 1 and message in result.stderr, (output, result.output)
    assert corpus.read_text() == TRAIN.read_text() and link.is_symlink()
    assert run("train", corpus, "-o", link, "--epochs", "1", "--calibrate", "none",
               "--force").exit_code == 0
    assert not link.is_symlink() and snowpy.load(link) is not None


def test_an_output_no_file_can_be_written_to_is_refused_before_training(tmp_path):
    """-o where no file can be written was found after training (66 s of 20 Newsgroups),
    and the error named the save's hidden temporary file (a new user's report): it is
    refused first, in one line naming -o; the save's own errors name the model's path."""
    corpus = tmp_path / "c.tsv"
    corpus.write_text(TRAIN.read_text())
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    cases = [(corpus / "m.snowpy", f"-o {corpus / 'm.snowpy'}: {corpus} is a file, not a "
                                   "folder"),
             (corpus / "deeper" / "m.snowpy", f"{corpus} is a file, not a folder")]
    if os.geteuid() != 0:  # (root writes in any folder)
        cases.append((locked / "m.snowpy", f"no file can be written in {locked}"))
    for output, message in cases:
        result = run("train", corpus, "-o", output)
        assert result.exit_code == 1, result.output
        assert result.stderr.strip() == f"snowpy: error: {message}" or \
            message in result.stderr.splitlines()[-1], result.stderr
        assert "learned" not in result.output
    assert run("train", corpus, "-o", tmp_path / "new" / "m.snowpy", "--epochs", "1",
               "--calibrate", "none").exit_code == 0  # (the save makes missing folders)
    model = snowpy.SnowClassifier(calibrate=None).fit(["a b", "c d"], ["x", "y"])
    for place in (tmp_path / "new", corpus / "m.snowpy"):  # (a folder; under a file)
        with pytest.raises(OSError) as raised:
            model.save(place)
        assert raised.value.filename == str(place) and ".tmp" not in str(raised.value)


def test_bias_takes_true_and_false_as_its_help_says(tmp_path):
    """--bias's help said "true, false or its strength" and --bias false was refused as not
    a number (a new user's report): true is a strength of 1, false none."""
    models = {}
    for value in ("true", "1", "false", "none"):
        models[value] = tmp_path / f"{value}.snowpy"
        result = run("train", TRAIN, "-o", models[value], "--bias", value, "--epochs", "1",
                     "--calibrate", "none")
        assert result.exit_code == 0, result.output
    assert models["true"].read_bytes() == models["1"].read_bytes()
    assert models["false"].read_bytes() == models["none"].read_bytes()
    assert models["true"].read_bytes() != models["false"].read_bytes()


@pytest.mark.parametrize("option,value,message", [
    ("--seed", "-1", "seed must be None or an integer from 0 to 4294967295"),
    ("--calibrate", "cv:99999999999", "'cv:K' or 'holdout:K' (K folds from 2 to 1000)"),
    ("--eligibility", "percent:0", "'percent:P' with 0 < P <= 100 (SNoW -e), got 'percent:0'"),
    ("--epochs", "99999999999999999999", "epochs must be an integer from 1 to 1,000,000"),
    ("--theta", "nan", "theta"),
])
def test_absurd_options_fail_in_one_line_before_training(tmp_path, option, value, message):
    # 15.9: a MemoryError traceback, or a failure only when saving after the training
    result = run("train", TRAIN, "-o", tmp_path / "m.snowpy", option, value)
    assert result.exit_code in (1, 2) and message in result.output
    assert "Traceback" not in result.output and not (tmp_path / "m.snowpy").exists()


def test_smaller_things_a_user_sees(tmp_path):
    """32.8: a closed pipe ends a command with status 0; calibrate="none" (the command
    line's spelling) works in Python; counts read as counts."""
    import subprocess
    import sys
    from pathlib import Path

    listing = subprocess.run(f"{sys.executable} -m snowpy plugins | head -1", shell=True,
                             capture_output=True, text=True, executable="/bin/bash")
    assert listing.returncode == 0
    piped = subprocess.run(["bash", "-c", f"set -o pipefail; {sys.executable} -m snowpy "
                            "plugins | head -1 > /dev/null"], capture_output=True, text=True)
    assert piped.returncode == 0, piped.stderr
    clf = snowpy.SnowClassifier(calibrate="none").fit(["a b", "c d"], ["x", "y"])
    assert clf.predict(["a"]).tolist() == ["x"] and not hasattr(clf, "predict_proba")
    from typer.testing import CliRunner

    from snowpy.cli import app

    demo = Path(__file__).resolve().parent.parent / "corpora" / "demo" / "train.tsv"
    result = CliRunner().invoke(app, ["train", str(demo), "-o", str(tmp_path / "m.snowpy"),
                                      "--epochs", "1", "--calibrate", "none"])
    assert "400 documents, 5 classes, 1 epoch, " in result.output


def test_ngrams_2_says_it_means_bigrams_only_and_the_cli_says_it_in_one_line(tmp_path):
    from pathlib import Path

    from typer.testing import CliRunner

    from snowpy.cli import app

    with pytest.warns(UserWarning, match=r"ngrams=2 means 2-grams only; .* ngrams=\(1, 2\)"):
        snowpy.Featurizer(ngrams=2).transform(["a b c"])
    demo = Path(__file__).resolve().parent.parent / "corpora" / "demo" / "train.tsv"
    result = CliRunner().invoke(app, ["train", str(demo), "-o", str(tmp_path / "m.snowpy"),
                                      "--epochs", "1", "--ngrams", "2"])
    assert result.exit_code == 0
    said = [line for line in result.stderr.splitlines() if "2-grams" in line]
    assert said == ["warning: --ngrams 2 means 2-grams only; for every length up to 2, "
                    "give --ngrams 1-2"]
    assert "featurizer.py" not in result.stderr  # (no source line)


def test_ctrl_c_in_the_calibration_folds_says_nothing_could_be_saved(tmp_path, monkeypatch):
    # --save-partial saved nothing there (most of a default 20 Newsgroups run), silently
    from snowpy.cli.progress import TrainingReporter

    def interrupted(self, name, total=None):
        if name.startswith("calibration fold 2"):
            raise KeyboardInterrupt

    monkeypatch.setattr(TrainingReporter, "phase", interrupted)
    partial = tmp_path / "partial.snowpy"
    result = run("train", TRAIN, "-o", str(tmp_path / "m.snowpy"), "--save-partial",
                 str(partial))
    assert result.exit_code == 130
    assert f"nothing learned to save to {partial}" in result.output.replace("\n", " ")
    assert not partial.exists() and not (tmp_path / "m.snowpy").exists()


def test_a_relevance_given_keeps_a_winnows_strengths_as_the_other_strength_options_do(
        tmp_path):
    """--relevance is a strength option: a Winnow given it keeps the default TF-IDF front
    end (no note), and the relevance reaches the model."""
    result = run("train", TRAIN, "-o", str(tmp_path / "m.snowpy"), "--rule",
                 "balanced-winnow", "--relevance", "0.5", "--epochs", "1")
    assert result.exit_code == 0, result.output
    assert "learns on SNoW's front end" not in result.output
    front = snowpy.load(tmp_path / "m.snowpy").featurizer_
    assert (front.idf, front.relevance, front.values) == (True, 0.5, "log")
    assert front.frequencies_.factors_of(front.frequencies_.to_arrays()[0]).max() > 1


def test_the_training_tables_say_one_thing_per_word_and_an_early_stop_is_explained(tmp_path):
    # "mistakes" was per row in one table and cumulative in the stream's; the header ran
    # together ("online acc. since last epoch acc."); an early stop went unexplained
    result = run("train", TRAIN, "-o", str(tmp_path / "m.snowpy"), "--rule", "balanced-winnow")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "note: balanced-winnow learns on SNoW's front end: trained with --values binary " \
        "--no-idf --no-l2 --bias 1 (a strength option given keeps the defaults)" in lines
    assert "epoch    examples   mistakes  acc. since last  acc. this epoch" in lines
    rows = [line.split() for line in lines if line[:5].strip().isdigit()]
    assert rows[-1][:3] == ["4", "400", "0"]
    assert "stopped after epoch 4 of 10: no update in it (--no-early-stop runs every epoch)" \
        in lines
    rows_in = open(TRAIN).read().splitlines()[:4]
    stream = run("train", "-", "-o", str(tmp_path / "s.snowpy"),
                 input="\n".join(rows_in) + "\n")
    table = [line.split() for line in stream.output.splitlines()
             if line.strip()[:1].isdigit()]
    mistakes = [int(row[1]) for row in table]
    examples = [int(row[0]) for row in table]
    assert examples == [1, 2, 4]
    # each row's mistakes are its own: they add up to the stream's, row by row
    assert [round((1 - float(row[3])) * e) for row, e in zip(table, examples)] == \
        [sum(mistakes[:i + 1]) for i in range(len(mistakes))]


def test_the_naming_pass_of_keep_names_is_a_phase_of_its_own():
    import snowpy

    class Phases(snowpy.Progress):
        def __init__(self):
            self.names = []

        def phase(self, name, total=None):
            self.names.append(name)

    rows = [line.split("\t", 1) for line in open(TRAIN).read().splitlines()]
    seen = Phases()
    snowpy.SnowClassifier(keep_names=True, calibrate=None).fit(
        [t for _, t in rows], [label for label, _ in rows], progress=seen)
    assert seen.names == ["featurising", "training", "naming the features kept"]


def test_tables_at_80_columns_cut_no_name_a_user_must_type(monkeypatch, tmp_path):
    # `reuters21578-mod…` and `--negative-thick…` in a pipe or an 80-column terminal; the
    # corpus list's table was cut at 80 columns when the corpora's files were found (it
    # printed their paths)
    from snowpy.cli.plugins import installed

    monkeypatch.setenv("COLUMNS", "80")
    (tmp_path / "imdb_large_movie_review.tar.gz").write_bytes(b"")
    monkeypatch.setenv("SNOWPY_DATA", str(tmp_path))
    plugins = run("plugins")
    listed = run("corpus", "list")
    assert plugins.exit_code == 0 and listed.exit_code == 0
    for output in (plugins.stdout, listed.stdout):
        lines = output.splitlines()
        assert "…" not in output and max(map(len, lines)) <= 80
        assert all(line.rstrip()[-1] in "│┃┓┩┤┘┛┐" for line in lines if line.startswith(
            ("│", "┃", "┏", "┡", "├", "└")))
    shown = set(re.findall(r"[│┃] ([\w+.-]+) ", plugins.stdout + listed.stdout)) | set(
        re.findall(r"(--[\w-]+)", plugins.stdout))
    data = installed()
    for records in data.values():
        for record in records:
            assert record["name"] in shown, record["name"]
            for param in record["parameters"]:
                assert "--" + param["name"].replace("_", "-") in shown


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux process setting")
def test_the_command_line_and_what_it_starts_use_no_transparent_huge_pages():
    """The command line turns transparent huge pages off for its process, and the
    processes it starts (a local cluster's workers) inherit it; importing the library,
    or a command called in another program's process, leaves that process as it is."""
    asks = "import ctypes; print(ctypes.CDLL(None).prctl(42, 0, 0, 0, 0))"  # PR_GET_THP_DISABLE
    code = ("import subprocess, sys, snowpy; " + asks + "; "
            "from snowpy.cli.common import settle_memory, state; settle_memory(); " + asks +
            "; state.owns_process = True; settle_memory(); " + asks + "; "
            f"print(subprocess.run([sys.executable, '-c', {asks!r}], capture_output=True, "
            "text=True).stdout.strip())")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "0", "1", "1"]


def test_each_command_is_summed_up_in_one_sentence_in_the_list_of_commands():
    # explain, serve, forget and tune filled four to five lines each of `snowpy --help`
    import typer

    for name, command in typer.main.get_command(app).commands.items():
        summary = (command.help or "").strip().split("\n\n")[0]
        assert summary.endswith(".") and "\n" not in summary, name
    listed = [line.strip("│ ") for line in run("--help", env={"COLUMNS": "120"}).stdout
              .splitlines()]
    explain = listed.index("explain     Explain MODEL's answer for each document, feature by "
                           "feature.")
    assert listed[explain + 1].startswith("serve ")


def test_help_and_output_say_what_each_command_does(model, tmp_path, monkeypatch):
    # evaluate's and predict's --workers help said "train", -q had no help, inspect's
    # titles broke at 80 columns, `corpus info` showed `present: None`, --plot named two of
    # the three figures it writes, and without Dask --workers started talking first
    import typer

    def helped(command: str) -> dict[str, str]:
        """Each option of ``command`` and its help."""
        params = typer.main.get_command(app).commands[command].params
        return {option: getattr(param, "help", None) or "" for param in params
                for option in param.opts}

    for command in ("evaluate", "predict", "train"):
        assert helped(command)["--workers"].startswith("run on a Dask LocalCluster")
        shown = " ".join(run(command, "--help", env={"COLUMNS": "200"}).stdout.split())
        assert "(pip install '.[dask]' in snowpy's source folder)" in shown  # (as printed)
    for command in ("train", "tune"):
        assert helped(command)["-q"].startswith("no progress and no notes")
    plot = helped("evaluate")["--plot"]
    assert all(name in plot for name in ("confusion.png", "reliability.png", "coverage.png"))
    wide = run("inspect", model, "--top", "2", env={"COLUMNS": "80"}).stdout.splitlines()
    assert "technical (bias weight" in "\n".join(wide)
    assert all(line.endswith(")") for line in wide if "(bias weight" in line)
    monkeypatch.setenv("SNOWPY_DATA", str(tmp_path))
    info = run("corpus", "info", "trec").stdout
    assert "present: absent: put its file in one of data_dirs" in info and "None" not in \
        info.split("present:")[1].splitlines()[0]
    monkeypatch.setitem(sys.modules, "distributed", None)  # (as if Dask were not there)
    for command in (("train", TRAIN, "-o", tmp_path / "d.snowpy"), ("evaluate", model, TEST)):
        result = run(*command, "--workers", "2")
        assert result.exit_code == 1 and result.output == (
            "snowpy: error: --workers needs Dask (dask.distributed): pip install '.[dask]' "
            "in snowpy's source folder\n")


def test_forget_writes_the_model_without_the_label_atomically(model, tmp_path):
    # a label learned by mistake could not be taken out of a model file
    import warnings

    path = tmp_path / "m.snowpy"
    clf = snowpy.load(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.partial_fit(["cancel my plan"], ["biling"])
    clf.save(path)
    result = run("forget", path, "biling")
    assert result.exit_code == 0, result.output
    assert result.stdout == (f"forgot biling: {path} predicts 5 labels (account, billing, "
                             "feedback, shipping, technical)\n")
    assert snowpy.load(path).classes_.tolist() == snowpy.load(model).classes_.tolist()
    written = path.read_bytes()
    refused = run("forget", path, "biling")
    assert refused.exit_code == 1 and refused.stderr == (
        "snowpy: error: unknown label 'biling'; the model knows ['account', 'billing', "
        "'feedback', 'shipping', 'technical']\n")
    assert path.read_bytes() == written  # (refused: the file as it was)
    other = tmp_path / "four.snowpy"
    assert run("forget", path, "billing", "-o", other).exit_code == 0
    assert snowpy.load(other).classes_.tolist() == ["account", "feedback", "shipping",
                                                    "technical"]
    assert path.read_bytes() == written and not list(tmp_path.glob(".*.tmp"))
    link = tmp_path / "link.snowpy"  # (said "-o link.snowpy", an option not given)
    link.symlink_to(path)
    linked = run("forget", link, "billing")
    assert linked.exit_code == 1 and linked.stderr.startswith(
        f"snowpy: error: MODEL {link}: a symbolic link (to {path})")


def test_a_corpus_of_three_documents_warns_in_calibrations_words(tmp_path):
    # a calibration fold that learned one class said "y holds one class only ('spam'):
    # every prediction will be it until partial_fit meets another", of a fold the user
    # never made, in Python's words
    corpus = tmp_path / "three.tsv"
    corpus.write_text("spam\tcheap pills now\nham\tmeeting at noon\nspam\twin cash now\n")
    result = run("train", corpus, "-o", tmp_path / "m.snowpy")
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warned == ["warning: 3 documents are too few to calibrate on 3 folds: a fold "
                      "learned from one class only ('spam'), and the probabilities say "
                      "little; train on more documents, or with --calibrate none"]


def test_training_goes_on_from_a_saved_model_as_a_stream_of_its_settings(tmp_path):
    # Vowpal Wabbit's -i: there was no command-line way to go on training a saved model
    from snowpy.corpora import Document
    from snowpy.training import learn_stream

    rows = [line.split("\t", 1) for line in TRAIN.read_text().splitlines()]
    first, later = tmp_path / "first.tsv", tmp_path / "later.tsv"
    first.write_text("".join(f"{y}\t{t}\n" for y, t in rows[:300]))
    later.write_text("".join(f"{y}\t{t}\n" for y, t in rows[300:] if y != "shipping"))
    old, new = tmp_path / "old.snowpy", tmp_path / "new.snowpy"
    assert run("train", first, "-o", old, "--rule", "winnow", "-q").exit_code == 0
    result = run("train", later, "--from", old, "-o", new, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["documents"] == 100 - sum(y == "shipping" for y, _ in
                                                               rows[300:])
    # what the library does: the saved model learns the stream, then its discard
    expected = snowpy.load(old)
    learn_stream(expected, [Document(t, y, "") for y, t in
                            (line.split("\t", 1) for line in later.read_text().splitlines())])
    expected.network_.prune()
    texts = [line.split("\t", 1)[1] for line in TEST.read_text().splitlines()]
    continued = snowpy.load(new)
    assert continued.rule == "winnow" and continued.classes_.tolist() == \
        expected.classes_.tolist()
    assert "shipping" in continued.classes_  # (learned from the first file only)
    learned = len(later.read_text().splitlines())
    seen = snowpy.load(old).network_.n_examples_seen_ + learned
    assert continued.network_.n_examples_seen_ == seen
    np.testing.assert_array_equal(continued.predict_proba(texts), expected.predict_proba(texts))
    # sigmoids fitted on held-out folds (the default) are kept as they are
    np.testing.assert_array_equal(continued.network_.calibration_.a,
                                  snowpy.load(old).network_.calibration_.a)
    # -o may name the model itself: it is written over, atomically
    assert run("train", later, "--from", new, "-o", new, "-q").exit_code == 0
    assert snowpy.load(new).network_.n_examples_seen_ == seen + learned


def test_training_from_a_model_refuses_what_the_model_already_says(tmp_path):
    old, new = tmp_path / "old.snowpy", tmp_path / "new.snowpy"
    assert run("train", TRAIN, "-o", old, "-q").exit_code == 0
    slim = tmp_path / "slim.snowpy"
    assert run("train", TRAIN, "-o", slim, "-q", "--inference-only").exit_code == 0
    network = tmp_path / "network.snowpy"
    snowpy.Network().fit(np.eye(4), ["a", "b", "a", "b"]).save(network)
    for given, said in (
            (("--from", old, "--epochs", "3"), "--epochs does not go with --from: training "
             f"goes on with {old}'s own settings, one pass as a stream"),
            (("--from", old, "--ngrams", "1"), "--ngrams does not go with --from"),
            (("--from", old, "--C", "2"), "--C does not go with --from"),
            (("--from", old, "--no-stream"), "--no-stream does not go with --from"),
            (("--from", old, "--workers", "2"), "--workers does not go with --from"),
            (("--from", slim), f"--from {slim} is an inference-only model file: it keeps no "
             "training state to continue from"),
            (("--from", network), f"--from {network} holds a network without a front end"),
            (("--from", tmp_path / "none.snowpy"), "none.snowpy: no such model file")):
        result = run("train", TEST, "-o", new, *given)
        assert result.exit_code == 1 and len(result.output.splitlines()) == 1, result.output
        assert said in result.output and not new.exists()
