"""The compiled reader's Python side (``snowpy/files.py``) beyond a whole file read at
once (``tests/test_files.py``): a byte stream read block by block as it arrives (standard
input), the Python reader taking over from the first block the compiled reader leaves
to it, a file read in pieces on threads, and which corpora are read in compiled code."""

import io

import numpy as np
import pytest

import snowpy.corpora
from snowpy import files
from snowpy.files import NotCompiled, read_blocks, read_corpus, read_rows
from snowpy.text import Featurizer

LINES = (b"ham\tsee you at lunch\nspam\twin a free prize now\nham\tlunch at noon today\n"
         b"spam\tfree phone\nham\tnoon then\n")


def whole(reads):
    """Blocks' reads as one: rows, labels, keys and lines."""
    rows = [read.rows.tocsr() for read in reads]
    import scipy.sparse as sp

    return (sp.vstack(rows).toarray(), [str(v) for r in reads for v in r.labels],
            np.concatenate([r.keys for r in reads]).tolist(), sum(r.lines for r in reads))


@pytest.fixture
def once(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_bytes(LINES)
    read = read_rows(path, Featurizer(ngrams=(1, 2)), format="tsv")
    return read.rows.toarray(), [str(v) for v in read.labels], read.keys.tolist(), read.lines


@pytest.mark.parametrize("size", [1, 7, 23, 1 << 20])
def test_a_stream_in_blocks_of_any_size_reads_as_the_whole_file(once, size):
    reads = list(read_blocks(io.BytesIO(LINES), Featurizer(ngrams=(1, 2)), format="tsv",
                             size=size))
    got = whole(reads)
    np.testing.assert_array_equal(got[0], once[0])
    assert got[1:] == once[1:] == (["ham", "spam", "ham", "spam", "ham"], once[2], 5)
    if size == 1:  # a block as each line completes
        assert [read.lines for read in reads] == [1] * 5
    # the last line without its line feed is read too, once the stream ends
    tail = list(read_blocks(io.BytesIO(LINES[:-1]), Featurizer(ngrams=(1, 2)), format="tsv",
                            size=size))
    assert whole(tail)[1:] == once[1:]


def test_fasttext_blocks_take_their_prefix_and_sets_of_labels(tmp_path):
    data = b"#a #b first text\n#b second one\n"
    reads = list(read_blocks(io.BytesIO(data), Featurizer(), format="fasttext",
                             multilabel=True, prefix="#", size=5))
    assert [tuple(v) for r in reads for v in r.labels] == [("a", "b"), ("b",)]
    single = list(read_blocks(io.BytesIO(b"__label__x one two\n"), Featurizer(),
                              format="fasttext"))
    assert [str(v) for v in single[0].labels] == ["x"]


def test_the_python_reader_takes_over_at_the_first_block_left_to_it():
    """A block the compiled reader does not take (bytes that are not UTF-8) raises
    NotCompiled: its ``rest`` is that block and everything after it, ``line`` the
    number of the block's first line; the blocks before it were read."""
    bad = b"ham\tcaf\xe9 au lait\n"
    data = LINES + bad + b"spam\tlast one\n"
    reads = read_blocks(io.BytesIO(data), Featurizer(), format="tsv", size=1)
    done = [next(reads) for _ in range(5)]
    assert [r.lines for r in done] == [1] * 5
    with pytest.raises(NotCompiled) as failed:
        next(reads)
    assert failed.value.line == 6
    assert failed.value.rest.read() == bad + b"spam\tlast one\n"
    reads = read_blocks(io.BytesIO(data), Featurizer(), format="tsv", size=1 << 20)
    with pytest.raises(NotCompiled) as failed:  # (one block: all of it)
        next(reads)
    assert failed.value.line == 1 and failed.value.rest.read() == data


@pytest.mark.parametrize("format, featurizer", [
    ("csv", Featurizer()), ("tsv", Featurizer(token_pattern=r"\w+")),
    ("tsv", Featurizer(unicode_form="NFC")), ("fasttext", Featurizer(strip_accents=True)),
])
def test_streams_the_compiled_reader_does_not_take_are_handed_back_whole(format, featurizer):
    stream = io.BytesIO(LINES)
    with pytest.raises(NotCompiled, match=f"^{format} streams, or this front end$") as failed:
        next(read_blocks(stream, featurizer, format=format))
    assert failed.value.rest is stream and failed.value.line == 1
    assert stream.read() == LINES  # (nothing read from it)


@pytest.mark.parametrize("data, format, reason", [
    (b"ham\tok\nno tab here\n", "tsv", "a line without a tab"),
    (b"sp\xffam\ttext\n", "tsv", "a label that is not UTF-8"),
    (b"ham\tok\n\xc2\xa0\tnbsp label\n", "tsv", "an empty label"),  # (after Python's strip)
    (b"__label__a one\n__label__a __label__b two\n", "fasttext",
     "several labels on a single-label line"),
])
def test_a_block_left_to_python_says_why(data, format, reason):
    """A block the compiled reader leaves to Python raises ``NotCompiled`` naming why, and
    hands the block back whole."""
    with pytest.raises(NotCompiled) as failed:
        list(read_blocks(io.BytesIO(data), Featurizer(), format=format))
    assert str(failed.value) == reason and failed.value.rest.read() == data


def test_a_tsv_streams_labels_are_stripped_as_python_strips_them():
    """A ``tsv`` label loses the whitespace around it, outside ASCII too (Python's
    ``strip``); a fastText block's labels are taken as read."""
    reads = list(read_blocks(io.BytesIO("\u2003ham \tone\nspam\u00a0\ttwo\n".encode()),
                             Featurizer(bits=12), format="tsv"))
    assert [str(v) for read in reads for v in read.labels] == ["ham", "spam"]
    assert reads[0].rows.shape == (2, 4096)


def test_a_chained_stream_gives_its_head_then_the_rest():
    chained = files.Chained(b"head ", io.BytesIO(b"and the rest"))
    assert chained.readable()
    assert io.BufferedReader(chained, buffer_size=3).read() == b"head and the rest"
    buffer = bytearray(4)
    again = files.Chained(b"ab", io.BytesIO(b"cdef"))
    assert again.readinto(buffer) == 2 and bytes(buffer[:2]) == b"ab"
    assert again.readinto(buffer) == 4 and bytes(buffer) == b"cdef"
    assert again.readinto(buffer) == 0
    longer = files.Chained(b"", io.BytesIO(b"abcdefgh"))  # (the rest a buffer at a time)
    assert longer.readinto(buffer) == 4 and bytes(buffer) == b"abcd"
    assert longer.readinto(buffer) == 4 and bytes(buffer) == b"efgh"


@pytest.mark.parametrize("piece", [8, 25, 64])
def test_a_file_read_in_pieces_on_threads_reads_as_in_one(tmp_path, once, monkeypatch, piece):
    path = tmp_path / "c.tsv"
    path.write_bytes(LINES * 3)
    expected = read_rows(path, Featurizer(ngrams=(1, 2)), format="tsv")
    monkeypatch.setattr(files, "PIECE", piece)
    bounds = files._pieces(LINES * 3, len(LINES) * 3)
    assert bounds[0][0] == 0 and bounds[-1][1] == len(LINES) * 3
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))  # (no gap, no overlap)
    assert all((LINES * 3)[end - 1:end] == b"\n" for _, end in bounds)  # after line feeds
    assert all(end - begin >= min(piece, len(LINES) * 3 - begin) for begin, end in bounds)
    for threads in (1, 3):
        read = read_rows(path, Featurizer(ngrams=(1, 2)), format="tsv", threads=threads)
        np.testing.assert_array_equal(read.rows.toarray(), expected.rows.toarray())
        assert read.labels.tolist() == expected.labels.tolist()
        assert read.keys.tolist() == expected.keys.tolist() and read.lines == 15
    assert files._pieces(b"no line feed at all", 19) == [(0, 19)]  # (a line is never cut)
    monkeypatch.setattr(files, "PIECE", 4)  # (each cut after the first line feed it meets)
    assert files._pieces(b"aaaa\nbb\ncccccc\nd\n", 17) == [(0, 5), (5, 15), (15, 17)]


def test_which_corpora_are_read_in_compiled_code(tmp_path):
    """A clean tsv or fastText file with a featurizer that keeps no names: rows, no
    texts; without a featurizer, or one keeping feature names, or a file the compiled
    reader leaves (its blank lines said as the Python reader says them): texts."""
    path = tmp_path / "c.tsv"
    path.write_bytes(LINES)
    compiled = read_corpus(snowpy.corpora.open(str(path)), Featurizer())
    assert compiled.texts is None and compiled.rows.shape[0] == 5
    assert [str(v) for v in compiled.labels] == ["ham", "spam", "ham", "spam", "ham"]
    assert compiled.lines == 5
    for featurizer in (None, Featurizer(keep_names=True)):
        read = read_corpus(snowpy.corpora.open(str(path)), featurizer)
        assert read.texts is not None and len(read.texts) == 5
    blank = tmp_path / "blank.tsv"
    blank.write_bytes(LINES.replace(b"\nspam\tfree", b"\n\n\nspam\tfree"))
    corpus = snowpy.corpora.open(str(blank))
    read = read_corpus(corpus, Featurizer())
    assert read.texts is None and read.rows.shape[0] == 5
    assert read.problems is corpus.problems
    assert corpus.problems.notes == [f"{blank}: 2 blank line(s) skipped"]
    fast = tmp_path / "c.ft"
    fast.write_bytes(b"__label__a __label__b one\n__label__b two\n")
    read = read_corpus(snowpy.corpora.open(str(fast), format="fasttext"), Featurizer())
    assert read.texts is None
    assert [list(v) if not isinstance(v, str) else v for v in read.labels] == \
        [["a", "b"], ["b"]]


def test_a_corpus_read_in_compiled_code_settles_its_labels_as_python_does(tmp_path):
    """fastText lines of one label each are single-label (strings); ``multilabel`` makes
    each label a set, of one."""
    from snowpy.corpora.corpus import Layout

    fasttext = tmp_path / "f.txt"
    fasttext.write_bytes(b"__label__a one two\n__label__b three\n")
    read = read_corpus(snowpy.corpora.open(str(fasttext)), Featurizer())
    assert read.texts is None and read.labels.tolist() == ["a", "b"]
    path = tmp_path / "c.tsv"
    path.write_bytes(LINES)
    read = read_corpus(snowpy.corpora.open(str(path), layout=Layout(multilabel=True)),
                       Featurizer())
    assert read.texts is None
    assert [tuple(map(str, v)) for v in read.labels] == [("ham",), ("spam",), ("ham",),
                                                         ("spam",), ("ham",)]


def _stdin(monkeypatch, data):
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_standard_input_with_a_front_end_is_read_in_compiled_blocks(monkeypatch, once):
    """``stream_corpus``: standard input (``-``), in a line format given or none, without
    layout options, with a featurizer, is read in compiled blocks (rows, no texts), as
    the file of the same lines is; anything else is the corpus's documents one at a
    time (texts)."""
    from snowpy.corpora.corpus import Layout
    from snowpy.files import stream_corpus

    for format in (None, "tsv"):
        _stdin(monkeypatch, LINES)
        reads = list(stream_corpus(snowpy.corpora.open("-", format=format),
                                   Featurizer(ngrams=(1, 2))))
        assert all(isinstance(read, files.Read) for read in reads)
        got = whole(reads)
        np.testing.assert_array_equal(got[0], once[0])
        assert got[1:] == once[1:]
    for options, featurizer in (({}, None), ({"layout": Layout(multilabel=True)},
                                             Featurizer())):
        _stdin(monkeypatch, LINES)
        documents = list(stream_corpus(snowpy.corpora.open("-", **options), featurizer))
        assert [document.text for document in documents][:2] == \
            ["see you at lunch", "win a free prize now"] and len(documents) == 5
    _stdin(monkeypatch, LINES)
    with pytest.raises(snowpy.corpora.CorpusError, match="^<stdin>: a stream is read as tsv "
                       "or fasttext lines, not 'csv'$"):
        list(stream_corpus(snowpy.corpora.open("-", format="csv"), Featurizer()))
    # a JSON Lines corpus piped in said "expected 2 fields separated by '\t', found 1"
    # (a new user's report): named as what a stream is not read as, by both readers
    for featurizer in (Featurizer(), None):
        _stdin(monkeypatch, b'{"label": "ham", "text": "see you"}\n')
        with pytest.raises(snowpy.corpora.CorpusError, match="^<stdin>: a stream is read as "
                           "tsv or fasttext lines, and its first line is a JSON object"):
            list(stream_corpus(snowpy.corpora.open("-"), featurizer))


def test_a_file_named_is_streamed_as_its_documents(tmp_path):
    from snowpy.files import stream_corpus

    path = tmp_path / "c.tsv"
    path.write_bytes(LINES)
    documents = list(stream_corpus(snowpy.corpora.open(str(path)), Featurizer()))
    assert [str(document.label) for document in documents] == \
        ["ham", "spam", "ham", "spam", "ham"]


def test_standard_inputs_format_is_its_first_non_blank_lines_unless_given(monkeypatch):
    """Without ``--format``, the first line that is not blank decides (``__label__`` at
    its start: fastText); a format given is read as given."""
    from snowpy.files import stream_corpus

    _stdin(monkeypatch, b"\n \n__label__a one two\n__label__b three\n")
    reads = list(stream_corpus(snowpy.corpora.open("-"), Featurizer()))
    assert [str(v) for read in reads for v in read.labels] == ["a", "b"]
    _stdin(monkeypatch, b"__label__a\tone two\n__label__b\tthree\n")
    reads = list(stream_corpus(snowpy.corpora.open("-", format="tsv"), Featurizer()))
    assert [str(v) for read in reads for v in read.labels] == ["__label__a", "__label__b"]
    _stdin(monkeypatch, b"__label__a one\n__label__b two\n")
    reads = list(stream_corpus(snowpy.corpora.open("-", format="fasttext"), Featurizer()))
    assert isinstance(reads[0], files.Read)
    for empty in (b"", b"\n \n"):  # (nothing to decide by: no document)
        _stdin(monkeypatch, empty)
        reads = list(stream_corpus(snowpy.corpora.open("-"), Featurizer()))
        assert all(isinstance(read, files.Read) and read.rows.shape[0] == 0 for read in reads)


def test_a_first_line_of_standard_input_that_is_not_utf8_is_the_readers_to_report(
        monkeypatch):
    """The format is decided from the first line even when it is not UTF-8; the reader
    then reports that line as it reports any (the file's name and line), or skips it."""
    from snowpy.corpora.documents import CorpusError
    from snowpy.files import stream_corpus

    stream = b"caf\xe9\tau lait\nham\tsee you\n"
    _stdin(monkeypatch, stream)
    with pytest.raises(CorpusError, match="^<stdin>:1: not valid utf-8"):
        list(stream_corpus(snowpy.corpora.open("-"), Featurizer()))
    _stdin(monkeypatch, stream)
    corpus = snowpy.corpora.open("-", on_error="skip")
    assert [d.text for d in stream_corpus(corpus, Featurizer())] == ["see you"]
    assert corpus.problems.skipped == 1


def test_standard_input_goes_to_the_python_reader_from_the_block_it_leaves(monkeypatch):
    """Clean blocks are read in compiled code; from the first block the compiled reader
    leaves (a line that is not UTF-8), the Python reader reads on, numbering lines from
    that block's first, and reports what it skips in the corpus's problems."""
    from snowpy.corpora.documents import CorpusError
    from snowpy.files import stream_corpus

    clean = LINES * 12_000  # (1.3 MB: a first block of about 1 MiB in compiled code)
    stream = clean + b"ham\tcaf\xe9 au lait\nspam\tlast one\n"
    bad = 5 * 12_000 + 1
    _stdin(monkeypatch, stream)
    corpus = snowpy.corpora.open("-", on_error="skip")
    items = list(stream_corpus(corpus, Featurizer()))
    compiled = [item for item in items if isinstance(item, files.Read)]
    documents = [item for item in items if not isinstance(item, files.Read)]
    assert compiled and items[:len(compiled)] == compiled
    assert sum(read.lines for read in compiled) + len(documents) == bad
    assert documents[-1].text == "last one" and documents[-1].source == f"<stdin>:{bad + 1}"
    assert corpus.problems.skipped == 1
    assert corpus.problems.messages == [f"<stdin>:{bad}: not valid utf-8"]
    _stdin(monkeypatch, stream)
    with pytest.raises(CorpusError, match=f"^<stdin>:{bad}: not valid utf-8"):
        list(stream_corpus(snowpy.corpora.open("-"), Featurizer()))
