"""The record a corpus-format plugin returns: how to recognise a file of the format and
how to read it (the built-in formats register through the same hook,
:mod:`snowpy.corpora.builtin_formats`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from snowpy.exceptions import PluginError
from snowpy.records.documents import Document

__all__ = ["LAYOUT_OPTIONS", "FormatSpec"]

#: The layout options a format may take (the command line's ``--encoding``,
#: ``--label-column``...), by name; :attr:`FormatSpec.options` lists those a format takes.
LAYOUT_OPTIONS = ("encoding", "decode", "label_column", "text_column", "header",
                  "label_field", "text_field", "multilabel")


def _no_layout(layout: Mapping[str, Any]) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class FormatSpec:
    """A corpus file format as a plugin declares it.

    Parameters
    ----------
    name : str
        Lower-case name (``"tsv"``), what ``--format`` takes.
    summary : str
        One line: what a file of the format holds.
    read : callable
        ``read(path, *, problems, **options) -> Iterator[Document]``; a format with
        ``splits`` also takes ``split``.
    extensions : tuple of str
        File name endings that say the format (``(".csv",)``), lower case.
    sniff : callable, optional
        ``sniff(head: bytes) -> bool``: whether the first bytes of a file whose name
        says nothing are of this format (fastText's ``__label__``).
    options : tuple of str
        The layout options the format takes, of :data:`LAYOUT_OPTIONS`.
    layout : callable
        ``layout(given) -> dict``: the reader's keyword arguments from the layout
        options given (a mapping of the names in ``options`` to their values: text
        columns and fields as lists).
    splits : bool
        Whether a corpus of the format has splits (a folder of ``train/`` and
        ``test/``).
    several_labels : bool
        Whether a record can hold several labels that the reader keeps only when
        told ``multilabel`` (fastText's ``__label__`` tags): a corpus is then read
        with it to recognise a multi-label corpus from its labels.
    """

    name: str
    summary: str
    read: Callable[..., Iterator[Document]]
    extensions: tuple[str, ...] = ()
    sniff: Callable[[bytes], bool] | None = None
    options: tuple[str, ...] = ()
    layout: Callable[[Mapping[str, Any]], dict[str, Any]] = _no_layout
    splits: bool = False
    several_labels: bool = False

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.lower() or not self.name.isidentifier():
            raise PluginError(f"a corpus format needs a lower-case name, got {self.name!r}")
        if not callable(self.read) or not callable(self.layout):
            raise PluginError(f"corpus format {self.name!r}: read and layout must be callable")
        unknown = [o for o in self.options if o not in LAYOUT_OPTIONS]
        if unknown:
            raise PluginError(f"corpus format {self.name!r}: unknown layout option(s) "
                              f"{', '.join(unknown)} (known: {', '.join(LAYOUT_OPTIONS)})")
