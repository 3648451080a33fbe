"""Reading a corpus from a path, in the format its name and content suggest."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from snowpy.corpora.delimited import read_csv, read_fasttext, read_tsv
from snowpy.corpora.directory import read_directory
from snowpy.corpora.documents import CorpusError, Document, Problems
from snowpy.corpora.jsonl import read_jsonl
from snowpy.corpora.sources import is_archive, read_file

__all__ = ["FORMATS", "detect_format", "read"]

#: Formats :func:`read` knows; ``snow`` (SNoW examples) is read by :func:`read_snow`.
FORMATS = ("directory", "tsv", "csv", "jsonl", "fasttext", "snow")


def detect_format(path: str | os.PathLike) -> str:
    """The format of a corpus path, from its kind, extension and first line.

    >>> detect_format("reviews.jsonl"), detect_format("train.csv")
    ('jsonl', 'csv')
    """
    text = str(path)
    name = Path(text.split("::")[-1]).name.lower()
    if "::" not in text and (Path(text).is_dir() or is_archive(text)):
        return "directory"
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    if name.endswith(".csv"):
        return "csv"
    if name.endswith(".snow"):
        return "snow"
    try:
        if "::" in text or not Path(text).is_file():  # (a pipe or a device: refused)
            _, content = read_file(path)
        else:  # (the head says it: a large corpus is not read for its first line)
            with open(text, "rb") as handle:
                content = handle.read(1 << 16)
    except (CorpusError, OSError):
        return "tsv"
    return "fasttext" if content.lstrip()[:9] == b"__label__" else "tsv"


def read(path: str | os.PathLike, *, format: str | None = None, split: str | None = None,
         problems: Problems | None = None, **options: Any) -> Iterator[Document]:
    """Stream the documents of the corpus at ``path`` (``format`` guessed when None).

    ``options`` go to the format's reader (``label_column=...``,
    ``encoding=...``); ``split`` applies to directory corpora.
    """
    chosen = format or detect_format(path)
    if chosen not in FORMATS:
        raise CorpusError(f"unknown corpus format {chosen!r}; choose one of: {', '.join(FORMATS)}")
    if chosen == "snow":
        raise CorpusError(f"{path}: SNoW example files hold features, not text; "
                          "read them with snowpy.corpora.read_snow")
    if chosen != "directory" and split is not None:
        raise CorpusError(f"{path}: a {chosen} file has no splits (split={split!r})")
    readers: dict[str, Any] = {"tsv": read_tsv, "csv": read_csv, "jsonl": read_jsonl,
                               "fasttext": read_fasttext}
    if chosen == "directory":
        return read_directory(path, split=split, problems=problems, **options)
    return readers[chosen](path, problems=problems, **options)
