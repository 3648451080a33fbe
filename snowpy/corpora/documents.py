"""What readers produce: documents, and how malformed records are handled."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from snowpy.exceptions import ConfigurationError, SnowpyError

__all__ = ["ON_ERROR", "CorpusError", "Document", "Problems"]

#: What a reader does with a malformed record: stop with an error, or skip it (counted).
ON_ERROR = ("raise", "skip")


class CorpusError(SnowpyError, ValueError):
    """A corpus file or record cannot be read; the message says where and why."""


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
