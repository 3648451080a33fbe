"""JSON Lines with chosen fields, read with orjson (Reuters ModApte derived files)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import orjson

from snowpy.corpora.documents import Document, Problems, checked
from snowpy.corpora.sources import decode, marked, read_file

__all__ = ["jsonl_fields", "read_jsonl"]


#: Field names that hold a document's label(s), and its text, in the order they are
#: looked for when the fields are not given (Reuters' derived files: topics, title + body).
LABEL_FIELDS = ("label", "labels", "topics", "categories", "category", "tags", "class",
                "classes", "target", "intent", "y")
TEXT_FIELDS = ("text", "title", "subject", "headline", "body", "content", "description",
               "message", "question", "sentence", "review", "document", "comment")


def jsonl_fields(record: dict) -> tuple[str | None, tuple[str, ...]]:
    """The label field and text fields a record's names suggest: the first label name
    present, and ``text`` alone where present, else every text name present (title and
    body are joined).

    >>> jsonl_fields({"newid": 1, "topics": ["earn"], "title": "T", "body": "B"})
    ('topics', ('title', 'body'))
    >>> jsonl_fields({"label": "spam", "text": "win", "title": "x"})
    ('label', ('text',))
    """
    label = next((name for name in LABEL_FIELDS if name in record), None)
    if "text" in record:
        return label, ("text",)
    return label, tuple(name for name in TEXT_FIELDS if name in record)


def read_jsonl(
    source: str | os.PathLike,
    *,
    label_field: str | None = None,
    text_fields: str | Sequence[str] | None = None,
    as_fields: bool = False,
    multilabel: bool = False,
    problems: Problems | None = None,
) -> Iterator[Document]:
    """One JSON object per line.

    ``label_field`` holds a label, or a list of labels (a multi-label
    document: the label is then a tuple, possibly empty; with ``multilabel``
    a single label is a tuple of one). ``text_fields`` is one field or
    several, joined by a blank line (or kept apart as a mapping with
    ``as_fields``, for namespaces). Fields not given are recognised from the
    first record's names (:func:`jsonl_fields`), and said in
    ``problems.notes``. Invalid JSON, a missing field or a non-text value is
    reported with its line.
    """
    problems = problems or Problems()
    fields = None if text_fields is None else \
        (text_fields,) if isinstance(text_fields, str) else tuple(text_fields)
    where, content = read_file(source)
    if marked(content[:4]):  # (UTF-16, say, as its byte-order mark says: as UTF-8)
        content = (decode(content, "utf-8", "strict", where) or "").encode()
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
        if label_field is None or fields is None:
            label_field, fields = _recognised(record, label_field, fields, at, problems)
        if label_field not in record:
            names = list(record)[:12]
            problems.report(at, f"no field {label_field!r} (the fields: "
                                f"{', '.join(map(repr, names))}; name the label's field, "
                                f"as label_field='{names[0] if names else 'label'}')")
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
        elif multilabel:
            label = (label,)
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


def _recognised(record: dict, label_field: str | None, fields: tuple[str, ...] | None,
                at: str, problems: Problems) -> tuple[str, tuple[str, ...]]:
    """The fields not given, recognised from the first record's names (said); a record
    naming none is an error that lists its fields."""
    label, texts = jsonl_fields(record)
    if label_field is None:  # (none recognised: "label", reported as missing line by line)
        label_field = label or "label"
    if fields is None:
        fields = tuple(name for name in texts if name != label_field) or ("text",)
    if (label_field, fields) != ("label", ("text",)):  # (the plain names go unsaid)
        problems.note(f"{at.rsplit(':', 1)[0]}: labels from the field {label_field!r}, text "
                      f"from {' + '.join(map(repr, fields))}")
    return str(label_field), tuple(fields)
