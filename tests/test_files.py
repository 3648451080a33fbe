"""The compiled reader of corpus files (snowpy.files): the same documents, labels,
features and shuffling keys as the Python reader and the front end, and every line the
Python reader treats in a way of its own left to it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import snowpy
from snowpy import corpora
from snowpy.files import read_rows
from snowpy.text import Featurizer
from snowpy.text.keys import document_keys


def python_read(path, featurizer, format, multilabel=False):
    options = {"multilabel": True} if multilabel else {}
    documents = list(corpora.read(path, format=format, **options))
    texts = [d.text for d in documents]
    labels = [d.label for d in documents]
    return featurizer.rows(texts), labels, document_keys(texts, labels)


def assert_same(path, format, featurizer=None, multilabel=False):
    featurizer = featurizer or Featurizer(ngrams=(1, 2), bits=18)
    read = read_rows(path, featurizer, format=format, multilabel=multilabel)
    assert read is not None, "the compiled reader refused a clean file"
    X, labels, keys = python_read(path, featurizer, format, multilabel)
    assert np.array_equal(read.rows.indptr, X.indptr)
    assert np.array_equal(read.rows.indices, X.indices)
    assert np.array_equal(read.rows.data, X.data)  # (the strengths: counts, logs, norms)
    got = read.labels if multilabel else read.labels.tolist()
    assert got == labels
    assert np.array_equal(read.keys, keys)
    return read


LINES = [
    "ham\tsee you at lunch\n",
    "spam\tWIN a FREE prize!!! café Ünïcödé 東京 😀\r\n",
    "\n",
    "   \t  \n",
    "  ham  \tpadded label, tab\tinside the text\n",
    "ham\tthe last line has no line feed",
]


def test_a_tsv_file_reads_as_the_python_reader_reads_it(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("".join(LINES), encoding="utf-8")
    for featurizer in (Featurizer(bits=18), Featurizer(ngrams=(1, 3), bits=20),
                       Featurizer(ngrams=2, lowercase=False, values="count", norm="l2")):
        read = assert_same(path, "tsv", featurizer)
    assert len(read) == 4 and read.lines == 6
    assert read.problems.notes == [f"{path}: 2 blank line(s) skipped"]


def test_a_byte_order_mark_is_no_text_for_the_compiled_readers(tmp_path, monkeypatch):
    """A UTF-8 byte-order mark (a file saved on Windows) was read by the compiled readers
    into the first label, a class of its own ('\ufeffham'); the Python reader passed over
    it. A file, a fastText file and standard input now read as the Python reader does,
    and a file of the mark alone is no document."""
    import io
    import sys

    from snowpy.files import _stdin_blocks

    marked = tmp_path / "marked.tsv"
    marked.write_bytes(b"\xef\xbb\xbf" + "".join(LINES).encode("utf-8"))
    read = assert_same(marked, "tsv")
    assert sorted(set(read.labels.tolist())) == ["ham", "spam"]
    fasttext = tmp_path / "marked.txt"
    fasttext.write_bytes(b"\xef\xbb\xbf__label__ham see you\n__label__spam win now\n")
    assert corpora.detect_format(fasttext) == "fasttext"
    assert assert_same(fasttext, "fasttext").labels.tolist() == ["ham", "spam"]
    featurizer = Featurizer(ngrams=(1, 2), bits=18)
    for content, labels in ((marked.read_bytes(), ["ham", "spam", "ham", "ham"]),
                            (fasttext.read_bytes(), ["ham", "spam"])):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(content)))
        blocks = list(_stdin_blocks(featurizer, None, corpora.Problems()))
        assert [label for block in blocks for label in block.labels.tolist()] == labels
    alone = tmp_path / "alone.tsv"
    alone.write_bytes(b"\xef\xbb\xbf")
    assert read_rows(alone, featurizer, format="tsv") is None  # (the Python reader's)


def test_fasttext_files_single_and_multilabel(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("__label__ham see you\n__label__spam  win   money\t now\n\n"
                    "  __label__ham tabs\tand  spaces\n", encoding="utf-8")
    assert_same(path, "fasttext")
    multi = tmp_path / "m.txt"
    multi.write_text("__label__a __label__b two labels\n__label__b one\n"
                     "__label__a __label__a twice\n", encoding="utf-8")
    read = assert_same(multi, "fasttext", multilabel=True)
    assert read.labels[0] == ("a", "b")
    assert read_rows(multi, Featurizer(), format="fasttext") is None  # several: single


def test_multilabel_pieces_read_in_threads_join_as_one(tmp_path, monkeypatch):
    """Each piece's sets of labels (one, two or three a line) join in the order of the
    pieces: the labels the Python reader reads, whatever the number of pieces."""
    import snowpy.files as files

    path = tmp_path / "m.txt"
    with path.open("w", encoding="utf-8") as out:
        for i in range(600):
            tags = " ".join(f"__label__{t}" for t in "abc"[: 1 + i % 3])
            out.write(f"{tags} document {i} words {i * 7 % 101}\n")
    monkeypatch.setattr(files, "PIECE", 1024)
    read = assert_same(path, "fasttext", multilabel=True)
    assert len(read) == 600 and read.labels[599] == ("a", "b", "c")


def test_pieces_read_in_threads_join_as_one(tmp_path, monkeypatch):
    import snowpy.files as files

    path = tmp_path / "c.tsv"
    with path.open("w", encoding="utf-8") as out:
        for i in range(3000):
            out.write(f"{'abc'[i % 3]}\tdocument {i} words {i * 7 % 101} and más\n")
    monkeypatch.setattr(files, "PIECE", 4096)  # many pieces, each ending at a line feed
    read = assert_same(path, "tsv")
    assert len(read) == 3000


@pytest.mark.parametrize("content, why", [
    (b"ham\tok\nspam\tbad \xff byte\n", "not UTF-8"),
    (b"ham\tok\nno tab on this line\n", "a line without a tab"),
    (b"ham\tok\n  \tno label\n", "an empty label"),
    (b"ham\tok\nsp\x00am\ta NUL in the label\n", "a control byte"),
    (b"ham\tok\n\xc2\xa0\tnbsp label\n", "an empty label, after Python's strip"),
])
def test_lines_the_python_reader_treats_its_own_way_are_left_to_it(tmp_path, content, why):
    path = tmp_path / "c.tsv"
    path.write_bytes(content)
    assert read_rows(path, Featurizer(), format="tsv") is None, why


def test_fasttext_whitespace_outside_ascii_is_left_to_python(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("__label__a one\u00a0two\n", encoding="utf-8")
    assert read_rows(path, Featurizer(), format="fasttext") is None


def test_front_ends_other_than_word_ngrams_are_left_to_python(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("".join(LINES), encoding="utf-8")
    for featurizer in (Featurizer(char_ngrams=(2, 4)), Featurizer(token_pattern=r"\w+"),
                       Featurizer(strip_accents=True), Featurizer(unicode_form="NFKC")):
        assert read_rows(path, featurizer, format="tsv") is None


def test_fit_file_trains_the_model_fit_trains(tmp_path):
    path = tmp_path / "c.tsv"
    texts = [f"doc {i} about {'ab'[i % 2]} topic {i % 7}" for i in range(200)]
    labels = ["ab"[i % 2] for i in range(200)]
    path.write_text("".join(f"{y}\t{t}\n" for y, t in zip(labels, texts)), encoding="utf-8")
    options = dict(epochs=3, calibrate="cv", bits=18)
    from_file = snowpy.SnowClassifier(**options).fit_file(path)
    from_texts = snowpy.SnowClassifier(**options).fit(texts[::-1], labels[::-1])  # any order
    # the same network (its rows numbered in another order: by first appearance)
    assert from_file.network_.n_links_ == from_texts.network_.n_links_
    assert from_file.network_.mistakes_ == from_texts.network_.mistakes_
    assert np.array_equal(from_file.decision_function(texts),
                          from_texts.decision_function(texts))
    assert np.array_equal(from_file.predict_proba(texts), from_texts.predict_proba(texts))


def test_fit_rows_without_a_copy_weighs_the_rows_where_they_lie(tmp_path):
    """``copy=False`` (what ``snowpy train`` and ``fit_file`` pass for a corpus read for
    the fit alone): the same model, and the rows' strengths become the weighed ones
    instead of a second array of them; the default leaves the caller's rows alone."""
    path = tmp_path / "c.tsv"
    path.write_text("".join(f"{'ab'[i % 2]}\tdoc {i} about {'ab'[i % 2]} topic {i % 7}\n"
                            for i in range(200)), encoding="utf-8")
    options = dict(epochs=2, calibrate=None, bits=18)
    featurizer = snowpy.SnowClassifier(**options).make_featurizer()
    kept, given = (read_rows(path, featurizer, format="tsv") for _ in range(2))
    counts = kept.rows.strengths.copy()
    copied = snowpy.SnowClassifier(**options).fit_rows(kept.rows, kept.labels, keys=kept.keys)
    assert np.array_equal(kept.rows.strengths, counts)
    weighed = snowpy.SnowClassifier(**options).fit_rows(given.rows, given.labels,
                                                        keys=given.keys, copy=False)
    assert not np.array_equal(given.rows.strengths, counts)
    row = given.rows.strengths[given.rows.indptr[0]:given.rows.indptr[1]]
    assert np.isclose(np.sum(row ** 2), 1.0)  # (weighed, then each row of length 1)
    assert copied.network_.mistakes_ == weighed.network_.mistakes_
    assert np.array_equal(copied.network_.to_state()[1]["link_weights"],
                          weighed.network_.to_state()[1]["link_weights"])


_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                       blacklist_characters="\n\r\t\x00\x85\u2028\u2029"),
                max_size=40)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c-d", "é"]), _TEXT), min_size=1,
                max_size=20), st.sampled_from([{}, {"values": "count", "norm": "l2"},
                                               {"values": "log"}]))
def test_any_clean_file_reads_as_the_python_reader_reads_it(tmp_path_factory, rows, values):
    """The same rows, strengths, labels and keys, or the file left to the Python reader
    (which then reports what it finds: an empty text, say)."""
    path = tmp_path_factory.mktemp("files") / "c.tsv"
    path.write_text("".join(f"{label}\t{text}\n" for label, text in rows), encoding="utf-8")
    featurizer = Featurizer(ngrams=(1, 2), bits=16, **values)
    read = read_rows(path, featurizer, format="tsv")
    try:
        X, labels, keys = python_read(path, featurizer, "tsv")
    except corpora.CorpusError:
        assert read is None  # (what the Python reader refuses, the compiled one left)
        return
    if read is None:  # (whitespace outside ASCII alone on a line: the Python reader's)
        return
    assert read.labels.tolist() == labels
    assert np.array_equal(read.rows.indices, X.indices)
    assert np.array_equal(read.rows.indptr, X.indptr)
    assert np.array_equal(read.rows.data, X.data)
    assert np.array_equal(read.keys, keys)


@pytest.mark.parametrize("space", ["\u00a0", "\u2003", "\u3000 \u00a0"])
def test_a_text_of_whitespace_outside_ascii_is_empty_for_both_readers(tmp_path, space):
    # the line `a<TAB>U+00A0` was one document for the compiled reader and an empty text
    # for the Python reader: Hypothesis found it once
    path = tmp_path / "c.tsv"
    path.write_text(f"b\thello\na\t{space}\n", encoding="utf-8")
    assert read_rows(path, Featurizer(), format="tsv") is None
    with pytest.raises(corpora.CorpusError, match=r"c.tsv:2: empty text"):
        list(corpora.read(path, format="tsv"))


@pytest.mark.parametrize("line,why", [("spam\t  \n", "empty"), ("spam\t" + "x" * 200 + "\n",
                                                                 "long")])
def test_what_the_python_reader_reports_is_left_to_it(tmp_path, monkeypatch, line, why):
    """An empty text and a document over the bound are reported by the Python reader (with
    file and line); the compiled reader leaves such a file to it."""
    monkeypatch.setenv("SNOWPY_MAX_DOCUMENT_BYTES", "100")
    path = tmp_path / "c.tsv"
    path.write_text("ham\tsee you\n" + line)
    assert read_rows(path, Featurizer(), format="tsv") is None


def test_an_empty_file_is_left_to_python_and_a_file_of_blank_lines_reads_no_document(
        tmp_path):
    """An empty file (nothing to map) is left to the Python reader; a file of blank lines
    only is read as no document (no row, no label), its blank lines said."""
    empty = tmp_path / "empty.tsv"
    empty.write_bytes(b"")
    assert read_rows(empty, Featurizer(), format="tsv") is None
    assert read_rows(tmp_path, Featurizer(), format="tsv") is None  # (not a file)
    blank = tmp_path / "blank.tsv"
    blank.write_bytes(b"\n\n\n")
    read = read_rows(blank, Featurizer(bits=10), format="tsv")
    assert read.rows.shape == (0, 1024) and read.lines == 3
    assert read.labels.shape == (0,) and read.labels.dtype.kind == "U"
    assert read.problems.notes == [f"{blank}: 3 blank line(s) skipped"]


def test_a_file_is_read_on_the_threads_its_front_end_is_given(monkeypatch):
    """``n_jobs`` (``--threads``) counts the threads that read a file too: ``n_jobs=1``
    reads it on one, as scikit-learn's ``n_jobs`` means (it read on every core)."""
    import snowpy.files as files

    asked = []
    real = files.ThreadPoolExecutor

    def recording(max_workers: int) -> object:
        asked.append(max_workers)
        return real(max_workers=max_workers)

    monkeypatch.setattr(files, "ThreadPoolExecutor", recording)
    path = corpora.demo_path("train")
    rows = [read_rows(path, Featurizer(n_jobs=jobs), format="tsv") for jobs in (1, 3)]
    assert asked == [1, 3]
    read_rows(path, Featurizer(n_jobs=1), format="tsv", threads=2)  # (threads given win)
    assert asked == [1, 3, 2]
    for name in ("indptr", "indices", "data"):  # (the same rows on any number)
        np.testing.assert_array_equal(getattr(rows[0].rows, name), getattr(rows[1].rows, name))


#: Every character ``str.isspace()`` accepts (the control separators U+001C to U+001F
#: among them), but the line ends both readers split lines at
_SPACES = [chr(c) for c in range(0x110000) if chr(c).isspace() and chr(c) not in "\n\r"]


def _agree(path, format, multilabel=False):
    """The compiled reader gives what the Python reader gives (the texts' rows, the
    labels, the keys), or leaves the file to it; a file the Python reader reports a line
    of (an empty text, a control character in a label) is always left to it. Returns
    whether the compiled reader took the file."""
    featurizer = Featurizer(ngrams=(1, 2), bits=16)
    read = read_rows(path, featurizer, format=format, multilabel=multilabel)
    problems = corpora.Problems(on_error="skip")
    options = {"multilabel": True} if multilabel else {}
    documents = list(corpora.read(path, format=format, problems=problems, **options))
    if problems.messages:
        assert read is None, problems.messages
        return False
    if read is None:
        return False
    texts = [d.text for d in documents]
    labels = [d.label for d in documents]
    X = featurizer.rows(texts)
    assert (read.labels if multilabel else read.labels.tolist()) == labels
    assert np.array_equal(read.rows.indptr, X.indptr)
    assert np.array_equal(read.rows.indices, X.indices)
    assert np.array_equal(read.keys, document_keys(texts, labels))
    return True


@pytest.mark.parametrize("space", _SPACES, ids=[f"U+{ord(c):04X}" for c in _SPACES])
def test_every_whitespace_character_reads_alike_in_both_readers(tmp_path, space):
    """Each character str.isspace() accepts, and the control separators U+001C to U+001F,
    inside a text, at its ends, around a label, as a whole text (an empty text: reported
    by the Python reader, the file left to it), in tab-separated and fastText lines, one
    label or several: the same texts, labels and keys from the compiled reader, or the
    file left to the Python reader, never another reading."""
    c = space
    clean = "ham\tsee you at lunch\n"
    tsv = {"inside": f"spam\twin{c}a{c}{c}free prize\n",
           "ends": f"spam\t{c}win a prize{c}\n",
           "label": f"{c}spam{c}\twin a prize\n",
           "empty": f"spam\t{c}\n",
           "empty, spaces": f"spam\t {c} \n"}
    fasttext = {"inside": f"__label__spam win{c}a{c}{c}free prize\n",
                "after the label": f"__label__spam{c}win a prize\n",
                "ends": f"{c}__label__spam win a prize{c}\n",
                "empty": f"__label__spam {c}\n"}
    taken = {}
    for format, cases, first in (("tsv", tsv, clean),
                                 ("fasttext", fasttext, "__label__ham see you at lunch\n")):
        for name, line in cases.items():
            path = tmp_path / f"{format}-{name}.txt"
            path.write_text(first + line, encoding="utf-8")
            taken[format, name] = _agree(path, format)
    multi = tmp_path / "multi.txt"
    multi.write_text(f"__label__a{c}__label__b two{c}labels\n__label__b one\n", "utf-8")
    taken["multi"] = _agree(multi, "fasttext", multilabel=True)
    # an empty text is the Python reader's to report, whatever the space
    for key in (("tsv", "empty"), ("tsv", "empty, spaces"), ("fasttext", "empty")):
        assert not taken[key]
        # (and reported as empty: a text of nothing but the space, the control
        # separators too, is no document)
        problems = corpora.Problems(on_error="skip")
        path = tmp_path / f"{key[0]}-{key[1]}.txt"
        documents = list(corpora.read(path, format=key[0], problems=problems))
        assert [d.label for d in documents] == ["ham"]
        assert problems.messages == [f"{path}:2: empty text"], key
    # what the compiled reader takes (so that the comparisons above compared): a text
    # holding any of them, a label padded with any but the tab (a field separator); a
    # fastText line split at ASCII whitespace (outside ASCII: left to the Python reader)
    assert taken["tsv", "inside"] and taken["tsv", "ends"]
    assert taken["tsv", "label"] == (space != "\t")
    ascii_space = space < "\x80"
    assert [taken["fasttext", name] for name in ("inside", "after the label", "ends")] \
        + [taken["multi"]] == [ascii_space] * 4


def test_texts_the_python_reader_read_become_the_rows_the_compiled_reader_reads(tmp_path):
    """files.featurised, what snowpy train and a cluster's worker do with a corpus the
    Python reader read: its texts made the front end's rows and shuffling keys, the
    texts let go, as the compiled reader reads the same file; kept for a front end that
    keeps names (its fit reads them after training), and a compiled read as it is."""
    from snowpy.files import featurised, read_corpus

    path = tmp_path / "c.tsv"
    path.write_text("".join(f"{'xyz'[i % 3]}\tsome words of doc {i} and {i % 7}\n"
                            for i in range(50)))
    featurizer = Featurizer(ngrams=(1, 2), bits=18)
    compiled = read_corpus(corpora.open(str(path)), featurizer)
    assert compiled.texts is None and featurised(compiled, featurizer) is compiled
    python = corpora.open(str(path)).read()
    made = featurised(python, featurizer)
    assert made.texts is None and made.labels == python.labels == compiled.labels.tolist()
    for name in ("indptr", "indices"):
        assert np.array_equal(getattr(made.rows, name), getattr(compiled.rows, name))
    assert np.array_equal(made.keys, compiled.keys)
    named = Featurizer(ngrams=(1, 2), bits=18, keep_names=True)
    assert featurised(python, named) is python


def test_a_calibrated_fit_of_its_own_rows_learns_what_a_copy_learns(tmp_path):
    """``copy=False`` with calibration folds: the rows held coded and weighed as each
    fold reads its documents, the final network writing its rows over their indices;
    the same network, sigmoids and probabilities as a fit that copies them."""
    path = tmp_path / "c.tsv"
    path.write_text("".join(f"{'abc'[i % 3]}\tdoc {i % 11} about {'abc'[i % 3]} topic "
                            f"{i % 7} {'word ' * (i % 4)}\n" for i in range(300)),
                    encoding="utf-8")
    options = dict(epochs=2, calibrate="cv:3", bits=18, relevance=0.25)
    featurizer = snowpy.SnowClassifier(**options).make_featurizer()
    kept, given = (read_rows(path, featurizer, format="tsv") for _ in range(2))
    copied = snowpy.SnowClassifier(**options).fit_rows(kept.rows, kept.labels, keys=kept.keys)
    own = snowpy.SnowClassifier(**options).fit_rows(given.rows, given.labels,
                                                    keys=given.keys, copy=False)
    assert not np.array_equal(given.rows.indices, kept.rows.indices)  # (written over)
    copied_state, own_state = copied.to_state()[1], own.to_state()[1]
    assert copied_state.keys() == own_state.keys()
    for name in copied_state:
        assert np.array_equal(copied_state[name], own_state[name]), name
    texts = ["doc 3 about b topic 2", "doc 5 about c topic 6 word word"]
    assert np.array_equal(copied.predict_proba(texts), own.predict_proba(texts))
