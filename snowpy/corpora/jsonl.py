"""JSON Lines with chosen fields, read with orjson (Reuters ModApte derived files)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import orjson

from snowpy.corpora.documents import Document, Problems, checked
from snowpy.corpora.sources import read_file

__all__ = ["read_jsonl"]


def read_jsonl(
    source: str | os.PathLike,
    *,
    label_field: str = "label",
    text_fields: str | Sequence[str] = "text",
    as_fields: bool = False,
    problems: Problems | None = None,
) -> Iterator[Document]:
    """One JSON object per line.

    ``label_field`` holds a label, or a list of labels (a multi-label
    document: the label is then a tuple, possibly empty). ``text_fields`` is
    one field or several, joined by a blank line (or kept apart as a mapping
    with ``as_fields``, for namespaces). Invalid JSON, a missing field or a
    non-text value is reported with its line.
    """
    problems = problems or Problems()
    fields = (text_fields,) if isinstance(text_fields, str) else tuple(text_fields)
    where, content = read_file(source)
    for number, line in enumerate(content.splitlines(), start=1):
        at = f"{where}:{number}"
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            problems.report(at, f"invalid JSON ({exc})")
            continue
        if not isinstance(record, dict):
            problems.report(at, "a line must hold a JSON object")
            continue
        if label_field not in record:
            problems.report(at, f"no field {label_field!r}")
            continue
        label = record[label_field]
        if isinstance(label, list):
            if not all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in label):
                problems.report(at, f"{label_field!r} must hold strings or integers")
                continue
            label = tuple(label)
        elif not isinstance(label, (str, int)) or isinstance(label, bool):
            problems.report(at, f"{label_field!r} must be a string, an integer or a list")
            continue
        texts = {}
        absent = [field for field in fields if field not in record]
        if len(absent) == len(fields):
            problems.report(at, f"no field {absent[0]!r}" if len(absent) == 1 else
                            f"none of the fields {', '.join(map(repr, absent))}")
            continue
        for field in fields:
            value = record.get(field, "")
            if value is None:
                value = ""
            if not isinstance(value, str):
                problems.report(at, f"field {field!r} is not text")
                break
            texts[field] = value
        else:
            text = texts if as_fields else "\n\n".join(t for t in texts.values() if t)
            document = checked(Document(text, label, at), problems)
            if document is not None:
                yield document
