"""Shards: the parts of a corpus that workers read for themselves.

A :class:`Shard` says where its documents are, never what they are: the
client plans shards (:func:`plan_shards`, itself run on a worker, so that the
paths need only exist where the workers run) and each worker reads its own
(:func:`read_shard`). Three kinds:

``"bytes"``
    Blocks of 64 KB of ``label<TAB>text``, fastText or plain-text files (one,
    or a glob of them), dealt round-robin: a block holds the lines that
    *begin* in it, so the shards cover every line once, and each shard draws
    from the whole corpus even when a file is sorted by label (IPM wants
    every shard to look like the corpus; contiguous halves of a sorted file
    cost 8 points of accuracy on 20 Newsgroups).
``"files"``
    Whole files of a glob of other formats, dealt round-robin.
``"stride"``
    Every ``count``-th document from ``index`` of anything else snowpy reads
    (class folders, archives, CSV, JSON Lines, registered corpora): each
    worker reads the corpus and keeps its share.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snowpy.corpora.corpus import Read
from snowpy.corpora.documents import Problems
from snowpy.exceptions import ConfigurationError

__all__ = ["Reading", "Shard", "plan_shards", "read_shard"]

#: Formats whose records are single lines (split by byte ranges).
_LINE_FORMATS = ("tsv", "fasttext", "lines")
#: The bytes of a block of a line file dealt to the shards.
BLOCK_BYTES = 1 << 16


@dataclass(frozen=True)
class Reading:
    """How the workers read a corpus: its shards, split, format and layout, what to do
    with a malformed record; and which columns of a dataframe hold the texts and labels.

    Parameters
    ----------
    shards : int, optional
        Shards of a corpus given by path (default: the workers' threads). A bag's or a
        dataframe's partitions are its shards.
    split : str, optional
        The split of a corpus that has splits (default: its training split to train,
        its test split to predict and evaluate).
    format : str, optional
        The corpus format (default: detected); ``"lines"`` to predict plain text, one
        document per line.
    layout : snowpy.corpora.Layout, optional
        The reader's options (the command line's ``--encoding``, ``--text-column`` and
        the like).
    on_error : {"raise", "skip"}
        A malformed record stops the run, or is counted and skipped.
    text_column, label_column : str
        A dataframe's columns of texts and of labels.

    Examples
    --------
    >>> Reading(split="test", on_error="skip").split
    'test'
    """

    shards: int | None = None
    split: str | None = None
    format: str | None = None
    layout: Any = None
    on_error: str = "raise"
    text_column: str = "text"
    label_column: str = "label"


@dataclass(frozen=True)
class Shard:
    """Where one shard's documents are (see the module's description)."""

    corpus: str
    kind: str                      # "bytes", "files" or "stride"
    index: int
    count: int
    format: str | None = None
    split: str | None = None
    blocks: tuple[tuple[str, int, int], ...] = ()  # (path, start, stop) of "bytes" shards
    files: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict, hash=False)
    on_error: str = "raise"

    def describe(self) -> str:
        if self.kind == "bytes":
            return f"{len(self.blocks)} blocks of {self.corpus} from byte {self.blocks[0][1]:,}" \
                if self.blocks else f"no block of {self.corpus}"
        if self.kind == "files":
            return f"{len(self.files)} file(s) of {self.corpus}"
        return f"{self.corpus} documents {self.index}::{self.count}"


def plan_shards(corpus: str, count: int, *, split: str | None = None,
                format: str | None = None, layout: Any = None,
                on_error: str = "raise", prefer: str = "train", interleave: bool = True
                ) -> list[Shard]:
    """Cut ``corpus`` into ``count`` shards (run where the workers see the paths).

    The corpus is opened by :func:`snowpy.corpora.open` (its files, format and split;
    ``layout``, the reader's options); a corpus with splits is read in ``split``, else
    in ``prefer``. ``interleave=False`` gives each shard consecutive blocks of a
    line file (prediction: the parts in order are the corpus in order).
    """
    from snowpy import corpora

    if count < 1:
        raise ConfigurationError(f"shards must be at least 1, got {count}")
    if corpus == "-":
        raise ConfigurationError("the workers read the corpus themselves: give a path, a "
                                 "glob or a registered corpus, not standard input")
    opened = corpora.open(corpus, split=split, format=None if format == "lines" else format,
                          layout=layout, prefer=prefer, on_error=on_error)
    common: dict[str, Any] = {"split": opened.split, "on_error": on_error}
    files = list(opened.files)
    if files:
        matches = files if opened.path is None else []  # (a glob's)
        kind = format or opened.format or corpora.detect_format(files[0])
        options = {} if layout is None else \
            dict(layout.for_format("tsv" if kind == "lines" else kind, corpus))
        if kind in _LINE_FORMATS and all(os.path.isfile(f) and not _compressed(f)
                                         for f in files):
            # blocks of 64 KB, smaller for a small corpus, so that every shard gets some
            total = sum(os.path.getsize(f) for f in files)
            step = min(BLOCK_BYTES, max(256, total // (4 * count)))
            blocks = [(f, start, min(start + step, size)) for f in files
                      for size in (os.path.getsize(f),) for start in range(0, size, step)]
            dealt = [blocks[i::count] if interleave else
                     blocks[i * len(blocks) // count:(i + 1) * len(blocks) // count]
                     for i in range(count)]
            return [Shard(corpus, "bytes", i, count, kind, blocks=tuple(dealt[i]),
                          options=options, **common) for i in range(count)]
        if matches:
            return [Shard(corpus, "files", i, count, kind, files=tuple(matches[i::count]),
                          options=options, **common)
                    for i in range(min(count, len(matches)))]
        return [Shard(corpus, "stride", i, count, kind, options=options, **common)
                for i in range(count)]
    return [Shard(corpus, "stride", i, count, None, **common) for i in range(count)]


def _compressed(path: str) -> bool:
    with open(path, "rb") as handle:
        magic = handle.read(4)
    return magic[:2] == b"\x1f\x8b" or magic[:4] == b"PK\x03\x04" or magic[:3] == b"BZh"


def read_shard(shard: Shard, featurizer: Any = None) -> Read:
    """The documents of ``shard``, read where this runs: their texts, labels and the
    problems met. With a ``featurizer``, a ``bytes`` shard of ``tsv`` lines with no
    layout option is read and featurised in compiled code, as one process reads a file
    (:func:`snowpy.files.read_blocks`: the same rows, labels and shuffling keys, no
    texts), unless its lines are ones the compiled reader leaves to the Python one."""
    from snowpy import corpora
    from snowpy.files import NotCompiled, read_blocks, reads_in_compiled_code

    problems = Problems(shard.on_error)
    if shard.format == "lines":  # plain text to predict: a document per line, no label
        return _plain_lines(shard)
    if shard.kind == "bytes":
        if featurizer is not None and shard.format == "tsv" and not shard.options \
                and reads_in_compiled_code(featurizer):
            data = b"".join(_line_range(*block) for block in shard.blocks)
            if data and not data.endswith(b"\n"):
                data += b"\n"  # (one block: every line whole)
            try:  # (the size holds every line)
                if data:
                    return next(read_blocks(io.BytesIO(data), featurizer, format="tsv",
                                            size=len(data) + 1))
            except NotCompiled:
                pass
            del data
        documents: list[Any] = []
        for path, start, stop in shard.blocks:
            documents.extend(corpora.read_stream(
                io.BytesIO(_line_range(path, start, stop)), format=shard.format,
                where=f"{path} (the block from byte {start:,}), line", problems=problems,
                **shard.options))
    elif shard.kind == "files":
        documents = []
        for path in shard.files:
            documents.extend(corpora.read(path, format=shard.format, problems=problems,
                                          **shard.options))
    elif shard.format is None:  # a registered corpus
        loaded = corpora.load(shard.corpus, shard.split, on_error=shard.on_error)
        documents = loaded.documents()[shard.index::shard.count]
        problems = loaded.problems
    else:
        documents = list(corpora.read(shard.corpus, format=shard.format, split=shard.split,
                                      problems=problems, **shard.options)
                         )[shard.index::shard.count]
    return Read([d.text for d in documents], [d.label for d in documents], problems, None)


def _plain_lines(shard: Shard) -> Read:
    """A document per line of plain text, decoded as one process decodes a file
    (:func:`snowpy.corpora.sources.decode`: a bad byte named by its offset, a byte-order
    mark no text)."""
    from snowpy.corpora.sources import decode

    if shard.kind == "bytes":
        chunks = [(_line_range(path, start, stop), f"{path} (the block from byte {start:,})")
                  for path, start, stop in shard.blocks]
    else:
        chunks = [(Path(path).read_bytes(), path) for path in shard.files]
    texts: list[Any] = []
    for data, where in chunks:
        text = decode(data, shard.options.get("encoding", "utf-8"),
                      shard.options.get("errors", "strict"), where) or ""
        texts.extend(line for line in text.splitlines() if line.strip())
    return Read(texts, [None] * len(texts), Problems(shard.on_error), None)


def _line_range(path: str, start: int, stop: int) -> bytes:
    """The bytes of the lines of ``path`` that begin in ``[start, stop)``."""
    with open(path, "rb") as handle:
        if start > 0:
            handle.seek(start - 1)
            if handle.read(1) != b"\n":
                handle.readline()  # the line under way belongs to the previous shard
        begin = handle.tell()
        if begin >= stop:
            return b""
        data = handle.read(stop - begin)
        if data and not data.endswith(b"\n"):
            data += handle.readline()  # finish the line begun before stop
    return data
