"""Line formats: ``label<TAB>text``, CSV with chosen columns, fastText ``__label__``;
from files, or from a stream as the lines arrive (:func:`read_stream`)."""

from __future__ import annotations

import csv
import io
import itertools
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO

from snowpy.corpora.documents import (
    CorpusError,
    Document,
    Problems,
    checked,
    max_document_bytes,
)
from snowpy.corpora.sources import bounded_lines, decode, iter_lines, read_file, recoded

__all__ = ["HEADER_WORDS", "columns_by_name", "fasttext_record", "looks_like_header", "read_csv", "line_format", "read_fasttext", "read_stream", "read_tsv", "tsv_record"]


def _line_records(source: str | os.PathLike, encoding: str, errors: str, problems: Problems,
                  record: Callable[[str, str], Document | None]) -> Iterator[Document]:
    """The documents ``record(line, where)`` makes of each non-blank line (None: a
    malformed one, reported); undecodable lines are reported."""
    where, content = read_file(source)
    blank = 0
    for at, line in iter_lines(content, where, encoding, errors):
        if line is None:
            problems.report(at, f"not valid {encoding}")
        elif not line.strip():
            blank += 1
        elif (document := record(line, at)) is not None:
            yield document
    if blank:
        problems.note(f"{where}: {blank:,} blank line(s) skipped")


def read_tsv(
    source: str | os.PathLike,
    *,
    label_column: int = 0,
    text_column: int = 1,
    separator: str = "\t",
    encoding: str = "utf-8",
    errors: str = "strict",
    problems: Problems | None = None,
    multilabel: bool = False,
) -> Iterator[Document]:
    """``label<TAB>text`` lines (SMS Spam, SST derived files), or other column orders.

    The text column takes the rest of the line when it is the last column,
    so a text holding the separator is kept whole. Blank lines are skipped; a
    line with too few fields or an empty label is malformed. With ``multilabel``, each
    document's label is a set of one (a tuple).
    """
    problems = problems or Problems()
    return _line_records(source, encoding, errors, problems, lambda line, at: tsv_record(
        line, at, problems, label_column=label_column, text_column=text_column,
        separator=separator, multilabel=multilabel))


def tsv_record(line: str, at: str, problems: Problems, *, label_column: int = 0,
               text_column: int = 1, separator: str = "\t", multilabel: bool = False
               ) -> Document | None:
    """One ``label<TAB>text`` line as a document (None, reported, when malformed); with
    ``multilabel`` its label a set of one (a tuple)."""
    needed = max(label_column, text_column) + 1
    fields = line.split(separator, needed - 1 if text_column == needed - 1 else -1)
    if len(fields) < needed:
        problems.report(at, f"expected {needed} fields separated by {separator!r}, "
                            f"found {len(fields)}")
        return None
    label = fields[label_column].strip()
    return checked(Document(fields[text_column], (label,) if multilabel else label, at),
                   problems)


def read_csv(
    source: str | os.PathLike,
    *,
    label_column: int | str | None = None,
    text_columns: Sequence[int | str] | None = None,
    header: bool | None = None,
    delimiter: str = ",",
    encoding: str = "utf-8",
    errors: str = "strict",
    problems: Problems | None = None,
    multilabel: bool = False,
) -> Iterator[Document]:
    """CSV rows with a chosen label column and text column(s) (AG News).

    Columns are indices, or names when the file has a header (``header``
    defaults to True when any column is given by name, else a first row of
    column words (``label,text``, ``v1,v2``) is taken for a header, and said
    in ``problems.notes``). Columns not given are found by header name
    (``category``, ``message``...), else the label is column 0 and the text
    column 1. Several text columns are joined by a space (AG News: title and
    description). The file is decoded whole (quoted fields may span lines):
    ``errors="skip"`` acts as ``"strict"``. With ``multilabel``, each document's label
    is a set of one (a tuple).
    """
    problems = problems or Problems()
    chosen = label_column is not None or text_columns is not None
    label_column = 0 if label_column is None else label_column
    text_columns = (1,) if text_columns is None else tuple(text_columns)
    where, content = read_file(source)
    text = decode(content, encoding, "strict" if errors == "skip" else errors, where)
    by_name = isinstance(label_column, str) or any(isinstance(c, str) for c in text_columns)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    names: list[str] = []
    ended = 0  # (the line the row before ended on: a quoted field may span lines)
    for row in reader:
        at, begun, ended = f"{where}:{reader.line_num}", ended + 1, reader.line_num
        if header is None:  # decided on the first row: by name, or a row of header words
            header = by_name or looks_like_header(row)
            if header and not by_name:
                problems.note(f"{where}: the first row ({', '.join(row)[:80]}) is a header, "
                              "not a document (--no-header reads it as one)")
        if header and not names:
            names = row
            if not chosen:
                label_column, text_columns = columns_by_name(row)
                if (label_column, text_columns) != (0, (1,)):
                    problems.note(f"{where}: labels from column {row[label_column]!r}, text "
                                  f"from {', '.join(repr(row[c]) for c in text_columns)}")
            missing = [c for c in (label_column, *text_columns)
                       if isinstance(c, str) and c not in names]
            if missing:
                problems.on_error = "raise"
                problems.report(at, f"no column {missing[0]!r} in the header {names}")
            continue
        if not row or not any(cell.strip() for cell in row):
            continue
        try:
            columns = [names.index(c) if isinstance(c, str) else c
                       for c in (label_column, *text_columns)]
            if not chosen and not names and len(row) > max(columns) + 1:
                chosen = True  # (said once, of the first row)
                unread = [str(c) for c in range(len(row)) if c not in columns]
                problems.note(
                    f"{where}: {len(row)} columns; labels from column {columns[0]}, text from "
                    f"column {', '.join(map(str, columns[1:]))}; column {', '.join(unread)} "
                    f"not read (--text-column {' --text-column '.join(map(str, columns[1:]))}"
                    f" --text-column {unread[-1]} joins it to the text)")
            label = row[columns[0]].strip()
            document = " ".join(row[c] for c in columns[1:])
            if "\n" in label:  # (a label of several lines: a quote opened and not closed)
                problems.report(f"{where}:{begun}", f"a quoted field runs on to line {ended}: "
                                "is a closing quote missing?")
                continue
        except IndexError:
            if any("\n" in cell for cell in row):
                problems.report(f"{where}:{begun}", f"a quoted field runs on to line {ended}: "
                                "is a closing quote missing?")
            else:
                problems.report(at, f"expected at least {max(columns) + 1} columns, found "
                                f"{len(row)}")
            continue
        checked_document = checked(Document(document, (label,) if multilabel else label, at),
                                   problems)
        if checked_document is not None:
            yield checked_document


#: Header words naming a label column, and a text column.
LABEL_WORDS = ("label", "labels", "class", "classes", "category", "categories", "target",
               "y", "tag", "tags", "topic", "sentiment", "polarity", "rating", "intent", "spam",
               "v1")
TEXT_WORDS = ("text", "texts", "message", "messages", "body", "review", "reviews", "sentence",
              "document", "doc", "content", "comment", "tweet", "question", "email", "v2")
#: Words that name a column rather than hold a value: a first row made of them is a header
#: (besides the label and text words, the title and the like, and an id or a type).
HEADER_WORDS = frozenset({*LABEL_WORDS, *TEXT_WORDS, "title", "subject", "description", "id",
                          "type"})


def columns_by_name(header: Sequence[str]) -> tuple[int, tuple[int, ...]]:
    """The label column and text column(s) a header names: the first label word, and the
    first text word (else the title or subject, else the first column that is neither);
    ``(0, (1,))`` when the header names no label.

    >>> columns_by_name(["message", "category"])
    (1, (0,))
    >>> columns_by_name(["id", "title", "label"])
    (2, (1,))
    """
    cells = [cell.strip().lower() for cell in header]
    label = next((i for i, cell in enumerate(cells) if cell in LABEL_WORDS), None)
    if label is None:
        return 0, (1,)
    for words in (TEXT_WORDS, ("title", "subject", "description")):
        text = next((i for i, cell in enumerate(cells) if cell in words and i != label), None)
        if text is not None:
            return label, (text,)
    rest = [i for i, cell in enumerate(cells) if i != label and cell not in ("id", "type")]
    return label, tuple(rest[:1]) or ((1,) if label == 0 else (0,))


def looks_like_header(row: Sequence[str]) -> bool:
    """Whether a CSV row names columns: every non-empty cell is a column word.

    >>> looks_like_header(["label", "text"]), looks_like_header(["spam", "Win a prize"])
    (True, False)
    """
    cells = [cell.strip().lower() for cell in row if cell.strip()]
    return bool(cells) and all(cell in HEADER_WORDS for cell in cells)


def read_fasttext(
    source: str | os.PathLike,
    *,
    multilabel: bool = False,
    prefix: str = "__label__",
    encoding: str = "utf-8",
    errors: str = "strict",
    problems: Problems | None = None,
) -> Iterator[Document]:
    """fastText lines: ``__label__a __label__b text...``.

    A line without a label is malformed; with ``multilabel=False`` so is a
    line with several (labels are then tuples).
    """
    problems = problems or Problems()
    return _line_records(source, encoding, errors, problems, lambda line, at: fasttext_record(
        line, at, problems, multilabel=multilabel, prefix=prefix))


def fasttext_record(line: str, at: str, problems: Problems, *, multilabel: bool = False,
                    prefix: str = "__label__") -> Document | None:
    """One fastText line as a document (None, reported, when malformed)."""
    words = line.split()
    labels = []
    while words and words[0].startswith(prefix):
        labels.append(words.pop(0)[len(prefix):])
    if not labels or not all(labels):
        problems.report(at, f"no {prefix}label at the start of the line")
        return None
    if not multilabel and len(labels) > 1:
        problems.report(at, f"{len(labels)} labels on a single-label line "
                            "(read with multilabel=True)")
        return None
    return checked(Document(" ".join(words), tuple(labels) if multilabel else labels[0], at),
                   problems)


def line_format(line: str, prefix: str = "__label__", where: str = "<stdin>") -> str:
    """The format of a stream whose first non-blank line is ``line``: ``"fasttext"``
    when it starts with the label prefix, else ``"tsv"``; a JSON object with no tab (a
    JSON Lines corpus, which a stream is not read as) is refused, naming ``where``.

    >>> line_format("__label__spam win a prize"), line_format("spam\twin a prize")
    ('fasttext', 'tsv')
    """
    if line.lstrip().startswith("{") and "\t" not in line:
        raise CorpusError(f"{where}: a stream is read as tsv or fasttext lines, and its "
                          "first line is a JSON object: give a JSON Lines corpus as a file")
    return "fasttext" if line.lstrip().startswith(prefix) else "tsv"


def read_stream(stream: BinaryIO, *, format: str | None = None, where: str = "<stdin>",
                encoding: str = "utf-8", errors: str = "strict",
                problems: Problems | None = None, first_line: int = 1,
                multilabel: bool = False, prefix: str = "__label__",
                **options: Any) -> Iterator[Document]:
    """Records of a line format read as they arrive: standard input, a pipe, a socket.

    Each line is decoded and yielded as soon as it is complete, and nothing is
    kept: an unbounded stream is read in bounded memory. ``format`` is
    ``"tsv"`` or ``"fasttext"``; by default the first non-blank line decides
    (``__label__`` at its start: fastText). ``options`` go to the line parser
    (``label_column``, ``text_column``, ``separator``); ``multilabel``: every document
    has a set of labels (fastText's tags; a ``label<TAB>text`` line's one label, as a
    file is read), ``prefix`` fastText's; ``first_line`` numbers the stream's first line
    (a stream read from its middle on).
    """
    problems = problems or Problems()
    if format not in (None, "tsv", "fasttext"):
        raise CorpusError(f"{where}: a stream is read as tsv or fasttext lines, not {format!r}")
    blank = 0
    said = encoding
    stream, encoding = recoded(stream, encoding, "strict" if errors == "skip" else errors)
    lines = bounded_lines(stream, max_document_bytes())
    for number in itertools.count(first_line):
        at = f"{where}:{number}"
        try:
            raw = next(lines)
        except StopIteration:
            break
        except UnicodeDecodeError as exc:  # (recoding UTF-16 or UTF-32: the rest is lost)
            raise CorpusError(f"{at}: not valid {said} ({exc.reason})") from None
        if raw is None:
            problems.report(at, f"a line of more than {max_document_bytes():,} bytes "
                            "(SNOWPY_MAX_DOCUMENT_BYTES)")
            continue
        try:
            line = raw.decode(encoding, "strict" if errors == "skip" else errors)
        except UnicodeDecodeError:
            problems.report(at, f"not valid {encoding}")
            continue
        line = line.rstrip("\r\n")
        if not line.strip():
            blank += 1
            continue
        if format is None:
            format = line_format(line, prefix, where)
            if format == "fasttext" and options:
                raise CorpusError(f"{where} is read as fasttext lines: "
                                  + ", ".join(f"--{name.replace('_', '-')}"
                                              for name in options)
                                  + (" does" if len(options) == 1 else " do")
                                  + " not apply (they go with tsv lines)")
        if format == "fasttext":
            document = fasttext_record(line, at, problems, multilabel=multilabel,
                                       prefix=prefix)
        else:
            document = tsv_record(line, at, problems, multilabel=multilabel, **options)
        if document is not None:
            yield document
    if blank:
        problems.note(f"{where}: {blank:,} blank line(s) skipped")
