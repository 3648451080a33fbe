"""Small jobs run interpreted, large ones compiled, with the same answers either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from snowpy.cli import tiering

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "corpora" / "demo" / "train.tsv"
TEST = ROOT / "corpora" / "demo" / "test.tsv"

#: Runs the command line in a fresh process and reports which heavy modules it loaded.
CLI = """
import sys
from snowpy.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
loaded = sorted(m for m in ("numba", "scipy.sparse") if m in sys.modules)
print("LOADED " + ",".join(loaded), file=sys.stderr)
sys.exit(code)
"""


def cli(*args: str, stdin: str | None = None, jit: str = "auto",
        env: dict | None = None) -> tuple[str, list[str], str]:
    """Standard output, heavy modules loaded, and standard error of ``snowpy ARGS``."""
    environment = dict(os.environ, SNOWPY_JIT=jit, **(env or {}))
    environment.pop("NUMBA_DISABLE_JIT", None)
    done = subprocess.run([sys.executable, "-c", CLI, *map(str, args)], input=stdin,
                          capture_output=True, text=True, env=environment, timeout=600)
    assert done.returncode == 0, done.stderr
    line = [x for x in done.stderr.splitlines() if x.startswith("LOADED")][-1]
    return done.stdout, [m for m in line[len("LOADED "):].split(",") if m], done.stderr


@pytest.fixture(scope="module")
def demo_model(tmp_path_factory) -> Path:
    from snowpy import SnowClassifier, save

    texts, labels = [], []
    for line in TRAIN.read_text(encoding="utf-8").splitlines():
        label, text = line.split("\t", 1)
        labels.append(label)
        texts.append(text)
    path = tmp_path_factory.mktemp("tiering") / "demo.snowpy"
    save(SnowClassifier(calibrate="cv", seed=0).fit(texts, labels), path)
    return path


def test_one_line_is_answered_without_numba_or_scipy_and_as_compiled(demo_model):
    line = "my parcel never arrived, where is my order\n"
    args = ("predict", demo_model, "--jsonl", "--top-k", "5")
    interpreted, loaded, _ = cli(*args, stdin=line)
    assert loaded == []  # neither imported: that is the 0.5 s a compiled start-up costs
    compiled, loaded, _ = cli(*args, stdin=line, jit="always")
    assert loaded == ["numba", "scipy.sparse"]
    assert json.loads(interpreted) == json.loads(compiled)  # same labels, same probabilities
    assert json.loads(interpreted)["label"] == "shipping"


def test_a_small_file_is_predicted_interpreted_and_a_stream_still_works(demo_model, tmp_path):
    texts = [line.split("\t", 1)[1] for line in TEST.read_text(encoding="utf-8").splitlines()]
    (tmp_path / "in.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    interpreted, loaded, _ = cli("predict", demo_model, tmp_path / "in.txt")
    assert "numba" not in loaded
    compiled, loaded, _ = cli("predict", demo_model, tmp_path / "in.txt", jit="always")
    assert "numba" in loaded
    assert interpreted == compiled and len(interpreted.splitlines()) == len(texts)
    piped, loaded, _ = cli("predict", demo_model, stdin="\n".join(texts) + "\n")
    assert piped == compiled and "numba" not in loaded  # a pipe that ends is read ahead


def test_a_first_training_run_on_a_small_corpus_is_interpreted(demo_model, tmp_path):
    # the README's first command on a machine with nothing compiled: no 15-20 s compile
    empty = {"NUMBA_CACHE_DIR": str(tmp_path / "empty-cache")}
    model = tmp_path / "first.snowpy"
    _, loaded, err = cli("train", TRAIN, "-o", model, "--seed", "0", env=empty)
    assert "numba" not in loaded and "compiling" not in err
    assert not (tmp_path / "empty-cache").exists()  # nothing was compiled
    # the same model as a compiled training makes (here from the suite's warm cache)
    reference = tmp_path / "compiled.snowpy"
    _, loaded, _ = cli("train", TRAIN, "-o", reference, "--seed", "0", jit="always")
    assert "numba" in loaded
    answers = [cli("predict", m, TEST, "--jsonl", "--top-k", "5")[0]
               for m in (model, reference)]
    assert answers[0] == answers[1] and answers[0].count("\n") == 120


def test_the_choice_follows_the_sizes_and_the_override(tmp_path, monkeypatch):
    asked = []
    monkeypatch.setattr("snowpy._jit.interpret", lambda: asked.append(True) or True)
    model = tmp_path / "m.snowpy"
    model.write_bytes(b"x" * 100_000)
    big_model = tmp_path / "big.snowpy"
    big_model.write_bytes(b"x" * 5_000_000)  # 0.5 s to load as Python: compile
    assert tiering.for_prediction(model, 1_000) is True
    assert tiering.for_prediction(model, 100_000) is False  # 0.5 s of text as Python
    assert tiering.for_prediction(big_model, 10) is False
    assert tiering.for_prediction(model, None) is False  # a stream of unknown length
    monkeypatch.setenv("SNOWPY_JIT", "always")
    assert tiering.for_prediction(model, 10) is False
    monkeypatch.setenv("SNOWPY_JIT", "never")
    assert tiering.for_prediction(big_model, None) is True
    monkeypatch.delenv("SNOWPY_JIT")
    corpus = tmp_path / "c.tsv"
    corpus.write_bytes(b"a\tb\n" * 20_000)  # 80 KB
    monkeypatch.setattr(tiering, "compiled_before", lambda: False)
    assert tiering.for_training(str(corpus), 10, 3) is True  # 2.4 MB of learning: ~2 s
    assert tiering.for_training(str(corpus), 100, 3) is False  # ~24 s: compiling pays
    assert tiering.for_training("-", 1, 1) is False
    monkeypatch.setattr(tiering, "compiled_before", lambda: True)
    assert tiering.for_training(str(corpus), 1, 1) is False  # compiled already: load it
    assert len(asked) == 3  # only the small cases asked to interpret


def test_too_late_to_interpret_once_kernels_are_compiled():
    import snowpy._jit as jit_mode
    from snowpy.network import engine  # noqa: F401 - imported compiled by this suite

    if jit_mode.interpreted():
        pytest.skip("this run interprets throughout (NUMBA_DISABLE_JIT=1)")
    assert jit_mode.interpret() is False and not jit_mode.interpreted()


def test_compile_warms_every_kernel_and_names_each_step():
    from typer.testing import CliRunner

    from snowpy.cli import app
    from snowpy.plugins import list_rules

    result = CliRunner().invoke(app, ["compile"])
    assert result.exit_code == 0, result.output
    steps = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert len(steps) == 3 + len(list_rules())  # every installed rule, dual ones included
    assert not [line for line in steps if "skipped" in line]
    assert "compiled in" in result.stderr


def test_compile_refuses_when_the_jit_is_off():
    environment = dict(os.environ, NUMBA_DISABLE_JIT="1")
    done = subprocess.run([sys.executable, "-m", "snowpy", "compile"], capture_output=True,
                          text=True, env=environment, timeout=120)
    assert done.returncode == 1
    assert "NUMBA_DISABLE_JIT=1 is set" in done.stderr and "Traceback" not in done.stderr


def test_a_network_told_a_dual_rule_says_which_estimator_takes_it():
    import numpy as np
    import scipy.sparse as sp

    from snowpy import Network
    from snowpy.exceptions import ConfigurationError

    with pytest.raises(ConfigurationError, match="keeps support vectors: use snowpy.DualNetwork"):
        Network(rule="kernel-perceptron").fit(sp.csr_matrix(np.eye(2)), ["a", "b"])
