"""A corpus file read in compiled code: from its bytes to rows, labels and keys.

``label<TAB>text`` and fastText files, the formats of corpora that are large, are
read by :func:`snowpy._core.reader.parse_lines` in pieces of about 8 MB, one thread
per core: no Python object per document, the front end's tokeniser and word n-grams
applied as the pieces are read (the same features as :meth:`Featurizer.rows` gives
for the texts a Python reader reads: ``tests/test_files.py``). The file is mapped into
memory, not copied.

The compiled reader takes clean files only: a line the Python reader treats in a way
of its own (bytes that are not UTF-8, a malformed line, an empty label, whitespace
outside ASCII where it splits) makes :func:`read_rows` return None with the reason,
and the caller reads the file in Python (:func:`snowpy.corpora.read`), which reports,
skips or replaces as it always does. So do front ends other than word n-grams. A
UTF-8 byte-order mark is no text, as for the Python reader: it is passed over.

>>> import tempfile, os
>>> from snowpy.text import Featurizer
>>> with tempfile.TemporaryDirectory() as folder:
...     path = os.path.join(folder, "c.tsv")
...     _ = open(path, "w").write("ham\\tsee you at lunch\\nspam\\twin a prize\\n")
...     read = read_rows(path, Featurizer(ngrams=(1, 2)), format="tsv")
>>> read.rows.shape[0], read.labels.tolist()
(2, ['ham', 'spam'])
"""

from __future__ import annotations

import codecs
import io
import mmap
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from collections.abc import Iterator
from typing import Any, BinaryIO

import numpy as np

from snowpy._core.reader import parse_lines
from snowpy._rows import Rows
from snowpy._validation import threads_of
from snowpy.corpora.corpus import Corpus, Read, settled_labels
from snowpy.corpora.documents import Problems, max_document_bytes
from snowpy.text.featurizer import as_documents
from snowpy.text.keys import document_keys, keys_of, label_parts

__all__ = ["Chained", "NotCompiled", "featurised", "read_blocks", "read_corpus",
           "read_rows", "reads_in_compiled_code", "stream_corpus"]

#: Bytes per piece a thread reads.
PIECE = 8 << 20


def reads_in_compiled_code(featurizer: Any) -> bool:
    """Whether the front end is one the compiled reader applies: word n-grams only, no
    token pattern, no Unicode normalisation, one text field."""
    return featurizer.fields is None and not featurizer.unicode_form \
        and not featurizer.strip_accents and featurizer.words_only() is not None


def _pieces(content: Any, size: int) -> list[tuple[int, int]]:
    """``(begin, end)`` of pieces of about :data:`PIECE` bytes, cut after line feeds (a
    UTF-8 byte-order mark passed over)."""
    bounds = [len(codecs.BOM_UTF8) if content[:3] == codecs.BOM_UTF8 else 0]
    while bounds[-1] < size:
        cut = bounds[-1] + PIECE
        if cut >= size:
            bounds.append(size)
            break
        newline = content.find(b"\n", cut)
        bounds.append(size if newline < 0 else newline + 1)
    return list(zip(bounds[:-1], bounds[1:]))


class NotCompiled(Exception):
    """The file is one the compiled reader leaves to the Python reader (the reason; for a
    stream, ``rest``: the bytes left to read)."""

    def __init__(self, reason: str, rest: Any = None) -> None:
        super().__init__(reason)
        self.rest = rest
        self.line = 1  # (the number of the first line of ``rest``)


def read_blocks(stream: BinaryIO | io.RawIOBase, featurizer: Any, *, format: str,
                multilabel: bool = False, prefix: str = "__label__", size: int = 1 << 20
                ) -> Iterator[Read]:
    """A ``tsv`` or ``fasttext`` byte stream (standard input, a pipe) read and featurised
    in compiled code, block after block of about ``size`` bytes of whole lines, as they
    arrive. A block the compiled reader does not take (see the module) raises
    :class:`NotCompiled`, whose ``rest`` is a byte stream of that block and everything
    after it, for the Python reader, and ``line`` the number of its first line."""
    if format not in ("tsv", "fasttext") or not reads_in_compiled_code(featurizer):
        raise NotCompiled(f"{format} streams, or this front end", rest=stream)
    settings = _settings(featurizer, format, multilabel, prefix)
    width = 1 << int(featurizer.bits)
    carry = b""
    lines = 0
    while True:
        data = stream.read(size)
        chunk = carry + data if data else carry
        end = chunk.rfind(b"\n") + 1 if data else len(chunk)
        if not chunk:
            return
        carry = chunk[end:]
        block = chunk[:end]
        if not block:
            continue
        try:
            read = _merged([parse_lines(block, *settings)], format, multilabel, width)
        except NotCompiled as failed:
            failed.rest = Chained(chunk, stream)
            failed.line = lines + 1
            raise
        lines += read.lines
        yield read


class Chained(io.RawIOBase):
    """``head``, then the rest of ``stream`` (the bytes a reader looked at first, or those
    the compiled reader left)."""

    def __init__(self, head: bytes, stream: BinaryIO | io.RawIOBase) -> None:
        self.head = memoryview(head)
        self.stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.head.nbytes:
            n = min(len(buffer), self.head.nbytes)
            buffer[:n] = self.head[:n]
            self.head = self.head[n:]
            return n
        data = self.stream.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def _settings(featurizer: Any, format: str, multilabel: bool, prefix: str) -> tuple:
    """What :func:`snowpy._core.reader.parse_lines` takes after the bytes."""
    return (1 if format == "fasttext" else 0, bool(multilabel), prefix.encode("utf-8"),
            *featurizer.word_settings(), max_document_bytes())


def read_rows(path: str | os.PathLike, featurizer: Any, *, format: str,
              multilabel: bool = False, prefix: str = "__label__",
              threads: int | None = None) -> Read | None:
    """Read and featurise a ``tsv`` (``label<TAB>text``) or ``fasttext`` file, its pieces
    on ``threads`` threads at once (default: the featurizer's ``n_jobs``); None when the
    file or the front end is not one the compiled reader takes (see the module)."""
    try:
        return _read_rows(Path(path), featurizer, format, multilabel, prefix, threads)
    except NotCompiled:
        return None


def _read_rows(path: Path, featurizer: Any, format: str, multilabel: bool, prefix: str,
               threads: int | None) -> Read:
    if format not in ("tsv", "fasttext") or not reads_in_compiled_code(featurizer):
        raise NotCompiled(f"{format} files, or this front end")
    if not path.is_file():
        raise NotCompiled("not a regular file")
    settings = _settings(featurizer, format, multilabel, prefix)
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            raise NotCompiled("an empty file")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as content:
            pieces = _pieces(content, size)
            if not pieces:
                raise NotCompiled("a byte-order mark alone")
            view = memoryview(content)

            def parse(bounds: tuple[int, int]) -> dict[str, Any]:
                piece = view[bounds[0]:bounds[1]]
                try:
                    return parse_lines(piece, *settings)
                finally:
                    piece.release()

            try:
                jobs = threads or threads_of(featurizer.n_jobs)
                with ThreadPoolExecutor(max_workers=jobs) as pool:
                    parsed = list(pool.map(parse, pieces))
            finally:
                view.release()
    read = _merged(parsed, format, multilabel, 1 << int(featurizer.bits))
    blank = sum(p["blank"] for p in parsed)
    if blank:  # (said as the Python reader says it)
        read.problems.note(f"{path}: {blank:,} blank line(s) skipped")
    return read


def _merged(parsed: list[dict[str, Any]], format: str, multilabel: bool,
            width: int) -> Read:
    for part in parsed:
        if part["anomaly"] is not None:
            raise NotCompiled(part["anomaly"][0])
    names: list[str] = []
    number: dict[str, int] = {}
    local: list[np.ndarray] = []
    for part in parsed:  # each piece's labels, decoded and merged into one table
        ids = np.empty(len(part["labels"]), dtype=np.int32)
        for i, raw in enumerate(part["labels"]):
            try:
                label = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise NotCompiled("a label that is not UTF-8") from None
            if format == "tsv":
                label = label.strip()  # (as the Python reader: whitespace outside ASCII too)
                if not label:
                    raise NotCompiled("an empty label")
            ids[i] = number.setdefault(label, len(names))
            if ids[i] == len(names):
                names.append(label)
        local.append(ids)
    indptr = _joined_pointers(parsed, "indptr", "indices")
    n_docs = indptr.shape[0] - 1
    indices = np.concatenate([p["indices"] for p in parsed]) if parsed else \
        np.zeros(0, np.int32)
    binary = parsed[0]["data"] is None
    data = None if binary else np.concatenate([p["data"] for p in parsed])
    label_ids = np.concatenate([local[k][p["label_ids"]] for k, p in enumerate(parsed)])
    label_ptr = _joined_pointers(parsed, "label_ptr", "label_ids")
    parts = label_parts(names)
    if multilabel:
        labels: Any = [tuple(names[g] for g in label_ids[label_ptr[d]:label_ptr[d + 1]])
                       for d in range(n_docs)]
        per_doc = np.zeros(n_docs, dtype=np.uint64)
        filled = np.flatnonzero(np.diff(label_ptr) > 0)
        if filled.size:
            per_doc[filled] = np.add.reduceat(parts[label_ids], label_ptr[filled].astype(np.intp))
    else:
        labels = np.asarray(names, dtype=object)[label_ids].astype(str) if n_docs else \
            np.zeros(0, dtype=str)
        per_doc = parts[label_ids]
    text_hashes = np.concatenate([p["text_hashes"] for p in parsed])
    return Read(None, labels, Problems(), None, Rows(indptr, indices, data, width),
                keys_of(text_hashes, per_doc), sum(p["lines"] for p in parsed))


def _joined_pointers(parsed: list[dict[str, Any]], pointers: str, items: str) -> np.ndarray:
    """The pieces' CSR pointers (``pointers`` into their ``items``) as one array."""
    ends = np.cumsum([0] + [p[items].shape[0] for p in parsed[:-1]])
    return np.concatenate([np.zeros(1, np.int64)] + [p[pointers][1:] + end
                                                     for p, end in zip(parsed, ends)])


def read_corpus(corpus: Corpus, featurizer: Any = None) -> Read:
    """``corpus`` read whole (:func:`snowpy.corpora.open` opened it): a clean file of
    lines (:attr:`~snowpy.corpora.Corpus.line_file`) read and featurised by
    ``featurizer`` in compiled code, in parallel (rows, labels and shuffling keys, no
    text kept); anything else, or without a ``featurizer`` (or one that keeps feature
    names), by the Python reader (:meth:`~snowpy.corpora.Corpus.read`: texts)."""
    path = corpus.line_file
    if path is not None and featurizer is not None and not featurizer.keep_names:
        fasttext = corpus.format == "fasttext"
        read = read_rows(path, featurizer, format=str(corpus.format), multilabel=fasttext)
        if read is not None:
            for note in read.problems.notes:
                corpus.problems.note(note)
            labels = settled_labels(read.labels, fasttext, corpus.layout.multilabel)
            return Read(None, labels, corpus.problems, None, read.rows, read.keys, read.lines)
    return corpus.read()


def featurised(read: Read, featurizer: Any) -> Read:
    """``read``'s texts as rows of features (``featurizer``'s, before the document
    frequencies) and shuffling keys, the texts let go: what ``fit(texts, labels)`` trains
    on, without the texts held through training (tens of MB for a corpus of documents);
    read in compiled code already, or for a front end that keeps feature names (its fit
    reads them from the texts after training), ``read`` as it is."""
    if read.texts is None or featurizer.keep_names:
        return read
    texts = as_documents(read.texts)
    return Read(None, read.labels, read.problems, read.split,
                featurizer.rows(texts, names=False), document_keys(texts, read.labels),
                read.lines)


def stream_corpus(corpus: Corpus, featurizer: Any = None) -> Iterator[Any]:
    """``corpus``'s documents as they are read: standard input laid out as ``tsv`` or
    ``fasttext`` lines with no layout option, with a ``featurizer``, in blocks read and
    featurised in compiled code (:func:`read_blocks`), the Python reader taking over
    from the first block the compiled reader leaves to it; anything else one document
    at a time (:class:`~snowpy.corpora.Corpus` iterated)."""
    if corpus.name != "-" or featurizer is None or corpus.layout.given() \
            or corpus.format not in (None, "tsv", "fasttext"):
        return iter(corpus)
    return _stdin_blocks(featurizer, corpus.format, corpus.problems)


def _stdin_blocks(featurizer: Any, format: str | None, problems: Any) -> Iterator[Any]:
    from snowpy.corpora.delimited import line_format, read_stream

    stream = sys.stdin.buffer
    head = stream.read(1 << 16)
    if head.startswith(codecs.BOM_UTF8):  # (no text: the Python reader passes it over too)
        head = head[len(codecs.BOM_UTF8):]
    first = next((line for line in head.splitlines() if line.strip()), b"")
    kind = format or line_format(first.decode("utf-8", "replace"))
    try:
        yield from read_blocks(Chained(head, stream), featurizer, format=kind)
    except NotCompiled as failed:
        yield from read_stream(io.BufferedReader(failed.rest), format=kind,
                               problems=problems, first_line=failed.line)
