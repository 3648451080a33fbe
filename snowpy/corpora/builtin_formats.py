"""The built-in corpus formats, registered through the same hook as a plugin's
(:func:`snowpy.hookspecs.snowpy_corpus_formats`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from snowpy.corpora.delimited import read_csv, read_fasttext, read_tsv
from snowpy.corpora.directory import read_directory
from snowpy.corpora.jsonl import read_jsonl
from snowpy.exceptions import ConfigurationError
from snowpy.hookspecs import hookimpl
from snowpy.corpora.spec import FormatSpec

__all__ = ["snowpy_corpus_formats"]

_TEXT_FILE = ("encoding", "decode")


def _decoding(given: Mapping[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if given.get("encoding"):
        options["encoding"] = given["encoding"]
    if given.get("decode", "strict") != "strict":
        options["errors"] = given["decode"]
    return options


def _records(given: Mapping[str, Any]) -> dict[str, Any]:
    """The reader's options every format of records takes (of those it was given): the
    decoding, and ``multilabel``."""
    return {**_decoding(given), **({"multilabel": True} if given.get("multilabel") else {})}


def _column_number(value: str, option: str) -> int:
    if not value.isdigit():
        raise ConfigurationError(f"{option} {value!r}: a tsv file has no header; give the "
                                 "column's number, counting from 0")
    return int(value)


def _column(value: str) -> int | str:
    return int(value) if value.isdigit() else value


def _tsv(given: Mapping[str, Any]) -> dict[str, Any]:
    options = _records(given)
    if given.get("label_column") is not None:
        options["label_column"] = _column_number(given["label_column"], "--label-column")
    if given.get("text_column"):
        options["text_column"] = _column_number(given["text_column"][-1], "--text-column")
    return options


def _csv(given: Mapping[str, Any]) -> dict[str, Any]:
    options = _records(given)
    if given.get("label_column") is not None:
        options["label_column"] = _column(given["label_column"])
    if given.get("text_column"):
        options["text_columns"] = [_column(c) for c in given["text_column"]]
    if given.get("header") is not None:
        options["header"] = given["header"]
    return options


def _jsonl(given: Mapping[str, Any]) -> dict[str, Any]:
    options = _records(given)
    if given.get("label_field"):
        options["label_field"] = given["label_field"]
    if given.get("text_field"):
        options["text_fields"] = list(given["text_field"])
    return options


@hookimpl
def snowpy_corpus_formats() -> list[FormatSpec]:
    return [
        FormatSpec("tsv", "label<TAB>text lines (.tsv, and any file no other format claims)",
                   read_tsv, extensions=(".tsv",),
                   options=(*_TEXT_FILE, "label_column", "text_column", "multilabel"),
                   layout=_tsv),
        FormatSpec("csv", "comma-separated values with a header", read_csv,
                   extensions=(".csv",),
                   options=(*_TEXT_FILE, "label_column", "text_column", "header",
                            "multilabel"), layout=_csv),
        FormatSpec("jsonl", "JSON Lines: an object per line, label and text fields",
                   read_jsonl, extensions=(".jsonl", ".ndjson", ".json"),
                   options=("label_field", "text_field", "multilabel"), layout=_jsonl),
        FormatSpec("fasttext", "fastText lines: __label__ tags, then the text",
                   read_fasttext, sniff=lambda head: head.lstrip()[:9] == b"__label__",
                   options=(*_TEXT_FILE, "multilabel"), layout=_records,
                   several_labels=True),
        FormatSpec("directory", "a folder (or .tar.gz/.zip) of class folders, a document "
                   "per file; train/ and test/ splits", read_directory,
                   options=(*_TEXT_FILE, "multilabel"), layout=_decoding, splits=True),
    ]
