"""Nothing lost, nothing silently wrong (issue 15): each test reproduces a path by which
a model or documents were lost, and asserts the refusal or the report that replaced it."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import orjson
import pytest
from typer.testing import CliRunner

import snowpy
from snowpy import corpora
from snowpy.cli import app
from snowpy.corpora.documents import CorpusError, Problems
from snowpy.exceptions import ConfigurationError, ModelFileError

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "corpora" / "demo" / "train.tsv"
runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def model(tmp_path) -> Path:
    path = tmp_path / "good.snowpy"
    assert run("train", TRAIN, "-o", path, "--epochs", "2", "--calibrate", "none").exit_code == 0
    return path


def test_an_infinite_thickness_saves_and_loads(tmp_path):
    # 15.1: --thickness inf was saved as null, and the file did not load
    X, y = np.eye(4), [0, 1, 0, 1]
    net = snowpy.Network("perceptron", thickness=float("inf")).fit(X, y)
    loaded = snowpy.load(net.save(tmp_path / "m.snowpy"))
    assert loaded.rule_params_["thickness"] == float("inf")
    np.testing.assert_array_equal(loaded.target_scores(X), net.target_scores(X))


def test_absurd_values_are_refused_before_anything_is_written(model):
    # 15.1: --theta 1e308 gave NaN calibration, and the good model was replaced
    before = model.read_bytes()
    result = run("train", TRAIN, "-o", model, "--rule", "perceptron", "--theta", "1e308")
    assert result.exit_code == 1
    assert "theta=1e+308 is beyond the largest weight magnitude kept" in result.stderr
    assert model.read_bytes() == before
    with pytest.raises(ConfigurationError, match="beyond the largest"):
        snowpy.Network("winnow", theta=1e40).fit(np.eye(3), [0, 1, 0])


def test_a_file_that_would_not_load_never_replaces_a_model(model, monkeypatch):
    # 15.1: check before the rename
    import snowpy.model_file as model_file

    before = model.read_bytes()
    monkeypatch.setattr(model_file, "read_model", lambda *a, **k: (_ for _ in ()).throw(
        ModelFileError("the new file does not load")))
    classifier = snowpy.load(model)
    with pytest.raises(ModelFileError, match="does not load"):
        classifier.save(model)
    assert model.read_bytes() == before
    assert not [p for p in model.parent.iterdir() if p.name.endswith(".tmp")]


def test_output_paths_that_would_destroy_something_are_refused(model, tmp_path):
    # 15.2: -o the corpus, a device, a symbolic link, a folder
    corpus = tmp_path / "c.tsv"
    corpus.write_text(TRAIN.read_text())
    cases = [(corpus, "is the corpus"), (Path(os.devnull), "not a regular file"),
             (tmp_path, "a folder, not a model file")]
    link = tmp_path / "link.snowpy"
    link.symlink_to(model)
    cases.append((link, "a symbolic link"))
    for output, message in cases:
        result = run("train", corpus, "-o", output, "--epochs", "1")
        assert result.exit_code == 1 and message in result.stderr, (output, result.output)
    assert corpus.read_text() == TRAIN.read_text() and link.is_symlink()
    assert run("train", corpus, "-o", link, "--epochs", "1", "--calibrate", "none",
               "--force").exit_code == 0
    assert not link.is_symlink() and snowpy.load(link) is not None


def test_an_altered_header_is_detected(model, tmp_path):
    # 15.7: only the arrays had checksums; labels or theta could be edited undetected
    with zipfile.ZipFile(model) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    header = orjson.loads(members["header.json"])
    header["network"]["labels"][0] = "tampered"
    members["header.json"] = orjson.dumps(header)
    edited = tmp_path / "edited.snowpy"
    with zipfile.ZipFile(edited, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    with pytest.raises(ModelFileError, match="header was altered after saving"):
        snowpy.load(edited)
    result = runner.invoke(app, ["predict", str(edited)], input="hello\n")
    assert result.exit_code == 1 and "altered" in result.stderr


def test_documents_are_learned_or_reported(tmp_path):
    # 15.3: a byte-order mark made a class, a JSON Lines record without text trained as
    # an empty document, files beside subfolders vanished, '..' dropped classes
    bom = tmp_path / "bom.tsv"
    bom.write_bytes(b"\xef\xbb\xbfham\thello there\nspam\twin now\n")
    assert {d.label for d in corpora.read(bom)} == {"ham", "spam"}
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text('{"label": "a"}\n{"label": "b", "text": "hi"}\n')
    problems = Problems("skip")
    assert [d.text for d in corpora.read(jsonl, problems=problems)] == ["hi"]
    assert problems.skipped == 1 and "no field 'text'" in problems.messages[0]
    with pytest.raises(CorpusError, match="no field 'text'"):
        list(corpora.read(jsonl))
    folder = tmp_path / "nested"
    (folder / "spam" / "old").mkdir(parents=True)
    (folder / "ham").mkdir()
    (folder / "spam" / "1.txt").write_text("win")
    (folder / "spam" / "old" / "2.txt").write_text("prize")
    (folder / "ham" / "3.txt").write_text("hello")
    problems = Problems()
    labels = sorted(d.label for d in corpora.read(folder, problems=problems))
    assert labels == ["ham", "spam", "spam"]  # (a class folder keeps its subfolder: 32.8)
    assert problems.notes == ["1 class folder(s) hold subfolders, whose files belong to the "
                              "class (first: spam)"]
    archive = tmp_path / "dots.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name in ("corpus/ham/1.txt", "corpus/../spam/2.txt"):
            data = b"some words"
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with pytest.raises(CorpusError, match="leaves the archive"):
        list(corpora.read(archive))


def test_an_unreadable_folder_is_an_error_not_a_missing_class(tmp_path, monkeypatch):
    # 15.3: an unreadable class folder was skipped without a word (a one-class model)
    for label in ("ham", "spam"):
        (tmp_path / label).mkdir()
        (tmp_path / label / "1.txt").write_text(f"{label} words")
    real = os.scandir

    def scandir(path="."):
        if str(path).endswith("spam"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(CorpusError, match="spam: cannot be read"):
        list(corpora.read(tmp_path))


def test_predict_refuses_a_batch_below_one(model):
    result = runner.invoke(app, ["predict", str(model), "--batch", "-1"], input="hello\n")
    assert result.exit_code == 2 and "at least 1" in result.output


def test_a_memory_mapped_load_racing_saves_reads_one_model_whole(tmp_path, monkeypatch):
    # 15.4: the loader checked the file, then reopened it by name: a save landing in
    # between gave weights of the new file at the old file's offsets (4 in 1,060 loads),
    # and spurious errors
    import threading

    import snowpy.model_file as model_file

    monkeypatch.setattr(model_file, "MMAP_MIN_BYTES", 0)  # map every array
    rng = np.random.default_rng(0)
    X = (rng.random((300, 400)) < 0.05).astype(float)
    nets = [snowpy.Network(rule, epochs=3).fit(X, rng.integers(0, 4, 300))
            for rule in ("perceptron", "balanced-winnow")]
    expected = [net.target_scores(X) for net in nets]
    path = tmp_path / "served.snowpy"
    nets[0].save(path)
    stop = threading.Event()

    def saver():
        i = 0
        while not stop.is_set():
            nets[i % 2].save(path)
            i += 1

    thread = threading.Thread(target=saver)
    thread.start()
    try:
        for _ in range(150):
            loaded = snowpy.load(path, mmap=True)
            scores = loaded.target_scores(X)
            assert any(np.array_equal(scores, e) for e in expected)
    finally:
        stop.set()
        thread.join()


def test_small_arrays_of_a_mapped_model_are_in_memory(tmp_path):
    # 15.5: a file rewritten in place killed a serving process (SIGBUS); the small arrays
    # (calibration, labels, maps) are read, only large weight tables are mapped
    texts = [line.split("\t", 1)[1] for line in TRAIN.read_text().splitlines() if line]
    labels = [line.split("\t", 1)[0] for line in TRAIN.read_text().splitlines() if line]
    clf = snowpy.SnowClassifier(calibrate="cv").fit(texts, labels)
    header, arrays = snowpy.model_file.read_model(clf.save(tmp_path / "m.snowpy"), mmap=True)
    for name, array in arrays.items():
        assert isinstance(array, np.memmap) == (array.nbytes >= (1 << 20)), name


@pytest.mark.parametrize("option,value,message", [
    ("--seed", "-1", "seed must be None or an integer from 0 to 4294967295"),
    ("--calibration-folds", "99999999999", "calibration_folds must be an integer from 2"),
    ("--epochs", "99999999999999999999", "epochs must be an integer from 1 to 1,000,000"),
    ("--theta", "nan", "theta"),
])
def test_absurd_options_fail_in_one_line_before_training(tmp_path, option, value, message):
    # 15.9: a MemoryError traceback, or a failure only when saving after the training
    result = run("train", TRAIN, "-o", tmp_path / "m.snowpy", option, value)
    assert result.exit_code in (1, 2) and message in result.output
    assert "Traceback" not in result.output and not (tmp_path / "m.snowpy").exists()


@pytest.mark.parametrize("field,value", [
    ("labels", "xy"), ("labels", ["x", "x"]), ("n_features", "many"), ("rule_params", [1, 2]),
    ("options", None), ("stats", "x"), ("seen", "x"), (None, "classifier"),
    (None, "featurizer"),
])
def test_headers_with_wrong_types_fail_in_one_line(tmp_path, field, value):
    # 15.9: model headers with wrong types (9 variants) and duplicated labels gave
    # tracebacks; a hostile editor can recompute the header checksum, so the fields are
    # checked too
    from snowpy.model_file import _header_digest

    source = snowpy.SnowClassifier(calibrate=None).fit(["a b", "c d", "e f", "g h"],
                                                       ["x", "y", "x", "y"])
    path = source.save(tmp_path / "m.snowpy")
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    header = orjson.loads(members["header.json"])
    if field is None:
        header[value] = "not a mapping"
    else:
        header["network"][field] = value
    header["header_sha256"] = _header_digest(header)
    members["header.json"] = orjson.dumps(header)
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    with pytest.raises(ModelFileError):
        snowpy.load(path)
    result = runner.invoke(app, ["predict", str(path)], input="a b\n")
    assert result.exit_code == 1 and "Traceback" not in result.output


def test_a_token_pattern_that_backtracks_exponentially_is_refused(tmp_path):
    # 15.7: `(a+)+$` from a model file made predict on a 41-byte line run for hours
    from snowpy.model_file import _header_digest

    for pattern in (r"(a+)+$", r"(?:\w+\s?)*"):
        with pytest.raises(ConfigurationError, match="repeats a repetition"):
            snowpy.Featurizer(token_pattern=pattern).transform(["a" * 40 + "!"])
    # alternatives whose first characters overlap: literals, classes, categories
    for pattern in (r"(a|a)*", r"(xa|xa)+", r"(\w|\d\d)+$", r"(\w|[0-9]x?)+$",
                    r"([a-z]|[aeiou]x)+", r"([^a]|bb)+"):
        with pytest.raises(ConfigurationError, match="repeats overlapping alternatives"):
            snowpy.Featurizer(token_pattern=pattern).transform(["1" * 40 + "!"])
    # single-character alternatives become one class in Python's compiler: no backtracking;
    # disjoint first characters cannot backtrack either
    for pattern in (r"(\w|\d)+", r"(ab|cd)+", r"(ab|ac)+", r"(a|b\d)+", r"(\s|\S\S)*"):
        snowpy.Featurizer(token_pattern=pattern).transform(["1" * 40 + "!"])
    safe = snowpy.Featurizer(token_pattern=r"(?u)\b\w\w+\b")  # scikit-learn's default
    assert safe.transform(["a" * 40 + "!"]).nnz == 1
    # a model file carrying the pattern is refused on load, in one line
    clf = snowpy.SnowClassifier(calibrate=None, token_pattern=r"\w+").fit(
        ["a b", "c d", "e f", "g h"], ["x", "y", "x", "y"])
    path = clf.save(tmp_path / "m.snowpy")
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    header = orjson.loads(members["header.json"])
    header["featurizer"]["token_pattern"] = r"(a+)+$"
    header["header_sha256"] = _header_digest(header)
    members["header.json"] = orjson.dumps(header)
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    with pytest.raises(ModelFileError, match="repeats a repetition"):
        snowpy.load(path)
