"""Reading a corpus from a path, in the format its name and content suggest."""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from snowpy.corpora.documents import CorpusError, Document, Problems
from snowpy.corpora.sources import is_archive, read_file

__all__ = ["FORMATS", "corpus_formats", "detect_format", "read"]

#: The built-in formats (:func:`corpus_formats` has the plugins' too); ``snow`` (SNoW examples)
#: is read by :func:`read_snow`.
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
    if name.endswith(".snow"):
        return "snow"
    # a name a built-in format claims is decided without scanning the installed plugins,
    # which come after the built-in ones anyway (a .tsv file: by its first bytes among the
    # built-in formats, fastText's lines or tsv)
    for installed in (False, True):
        specs = corpus_formats(installed=installed)
        claimed = next((spec.name for spec in specs.values()
                        if spec.extensions and name.endswith(spec.extensions)), None)
        if claimed is not None:
            break
    if claimed is not None and claimed != "tsv":
        return claimed
    try:
        if "::" in text or not Path(text).is_file():  # (a pipe or a device: refused)
            _, content = read_file(path)
        else:  # (the head says it: a large corpus is not read for its first line)
            with open(text, "rb") as handle:
                content = handle.read(1 << 16)
    except (CorpusError, OSError):
        return "tsv"
    head = content[:1 << 16].removeprefix(codecs.BOM_UTF8)  # (a mark is no text)
    for spec in specs.values():
        if spec.sniff is not None and spec.sniff(head):
            return spec.name
    return "tsv"


def read(path: str | os.PathLike, *, format: str | None = None, split: str | None = None,
         problems: Problems | None = None, **options: Any) -> Iterator[Document]:
    """Stream the documents of the corpus at ``path`` (``format`` guessed when None).

    ``options`` go to the format's reader (``label_column=...``,
    ``encoding=...``); ``split`` applies to directory corpora.
    """
    chosen = format or detect_format(path)
    if chosen == "snow":
        raise CorpusError(f"{path}: SNoW example files hold features, not text; "
                          "read them with snowpy.corpora.read_snow")
    specs = corpus_formats()
    spec = specs.get(chosen)
    if spec is None:
        raise CorpusError(f"unknown corpus format {chosen!r}; choose one of: "
                          f"{', '.join([*specs, 'snow'])}")
    if spec.splits:
        return spec.read(path, split=split, problems=problems, **options)
    if split is not None:
        raise CorpusError(f"{path}: a {chosen} file has no splits (split={split!r})")
    return spec.read(path, problems=problems, **options)


def corpus_formats(*, installed: bool = True) -> dict[str, Any]:
    """Every corpus format by name (:class:`~snowpy.corpora.spec.FormatSpec`), the
    built-in ones first, then the plugins' (``installed=False``: the built-in ones)."""
    from snowpy.plugins import list_formats

    return {name: provided.record
            for name, provided in list_formats(installed=installed).items()}
