"""Hostile inputs (issue 33): each test builds the input an attacker or an unlucky user
would give and checks the one-line outcome."""

from __future__ import annotations

import zipfile
from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
from typer.testing import CliRunner

import snowpy
from snowpy.cli import app
from snowpy.exceptions import ConfigurationError, ModelFileError, SnowpyError
from snowpy.model_file import _header_digest

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "corpora" / "demo" / "train.tsv"
runner = CliRunner()


def run(*args, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "good.snowpy"
    assert run("train", TRAIN, "-o", path, "--epochs", "2", "--calibrate", "none").exit_code == 0
    return path


def rewrite(model: Path, out: Path, edit, *, checksum: bool = False, members_edit=None
            ) -> Path:
    """A copy of ``model`` with its members edited by ``members_edit(members)`` first, then
    its header by ``edit`` (and, with ``checksum``, the header checksum recomputed, as a
    forger would)."""
    with zipfile.ZipFile(model) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    if members_edit is not None:
        members_edit(members)
    header = orjson.loads(members["header.json"])
    edit(header)
    if checksum:
        header.pop("header_sha256", None)
        header["header_sha256"] = _header_digest(header)
    members["header.json"] = orjson.dumps(header)
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return out


def swap_labels(header: dict) -> None:
    labels = header["network"]["labels"]
    labels[0], labels[1] = labels[1], labels[0]


# 33.2: deleting header_sha256 switched the header check off ------------------------------

def test_a_header_without_its_checksum_is_refused(model, tmp_path):
    def strip(header):
        swap_labels(header)
        del header["header_sha256"]

    edited = rewrite(model, tmp_path / "stripped.snowpy", strip)
    with pytest.raises(ModelFileError, match="checksum .header_sha256. is missing"):
        snowpy.load(edited)
    result = run("predict", edited, input="hello\n")
    assert result.exit_code == 1 and "header_sha256" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("version", [-1, 0, True, "3", None])
def test_an_invalid_format_version_is_refused(model, tmp_path, version):
    edited = rewrite(model, tmp_path / "v.snowpy",
                     lambda header: header.update(format_version=version), checksum=True)
    with pytest.raises(ModelFileError, match="format version"):
        snowpy.load(edited)


def test_a_signed_model_loads_only_with_its_key(model, tmp_path):
    key, other = b"k" * 32, b"o" * 32
    classifier = snowpy.load(model)
    signed = classifier.save(tmp_path / "signed.snowpy", key=key)
    assert snowpy.load(signed, key=key).predict(["hello"]).tolist() == \
        classifier.predict(["hello"]).tolist()
    assert snowpy.load(signed) is not None  # no key given: checked for damage only
    with pytest.raises(ModelFileError, match="does not match the key"):
        snowpy.load(signed, key=other)
    with pytest.raises(ModelFileError, match="not signed"):
        snowpy.load(model, key=key)
    # a forger who edits the labels and recomputes the checksum passes the checksum,
    # not the signature
    forged = rewrite(signed, tmp_path / "forged.snowpy", swap_labels, checksum=True)
    assert snowpy.load(forged).classes_.tolist() != classifier.classes_.tolist()
    with pytest.raises(ModelFileError, match="does not match the key"):
        snowpy.load(forged, key=key)
    with pytest.raises(ValueError, match="at least 16"):
        classifier.save(tmp_path / "short.snowpy", key=b"short")


def test_the_command_line_signs_and_checks_with_the_key_file(tmp_path, monkeypatch):
    key_file, other = tmp_path / "key", tmp_path / "other"
    key_file.write_bytes(b"s" * 32)
    other.write_bytes(b"t" * 32)
    out = tmp_path / "m.snowpy"
    monkeypatch.setenv("SNOWPY_MODEL_KEY_FILE", str(key_file))
    assert run("train", TRAIN, "-o", out, "--epochs", "1", "--calibrate", "none").exit_code == 0
    assert run("predict", out, input="hello\n").exit_code == 0
    monkeypatch.setenv("SNOWPY_MODEL_KEY_FILE", str(other))
    result = run("predict", out, input="hello\n")
    assert result.exit_code == 1 and "does not match the key" in result.stderr
    monkeypatch.setenv("SNOWPY_MODEL_KEY_FILE", str(tmp_path / "absent"))
    result = run("predict", out, input="hello\n")
    assert result.exit_code == 1 and "SNOWPY_MODEL_KEY_FILE" in result.stderr


# 33.1: token patterns that hang predict -----------------------------------------------

#: The issue's patterns, each with a line that makes Python's engine backtrack.
HANGING = [
    (r"(a|aa)+$", "a" * 40 + "!"), (r"(aa|a)+$", "a" * 40 + "!"),
    (r"(a?a?)+$", "a" * 40 + "!"), (r"(?:a{1,2}){1,50}$", "a" * 40 + "!"),
    (r"(?=(a+a+)+b)", "a" * 40), (r"(.*,){12}X", "," * 3000),
    (r"a*a*a*a*a*b", "a" * 3000), (r"\s*\s*\s*\s*\s*\s*x", " " * 3000),
]


def with_pattern(model: Path, out: Path, pattern: str) -> Path:
    def edit(header):
        header["featurizer"]["token_pattern"] = pattern
    return rewrite(model, out, edit, checksum=True)


@pytest.mark.parametrize("pattern,line", HANGING)
def test_a_model_files_token_pattern_cannot_hang_predict(model, tmp_path, monkeypatch,
                                                         pattern, line):
    """Each pattern is refused when the file loads or stops at its time budget (here
    0.2 s) with one line naming the document: never a hang, never a traceback."""
    monkeypatch.setenv("SNOWPY_PATTERN_BUDGET", "0.2")
    hostile = with_pattern(model, tmp_path / "hostile.snowpy", pattern)
    result = run("predict", hostile, input=line + "\n")
    assert result.exit_code == 1, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert ("budget" in message and "document 0" in message) or "token_pattern" in message


@pytest.mark.parametrize("pattern", [r"a{4294967295}", r"(", 7])
def test_an_invalid_pattern_in_a_file_is_one_line(model, tmp_path, pattern):
    hostile = with_pattern(model, tmp_path / "bad.snowpy", pattern)
    for command in ("predict", "inspect"):
        result = run(command, hostile, input="hello\n")
        assert result.exit_code == 1 and "Traceback" not in result.stderr
        assert "token_pattern" in result.stderr or "front-end" in result.stderr


def test_a_pattern_from_a_file_runs_in_another_thread_only_when_trusted(model, tmp_path):
    import threading

    path = with_pattern(model, tmp_path / "custom.snowpy", r"[a-z]+")
    outcome = {}

    def predict(trust):
        try:
            outcome[trust] = snowpy.load(path, trust_pattern=trust).predict(["hello"]).tolist()
        except SnowpyError as exc:
            outcome[trust] = str(exc)

    for trust in (False, True):
        worker = threading.Thread(target=predict, args=(trust,))
        worker.start()
        worker.join()
    assert "trust_pattern=True" in outcome[False]
    assert isinstance(outcome[True], list)
    assert snowpy.load(path).predict(["hello"]).tolist() == outcome[True]  # main thread


def test_the_built_in_patterns_run_unbudgeted_and_others_budgeted(monkeypatch):
    from snowpy.text.patterns import BUILT_IN_PATTERNS, TokenPattern

    assert TokenPattern(r"(?u)\b\w\w+\b").budgeted is False
    assert r"(?u)\b\w\w+\b" in BUILT_IN_PATTERNS
    monkeypatch.setenv("SNOWPY_PATTERN_BUDGET", "0.05")
    slow = TokenPattern(r"[a-z]+\d")  # quadratic under findall on a run of letters
    assert slow.budgeted
    with pytest.raises(ConfigurationError, match="document 7 .200,000 characters"):
        slow.tokens(["a" * 200_000], lowercase=False, first_doc=7)
    assert slow.tokens(["ab1 cd2"], lowercase=False) == ["ab1 cd2"]


@given(st.recursive(
    st.sampled_from(["a", "a?", "a*", "a+", r"\w", r"\s*", ".", "(a|aa)", "[ab]"]),
    lambda inner: st.tuples(inner, inner, st.sampled_from(["*", "+", "{1,9}", "?", ""]))
    .map(lambda t: f"(?:{t[0]}{t[1]}){t[2]}"),
    max_leaves=4))
@settings(max_examples=40, deadline=None)
def test_generated_nested_quantifiers_never_hang(pattern):
    """Any nesting of quantifiers: refused when compiled, or tokens within the budget, or
    a one-line budget error; nothing else."""
    import os

    from snowpy.text.patterns import TokenPattern

    os.environ["SNOWPY_PATTERN_BUDGET"] = "0.05"
    try:
        TokenPattern(pattern + "$").tokens(["a" * 30 + "!", " " * 500], lowercase=False)
    except ConfigurationError as exc:
        assert "\n" not in str(exc)
    finally:
        del os.environ["SNOWPY_PATTERN_BUDGET"]


# 33.4: memory exhaustion ------------------------------------------------------------------

def test_a_line_longer_than_the_bound_is_reported_never_held(monkeypatch):
    import io

    from snowpy.corpora.delimited import read_stream
    from snowpy.corpora.documents import CorpusError, Problems

    monkeypatch.setenv("SNOWPY_MAX_DOCUMENT_BYTES", "1000")
    stream = b"a\t" + b"x" * 50_000 + b"\nb\tfine\n"
    with pytest.raises(CorpusError, match=r"<stdin>:1: a line of more than 1,000 bytes"):
        list(read_stream(io.BytesIO(stream)))
    problems = Problems("skip")
    assert [d.text for d in read_stream(io.BytesIO(stream), problems=problems)] == ["fine"]
    assert problems.skipped == 1
    result = run("train", "-", "-o", "/dev/null/x", input=stream.decode())
    assert result.exit_code == 1 and "<stdin>:1: a line of more than 1,000 bytes" in \
        result.stderr and "Traceback" not in result.stderr


def test_predict_reads_its_input_with_the_bound(model, monkeypatch):
    monkeypatch.setenv("SNOWPY_MAX_DOCUMENT_BYTES", "1000")
    result = run("predict", model, input="fine\n" + "x" * 5000)
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "standard input:2: a line of more than 1,000 bytes" in result.stderr


def test_a_document_longer_than_the_bound_is_malformed(tmp_path, monkeypatch):
    from snowpy import corpora
    from snowpy.corpora.documents import CorpusError

    monkeypatch.setenv("SNOWPY_MAX_DOCUMENT_BYTES", "100")
    path = tmp_path / "long.tsv"
    path.write_text("a\t" + "word " * 100 + "\nb\tshort\n")
    with pytest.raises(CorpusError, match=r"long.tsv:1: a document of 500 characters"):
        list(corpora.read(path))


def test_archive_members_are_bounded_before_they_are_read(tmp_path, monkeypatch):
    import tarfile

    from snowpy import corpora
    from snowpy.corpora.documents import CorpusError

    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("ham/1.txt", b"hello there")
        archive.writestr("spam/1.txt", b"\0" * 30_000_000)
    assert bomb.stat().st_size < 100_000
    with pytest.raises(CorpusError, match="spam/1.txt: expands 1,0[0-9][0-9] times"):
        list(corpora.read(bomb))
    monkeypatch.setenv("SNOWPY_MAX_MEMBER_BYTES", "5")
    with pytest.raises(CorpusError, match="a member of 11 bytes"):
        list(corpora.read(bomb))
    monkeypatch.delenv("SNOWPY_MAX_MEMBER_BYTES")
    packed = tmp_path / "links.tar.gz"
    (tmp_path / "ham").mkdir()
    (tmp_path / "ham" / "1.txt").write_text("hello there")
    (tmp_path / "spam").mkdir()
    (tmp_path / "spam" / "1.txt").write_text("win a prize")
    with tarfile.open(packed, "w:gz") as archive:
        archive.add(tmp_path / "ham", "c/ham")
        archive.add(tmp_path / "spam", "c/spam")
        link = tarfile.TarInfo("c/spam/2.txt")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(link)
    problems = corpora.Problems()
    assert len(list(corpora.read(packed, problems=problems))) == 2
    assert any("1 symbolic or hard link member(s) not read" in n for n in problems.notes)


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


# 33.6: records dropped or taken without a word --------------------------------------------

def test_records_are_learned_or_reported(tmp_path):
    from snowpy import corpora
    from snowpy.corpora.documents import CorpusError

    nul = tmp_path / "nul.tsv"
    nul.write_text("neg\x00\tbad film\npos\tgood film\n")
    with pytest.raises(CorpusError, match=r"nul.tsv:1: label 'neg\\x00' holds a control"):
        list(corpora.read(nul))
    empty = tmp_path / "empty.tsv"
    empty.write_text("pos\t\nneg\tbad\n")
    with pytest.raises(CorpusError, match="empty.tsv:1: empty text"):
        list(corpora.read(empty))
    blank = tmp_path / "blank.tsv"
    blank.write_text("pos\tgood\n\n   \nneg\tbad\n\t\n")
    problems = corpora.Problems("skip")
    assert len(list(corpora.read(blank, problems=problems))) == 2
    assert any("3 blank line(s) skipped" in n for n in problems.notes)  # ("\t" is blank)
    assert problems.skipped == 0


# 33.5: one schema for the header ------------------------------------------------------------

def _set(*path, value):
    def edit(header):
        place = header
        for key in path[:-1]:
            place = place[key]
        place[path[-1]] = value
    return edit


SCHEMA_EDITS = {
    "fields as an object": (_set("featurizer", "fields", value={"a": "b"}),
                            "'featurizer.fields' must be an array"),
    "format_version -1": (_set("format_version", value=-1), "format version"),
    "float16 precision": (_set("network", "options", "precision", value="float16"),
                          "'network.options.precision' must be one of"),
    "NaN eligible_percent": (_set("network", "options", "eligible_percent",
                                  value={"$float": "nan"}), "eligible_percent' must be null"),
    "alpha 1e308": (_set("network", "rule_params", "alpha", value=1e308),
                    "'network.rule_params.alpha' must be"),
    "negative chunk_bytes": (_set("featurizer", "chunk_bytes", value=-5),
                             "'featurizer.chunk_bytes' must be an integer from 1"),
    "n_jobs 100000": (_set("featurizer", "n_jobs", value=100_000), "'featurizer.n_jobs'"),
    "n_jobs -100000": (_set("featurizer", "n_jobs", value=-100_000), "'featurizer.n_jobs'"),
    "an unknown field": (_set("network", "surprise", value=1),
                         "'network.surprise' is not a field snowpy writes"),
    "a feature id beyond n_features": (_set("network", "n_features", value=3),
                                       "beyond the map's 3"),
}


@pytest.mark.parametrize("name", SCHEMA_EDITS)
def test_the_header_schema_refuses_what_loaded_before(model, tmp_path, name):
    """Each edit loaded with exit status 0 (or crashed in predict) before the schema."""
    edit, message = SCHEMA_EDITS[name]
    edited = rewrite(model, tmp_path / "edited.snowpy", edit, checksum=True)
    with pytest.raises(ModelFileError, match=message):
        snowpy.load(edited)
    result = run("predict", edited, input="hello\n")
    assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_float_feature_ids_are_refused(model, tmp_path):
    import hashlib
    import io

    import numpy as np

    floats = {}

    def as_floats(members):
        floats["ids"] = np.load(io.BytesIO(members["arrays/feature_ids.npy"])).astype(float)
        buffer = io.BytesIO()
        np.save(buffer, floats["ids"])
        members["arrays/feature_ids.npy"] = buffer.getvalue()

    def declare(header):
        ids = floats["ids"]
        header["arrays"]["feature_ids"].update(
            dtype="float64", nbytes=ids.nbytes, sha256=hashlib.sha256(ids.tobytes()).hexdigest())

    edited = rewrite(model, tmp_path / "floats.snowpy", declare, checksum=True,
                     members_edit=as_floats)
    with pytest.raises(ModelFileError, match="array 'feature_ids' must hold int32 or int64"):
        snowpy.load(edited)


# 33.7: smaller ----------------------------------------------------------------------------

def test_stale_temporary_files_of_killed_saves_are_removed(tmp_path):
    import os
    import subprocess
    import sys

    classifier = snowpy.SnowClassifier(epochs=1).fit(["a b", "c d"], ["x", "y"])
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = tmp_path / f".m.snowpy.{gone}.abc123.tmp"  # a save killed by kill -9
    stale.write_bytes(b"half a model")
    alive = tmp_path / f".m.snowpy.{os.getppid()}.def456.tmp"  # a save in progress
    alive.write_bytes(b"being written")
    other = tmp_path / f".other.snowpy.{gone}.x.tmp"  # another model's
    other.write_bytes(b"not ours")
    classifier.save(tmp_path / "m.snowpy")
    assert not stale.exists() and alive.exists() and other.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == \
        sorted([alive.name, other.name])


def test_a_device_or_a_pipe_is_named_as_such(tmp_path):
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in (fifo, "/dev/zero"):
        result = run("train", target, "-o", tmp_path / "m.snowpy")
        assert result.exit_code == 1 and "not a regular file" in result.stderr, result.stderr


def test_a_full_disk_names_the_model_file(tmp_path, monkeypatch):
    import errno

    classifier = snowpy.SnowClassifier(epochs=1).fit(["a b", "c d"], ["x", "y"])

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("snowpy.model_file.os.fsync", full)
    with pytest.raises(OSError) as caught:
        classifier.save(tmp_path / "m.snowpy")
    assert caught.value.filename == str(tmp_path / "m.snowpy")
    assert caught.value.errno == errno.ENOSPC
    assert not list(tmp_path.iterdir())  # no temporary file left


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


def test_arrays_out_of_their_declared_bounds_are_never_saved():
    import numpy as np

    from snowpy.network.state import narrowest

    assert narrowest(np.array([0, 19]), 20).tolist() == [0, 19]
    with pytest.raises(SnowpyError, match="a value 97 where 0 to 19 are declared"):
        narrowest(np.array([3, 97]), 20)
    with pytest.raises(SnowpyError, match="a value -1 where"):
        narrowest(np.array([-1, 3]), 20)
