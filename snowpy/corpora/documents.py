"""What readers produce: documents, and how malformed records are handled."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from snowpy._validation import EMPTY_LABEL
from snowpy.exceptions import ConfigurationError, SnowpyError

__all__ = ["ON_ERROR", "CorpusError", "Document", "Problems", "checked", "max_document_bytes",
           "max_member_bytes"]

@dataclass(frozen=True, slots=True)
class Document:
    """One labelled document.

    Attributes
    ----------
    text : str or mapping of str to str
        The text, or its fields (``{"subject": ..., "body": ...}``).
    label : object
        The label, or a tuple of labels for a multi-label corpus.
    source : str
        Where it was read: ``file:line`` or ``archive::member``.
    """

    text: str | Mapping[str, str]
    label: Any
    source: str


#: What a reader does with a malformed record: stop with an error, or skip it (counted).
ON_ERROR = ("raise", "skip")


def _limit(variable: str, default: int) -> int:
    value = os.environ.get(variable)
    if not value:
        return default
    try:
        limit = int(value)
    except ValueError:
        raise ConfigurationError(f"{variable}={value!r}: a number of bytes") from None
    if limit < 1:
        raise ConfigurationError(f"{variable}={value!r}: a positive number of bytes")
    return limit


def max_document_bytes() -> int:
    """The largest document read (10 MB; ``SNOWPY_MAX_DOCUMENT_BYTES``): a longer record
    is malformed (an error naming file and line, or skipped and counted), so that one
    line cannot take the process's memory."""
    return _limit("SNOWPY_MAX_DOCUMENT_BYTES", 10_000_000)


def max_member_bytes() -> int:
    """The largest archive member or file read whole (1 GiB; ``SNOWPY_MAX_MEMBER_BYTES``):
    a 2 MB zip can declare a member of 2 GiB."""
    return _limit("SNOWPY_MAX_MEMBER_BYTES", 1 << 30)


class CorpusError(SnowpyError, ValueError):
    """A corpus file or record cannot be read; the message says where and why."""


@dataclass
class Problems:
    """Malformed records met by a reader: raised at once, or skipped and counted.

    With ``on_error="skip"`` the count and the first messages are kept, so
    that nothing is dropped silently.
    """

    on_error: str = "raise"
    skipped: int = 0
    messages: list[str] = field(default_factory=list)
    #: what a reader decided that a user should know (a header row recognised, files
    #: that are not documents): said, never silent, and not errors
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.on_error not in ON_ERROR:
            raise ConfigurationError(f"on_error must be 'raise' or 'skip', got {self.on_error!r}")

    def note(self, message: str) -> None:
        """Something a reader decided, for the user to hear (kept once)."""
        if message not in self.notes:
            self.notes.append(message)

    def report(self, where: str, what: str) -> None:
        """A malformed record at ``where``: raise, or count it."""
        message = f"{where}: {what}"
        if self.on_error == "raise":
            raise CorpusError(message)
        self.skipped += 1
        if len(self.messages) < 20:
            self.messages.append(message)


_CONTROL = re.compile("[\x00-\x1f]")


def checked(document: Document, problems: Problems) -> Document | None:
    """``document``, or None (reported) when a label is empty or holds a control
    character (a NUL once made a class of its own), or its text is empty or too long."""
    labels = document.label if isinstance(document.label, tuple) else (document.label,)
    for label in labels:
        if isinstance(label, str) and not label.strip():
            problems.report(document.source, EMPTY_LABEL)
            return None
        if isinstance(label, str) and _CONTROL.search(label):
            problems.report(document.source, f"label {label!r} holds a control character" + (
                "; zero bytes between the letters: UTF-16 without a byte-order mark? "
                "(encoding='utf-16-le')" if "\x00" in label else ""))
            return None
    text = document.text
    if isinstance(text, str):
        if not text.strip():
            problems.report(document.source, "empty text")
            return None
        if len(text) > max_document_bytes():
            problems.report(document.source, f"a document of {len(text):,} characters, more "
                            f"than the {max_document_bytes():,} allowed "
                            "(SNOWPY_MAX_DOCUMENT_BYTES)")
            return None
    return document

