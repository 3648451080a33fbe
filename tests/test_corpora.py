"""Corpus readers on fixture files, and the registered corpora."""

from __future__ import annotations

import http.server
import io
import json
import os
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from snowpy import corpora
from snowpy.cli import app
from snowpy.corpora import CorpusError, Problems
from snowpy.corpora.registry import CorpusFile, locate
from snowpy.exceptions import ConfigurationError

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "corpora" / "demo" / "train.tsv"
runner = CliRunner()


def run(*args, input: str | None = None, **kwargs):
    return runner.invoke(app, [str(a) for a in args], input=input, **kwargs)


def make_tree(root: Path, files: dict[str, bytes | str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


CLASS_TREE = {"data/train/ham/1.txt": "lunch at noon", "data/train/spam/2.txt": "win cash",
              "data/test/ham/3.txt": "see you soon", "data/test/spam/4.txt": "free money",
              "data/README": "not a document", "data/train/urls.txt": "not one either"}


def test_directory_reader_from_folder_tar_and_zip(tmp_path):
    folder = make_tree(tmp_path / "folder", CLASS_TREE) / "data"
    import tarfile

    tar = tmp_path / "corpus.tar.gz"
    with tarfile.open(tar, "w:gz") as archive:
        archive.add(folder, arcname="data")
    zipped = tmp_path / "corpus.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        for name, content in CLASS_TREE.items():
            archive.writestr(name, content)
    for source in (folder, tar, zipped):
        train = list(corpora.read_directory(source, split="train"))
        assert sorted((d.label, d.text) for d in train) == [("ham", "lunch at noon"),
                                                             ("spam", "win cash")]
        assert len(list(corpora.read_directory(source))) == 4
    member = next(iter(corpora.read_directory(tar, split="test")))
    assert "::data/test/" in member.source


def test_directory_encoding_errors_name_the_member(tmp_path):
    root = make_tree(tmp_path, {"c/a/1.txt": b"caf\xe9", "c/a/2.txt": b"ok"})
    with pytest.raises(CorpusError, match=r"1.txt: the byte 0xe9 at offset 3 is not valid utf-8"):
        list(corpora.read_directory(root / "c"))
    assert [d.text for d in corpora.read_directory(root / "c", encoding="latin-1")][0] == "café"
    problems = Problems("skip")
    assert [d.text for d in corpora.read_directory(root / "c", errors="skip",
                                                   problems=problems)] == ["ok"]
    assert problems.skipped == 1


def test_tsv_reader_reports_malformed_lines(tmp_path):
    path = tmp_path / "sms.tsv"
    path.write_text("ham\thello\tthere\nbroken line\n\nspam\t\n\tno label\nspam\twin\n")
    with pytest.raises(CorpusError, match=r"sms.tsv:2: expected 2 fields"):
        list(corpora.read_tsv(path))
    problems = Problems("skip")
    documents = list(corpora.read_tsv(path, problems=problems))
    assert [(d.label, d.text) for d in documents] == [("ham", "hello\tthere"),
                                                      ("spam", "win")]
    assert problems.skipped == 3 and "sms.tsv:4: empty text" in problems.messages[1]
    assert "sms.tsv:5: empty label" in problems.messages[2]
    assert problems.notes == [f"{path}: 1 blank line(s) skipped"]
    swapped = tmp_path / "uci.txt"
    swapped.write_text("great phone\t1\n")
    assert next(corpora.read_tsv(swapped, label_column=1, text_column=0)).label == "1"


def test_a_csv_quote_left_open_is_named_where_it_opens(tmp_path):
    """A quote left open at line 3 was reported at the line where the field it swallowed
    ended, as a label that "holds a control character" (a new user's report)."""
    rows = ["label,text", "ham,see you", '"unclosed,quote', "ham,lunch?", 'spam,a "quoted" prize',
            "spam,win now"]
    path = tmp_path / "c.csv"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(CorpusError, match=r"c\.csv:3: a quoted field runs on to line 5: is a "
                       "closing quote missing\?$"):
        list(corpora.read(path))
    path.write_text("\n".join(rows[:3]) + "\n" + "ham,lunch\n")  # (open to the end)
    with pytest.raises(CorpusError, match=r"c\.csv:3: a quoted field runs on to line 4: "):
        list(corpora.read(path))
    path.write_text('label,text\nham,"a text\nof two lines"\nspam,win\n')  # (a text may)
    assert [d.text for d in corpora.read(path)] == ["a text\nof two lines", "win"]


def test_csv_reader_with_names_and_indices(tmp_path):
    path = tmp_path / "news.csv"
    path.write_text('"3","Title one","Body, with comma"\n"4","Two"\n"1","x","y"\n')
    problems = Problems("skip")
    documents = list(corpora.read_csv(path, label_column=0, text_columns=(1, 2),
                                      problems=problems))
    assert [(d.label, d.text) for d in documents] == [("3", "Title one Body, with comma"),
                                                      ("1", "x y")]
    assert "news.csv:2: expected at least 3 columns" in problems.messages[0]
    named = tmp_path / "named.csv"
    named.write_text("topic,text\nsport,goal\n")
    assert next(corpora.read_csv(named, label_column="topic", text_columns=("text",))).text \
        == "goal"
    with pytest.raises(CorpusError, match="no column 'body'"):
        list(corpora.read_csv(named, label_column="topic", text_columns=("body",)))


def test_jsonl_reader_multilabel_and_errors(tmp_path):
    path = tmp_path / "reuters.jsonl"
    path.write_text('{"topics": ["earn", "acq"], "title": "T", "body": "B"}\n'
                    '{"topics": [], "title": "only", "body": null}\n'
                    'not json\n{"title": "no label"}\n{"topics": "grain", "body": 5}\n')
    problems = Problems("skip")
    documents = list(corpora.read_jsonl(path, label_field="topics", text_fields=("title", "body"),
                                        problems=problems))
    assert [(d.label, d.text) for d in documents] == [(("earn", "acq"), "T\n\nB"),
                                                      ((), "only")]
    assert problems.skipped == 3
    assert any("reuters.jsonl:3: invalid JSON" in m for m in problems.messages)
    assert any("reuters.jsonl:4: no field 'topics'" in m for m in problems.messages)


def test_fasttext_reader(tmp_path):
    path = tmp_path / "ft.txt"
    path.write_text("__label__pos great film\n__label__a __label__b two\nno label here\n")
    problems = Problems("skip")
    assert [(d.label, d.text) for d in corpora.read_fasttext(path, problems=problems)] == \
        [("pos", "great film")]
    assert problems.skipped == 2
    assert [d.label for d in corpora.read_fasttext(path, multilabel=True,
                                                   problems=Problems("skip"))] == \
        [("pos",), ("a", "b")]


def test_snow_reader(tmp_path):
    path = tmp_path / "examples.snow"
    path.write_text("7(1.5), 5, 13:\n0, 4,\n 9; 0, 1:\n1, 2(0.5):\n")
    examples = corpora.read_snow(path, targets={0, 1})
    assert examples.labels == [(), (0,), (1,)]
    assert examples.restrictions == [(0, 1), (0, 1), (0, 1)]
    assert examples.X[0, 7] == 1.5 and examples.X[2, 2] == 0.5 and examples.X.shape == (3, 14)
    assert examples.sources[1].endswith("examples.snow:2")
    bad = tmp_path / "bad.snow"
    bad.write_text("1, x(2):\n3, 4")
    with pytest.raises(CorpusError, match=r"bad.snow:1: cannot read 'x\(2\)'"):
        corpora.read_snow(bad, targets={0})
    problems = Problems("skip")
    corpora.read_snow(bad, targets={0}, problems=problems)
    assert "does not end with ':'" in problems.messages[-1]


def test_read_guesses_the_format(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"label": "x", "text": "t"}\n')
    (tmp_path / "b.txt").write_text("__label__y t\n")
    (tmp_path / "c.tsv").write_text("z\tt\n")
    assert [next(corpora.read(tmp_path / n)).label for n in ("a.jsonl", "b.txt", "c.tsv")] == \
        ["x", "y", "z"]


# ------------------------------------------------------------------ registry
def test_missing_corpus_says_which_file_to_put_where(tmp_path, monkeypatch):
    monkeypatch.setenv("SNOWPY_DATA", str(tmp_path))
    with pytest.raises(CorpusError) as error:
        corpora.load("trec", download=False)
    message = str(error.value)
    assert f"put trec_qc.tar.gz (sha256 f849b58ff05d...) in {tmp_path}" in message
    with pytest.raises(ConfigurationError, match="has no split 'dev'; its splits are: train, test"):
        corpora.load("trec", "dev")
    with pytest.raises(ConfigurationError, match="no option 'granularity'"):
        corpora.load("trec", granularity="fine")


def test_checksum_mismatch_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("SNOWPY_DATA", str(tmp_path))
    (tmp_path / "trec_qc.tar.gz").write_bytes(b"not the archive")
    with pytest.raises(CorpusError, match="SHA-256 is .* expected f849b58f"):
        corpora.load("trec")


def test_download_is_atomic_and_verified(tmp_path, monkeypatch):
    served = tmp_path / "served"
    served.mkdir()
    payload = b"label\ttext\n" * 1000
    (served / "tickets.tsv").write_bytes(payload)
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=served, **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    import hashlib

    from snowpy.corpora.registry import CorpusSpec

    url = f"http://127.0.0.1:{server.server_address[1]}/tickets.tsv"
    good = CorpusFile("tickets.tsv", hashlib.sha256(payload).hexdigest(), url)
    spec = CorpusSpec("tickets", "test", (good,), lambda *a: iter(()), ("all",), {}, "here",
                      "-", "-")
    data = tmp_path / "data"
    monkeypatch.setenv("SNOWPY_DATA", str(data))
    try:
        path = locate(spec)
        assert path.read_bytes() == payload
        path.unlink()
        wrong = CorpusSpec("tickets", "test", (CorpusFile("tickets.tsv", "0" * 64, url),),
                           lambda *a: iter(()), ("all",), {}, "here", "-", "-")
        with pytest.raises(CorpusError, match="SHA-256 is"):
            locate(wrong)
        assert list(data.iterdir()) == []  # no half-written or unverified file left
        offline = CorpusSpec("tickets", "test", (CorpusFile("tickets.tsv", None,
                                                            "http://127.0.0.1:9/x"),),
                             lambda *a: iter(()), ("all",), {}, "here", "-", "-")
        with pytest.raises(CorpusError, match="put tickets.tsv in .*downloading .* failed"):
            locate(offline)
    finally:
        server.shutdown()


@pytest.mark.corpus
@pytest.mark.parametrize("name,split,count,classes", [
    ("20newsgroups", "train", 11314, 20), ("20newsgroups", "test", 7532, 20),
    ("reuters21578-modapte", "train", 9603, 90), ("reuters21578-modapte", "test", 3299, 90),
    ("sms-spam", "all", 5574, 2), ("trec", "train", 5452, 6), ("trec", "test", 500, 6),
    ("movie-reviews", "all", 2000, 2), ("sentence-polarity", "all", 10662, 2),
    ("ag-news", "test", 7600, 4), ("bbc-news", "all", 2225, 5),
])
def test_registered_corpora_load_with_documented_counts(corpora_path, name, split, count,
                                                        classes):
    corpus = corpora.load(name, split)
    assert len(corpus) == count == corpus.spec.counts[split]
    labels = {label for item in corpus.labels
              for label in (item if isinstance(item, tuple) else (item,))}
    assert len(labels) == classes
    if name == "sms-spam":
        assert corpus.labels.count("spam") == 747
    if name == "trec":
        assert len({d.label for d in corpora.load("trec", split, labels="fine")}) > 6


@pytest.fixture
def corpora_path(corpora, monkeypatch):
    monkeypatch.setenv("SNOWPY_DATA", str(corpora))
    return corpora


def test_label_text_with_a_bad_byte_is_reported_by_its_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_bytes(b"spam\tcheap pills\nham\tlunch \xff today\n")
    with pytest.raises(CorpusError, match=r"bad.tsv:2: the byte 0xff at offset 10 is not valid utf-8"):
        list(corpora.read(path, format="tsv"))


class _PipesFormat:
    """A third party's corpus format: ``label|text`` lines in ``.pipes`` files."""

    @staticmethod
    def read(path, *, problems=None, encoding="utf-8"):
        with open(path, encoding=encoding) as lines:
            for number, line in enumerate(lines, 1):
                label, _, text = line.rstrip("\n").partition("|")
                yield corpora.Document(text, label, f"{path}:{number}")

    @staticmethod
    def snowpy_corpus_formats():
        from snowpy.corpora.spec import FormatSpec

        return [FormatSpec("pipes", "label|text lines", _PipesFormat.read,
                           extensions=(".pipes",), options=("encoding",),
                           layout=lambda given: {"encoding": given["encoding"]}
                           if given.get("encoding") else {})]


def test_a_plugin_adds_a_corpus_format_that_every_reader_and_command_takes(tmp_path):
    """One module and its registration: detected by its extension, read by
    snowpy.corpora.read, trained on and evaluated by the command line, its options
    checked as the built-in formats' are."""
    from typer.testing import CliRunner

    from snowpy.cli import app
    from snowpy.hookspecs import hookimpl
    from snowpy.plugins import temporary_plugin

    plugin = _PipesFormat()
    plugin.snowpy_corpus_formats = hookimpl(_PipesFormat.snowpy_corpus_formats)
    lines = [f"{'spam' if i % 2 else 'ham'}|{'win a free prize' if i % 2 else 'lunch at noon'}"
             f" {i}" for i in range(40)]
    path = tmp_path / "mail.pipes"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="unknown corpus format 'pipes'"):
        list(corpora.read(path, format="pipes"))
    with temporary_plugin(plugin, "pipes-plugin"):
        assert corpora.detect_format(path) == "pipes"
        documents = list(corpora.read(path))
        assert [d.label for d in documents[:2]] == ["ham", "spam"]
        assert documents[1].text == "win a free prize 1"
        model = tmp_path / "m.snowpy"
        runner = CliRunner()
        trained = runner.invoke(app, ["train", str(path), "-o", str(model), "--epochs", "2",
                                      "--calibrate", "none", "--encoding", "utf-8"])
        assert trained.exit_code == 0, trained.output
        evaluated = runner.invoke(app, ["evaluate", str(model), str(path), "--json"])
        assert evaluated.exit_code == 0, evaluated.output
        assert json.loads(evaluated.stdout)["accuracy"] == 1.0
        refused = runner.invoke(app, ["train", str(path), "-o", str(model),
                                      "--label-column", "1"])
        assert refused.exit_code == 1
        assert "--label-column does not apply" in refused.output


@pytest.mark.corpus
def test_the_repr_of_a_corpus_is_one_line(corpora):
    # item 16: repr(Corpus) dumped the whole corpus
    from snowpy.corpora import load

    spam = load("sms-spam", "train", path=corpora / "sms_spam_collection.tar.gz")
    assert repr(spam) == f"Corpus('sms-spam', split='train', path='{spam.path}', not read yet)"
    n = len(spam)
    assert repr(spam) == f"Corpus('sms-spam', split='train', path='{spam.path}', {n:,} documents)"
    assert n > 4000 and "\n" not in repr(spam) and len(repr(spam)) < 200


def test_a_line_longer_than_the_bound_is_reported_never_held(monkeypatch, tmp_path):
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
    result = run("train", "-", "-o", tmp_path / "m.snowpy", input=stream.decode())
    assert result.exit_code == 1 and "<stdin>:1: a line of more than 1,000 bytes" in \
        result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "m.snowpy").exists()


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


def test_a_class_folder_with_a_subfolder_is_still_a_class(tmp_path):
    """32.8: a/1.txt a/2.txt a/3.txt a/sub/x.txt b/... trained on the classes sub and b
    and dropped a's files. Top-level folders are the classes; files below belong to them
    (as Keras's text_dataset_from_directory); a split folder still holds classes."""
    from typer.testing import CliRunner

    from snowpy.cli import app
    from snowpy.corpora.directory import read_directory
    from snowpy.corpora.documents import Problems

    for root in (tmp_path / "flat", tmp_path / "split" / "train", tmp_path / "split" / "test"):
        for label, word in (("a", "apple"), ("b", "banana")):
            (root / label).mkdir(parents=True)
            for i in range(3):
                (root / label / f"{i}.txt").write_text(f"{word} {i}")
        (root / "a" / "sub").mkdir()
        (root / "a" / "sub" / "x.txt").write_text("apple pie")
    problems = Problems()
    read = sorted((d.label, d.source) for d in read_directory(tmp_path / "flat",
                                                              problems=problems))
    assert [label for label, _ in read] == ["a"] * 4 + ["b"] * 3
    assert read[3][1].endswith("a/sub/x.txt")
    assert problems.notes == ["1 class folder(s) hold subfolders, whose files belong to the "
                              "class (first: a)"]
    assert sorted(d.label for d in read_directory(tmp_path / "split", split="train")) == \
        ["a"] * 4 + ["b"] * 3
    result = CliRunner().invoke(app, ["train", str(tmp_path / "flat"), "-o",
                                      str(tmp_path / "m.snowpy"), "--epochs", "2",
                                      "--calibrate", "none"])
    assert result.exit_code == 0, result.output
    assert "7 documents, 2 classes" in result.output
