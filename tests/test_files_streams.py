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


def test_a_chained_stream_gives_its_head_then_the_rest():
    chained = files.Chained(b"head ", io.BytesIO(b"and the rest"))
    assert chained.readable()
    assert io.BufferedReader(chained, buffer_size=3).read() == b"head and the rest"
    buffer = bytearray(4)
    again = files.Chained(b"ab", io.BytesIO(b"cdef"))
    assert again.readinto(buffer) == 2 and bytes(buffer[:2]) == b"ab"
    assert again.readinto(buffer) == 4 and bytes(buffer) == b"cdef"
    assert again.readinto(buffer) == 0


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
    assert f"{blank}: 2 blank line(s) skipped" in corpus.problems.notes
    fast = tmp_path / "c.ft"
    fast.write_bytes(b"__label__a __label__b one\n__label__b two\n")
    read = read_corpus(snowpy.corpora.open(str(fast), format="fasttext"), Featurizer())
    assert read.texts is None
    assert [list(v) if not isinstance(v, str) else v for v in read.labels] == \
        [["a", "b"], ["b"]]
