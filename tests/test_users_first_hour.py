"""What users hit in their first hour (issue 32): each test follows the user's steps."""

from __future__ import annotations

import copy
import pickle

import pytest

import snowpy


@pytest.mark.parametrize("make", [
    lambda: snowpy.SnowClassifier(),
    lambda: snowpy.SnowClassifier(rule="winnow+perceptron"),
    lambda: snowpy.SnowClassifier(calibrate="progressive", ngrams=1),
])
def test_a_classifier_predicts_before_it_learns_as_river_does(make):
    """River's protocol predicts before the first learn_one: None, and {} for the
    probabilities (the README's online snippet once failed on its first line)."""
    clf = make()
    assert clf.predict_one("win a free prize") is None
    assert clf.predict_proba_one("win a free prize") == {}
    clf.learn_one("win a free prize", "spam")
    clf.learn_one("see you at lunch", "ham")
    assert clf.predict_one("win a free prize") in ("spam", "ham")


def test_a_network_predicts_before_it_learns_as_river_does():
    net = snowpy.Network("perceptron")
    assert net.predict_one({3: 1.0}) is None and net.predict_proba_one({3: 1.0}) == {}
    net.learn_one({3: 1.0}, "a")
    net.learn_one({4: 1.0}, "b")
    assert net.predict_one({4: 1.0}) == "b"


def test_pickle_and_deepcopy_after_every_public_method():
    """joblib, clone after warm starts and River's habits pickle estimators mid-stream
    (numba's objects once made that a TypeError)."""
    texts = ["win a free prize", "see you at lunch", "free cash now", "lunch at noon"] * 3
    labels = ["spam", "ham", "spam", "ham"] * 3
    clf = snowpy.SnowClassifier(calibrate="progressive", epochs=2)
    steps = [lambda: clf.predict_one("free"), lambda: clf.learn_one(texts[0], labels[0]),
             lambda: clf.learn_one(texts[1], labels[1]), lambda: clf.predict_one("free"),
             lambda: clf.predict_proba_one("free"), lambda: clf.partial_fit(texts, labels),
             lambda: clf.predict(texts), lambda: clf.predict_proba(texts),
             lambda: clf.decision_function(texts), lambda: clf.fit(texts, labels)]
    for step in steps:
        step()
        for other in (pickle.loads(pickle.dumps(clf)), copy.deepcopy(clf)):
            if clf.predict_one("free") is not None:
                assert other.predict_one("free") == clf.predict_one("free")
                assert other.predict_proba_one("free") == clf.predict_proba_one("free")


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


def test_predict_answers_a_pipe_when_its_input_pauses(tmp_path):
    """32.8: reading a pipe, snowpy predict waited to fill a batch of 10,000 lines; it
    now answers what it has when nothing more is ready, and keeps batching a flow."""
    import subprocess
    import sys
    from pathlib import Path

    demo = Path(__file__).resolve().parent.parent / "corpora" / "demo" / "train.tsv"
    model = tmp_path / "m.snowpy"
    subprocess.run([sys.executable, "-m", "snowpy", "train", str(demo), "-o", str(model),
                    "--epochs", "1", "-q"], check=True, timeout=120)
    process = subprocess.Popen([sys.executable, "-m", "snowpy", "predict", str(model)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        process.stdin.write("my parcel never arrived\n")
        process.stdin.flush()
        # before: no answer until 10,000 lines or the end of the input (a test that
        # would hang, so it waits 60 s at most)
        import select

        answered, _, _ = select.select([process.stdout], [], [], 60)
        assert answered, "no answer while the input pauses"
        assert process.stdout.readline().strip()
        rest, _ = process.communicate("".join(f"line {i}\n" for i in range(25_000)),
                                      timeout=120)
    finally:
        process.kill()
    assert len(rest.splitlines()) == 25_000 and process.returncode == 0


def test_a_glob_of_files_trains_and_evaluates_on_one_machine(tmp_path):
    """32.8: 'data/part-*.tsv' worked only with --workers."""
    from pathlib import Path

    from typer.testing import CliRunner

    from snowpy.cli import app

    lines = (Path(__file__).resolve().parent.parent / "corpora" / "demo" / "train.tsv"
             ).read_text().splitlines(keepends=True)
    (tmp_path / "part-1.tsv").write_text("".join(lines[:150]))
    (tmp_path / "part-2.tsv").write_text("".join(lines[150:]))
    runner = CliRunner()
    pattern = str(tmp_path / "part-*.tsv")
    result = runner.invoke(app, ["train", pattern, "-o", str(tmp_path / "m.snowpy"),
                                 "--epochs", "1", "--calibrate", "none"])
    assert result.exit_code == 0, result.output
    assert f"on {len(lines)} documents" in result.output
    result = runner.invoke(app, ["train", str(tmp_path / "none-*.tsv"), "-o",
                                 str(tmp_path / "n.snowpy")])
    assert result.exit_code == 1 and "no file matches this pattern" in result.stderr
