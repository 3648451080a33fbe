"""What a corpus yields: one labelled document (a record, so that a plugin's corpus and
the readers share it without importing the readers)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Document"]


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
