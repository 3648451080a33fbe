"""What a corpus plugin returns: a named corpus and its accepted files
(:class:`CorpusSpec`, :class:`CorpusFile`), and a corpus format: how to recognise a
file of the format and how to read it (:class:`FormatSpec`; the built-in formats
register through the same hook, :mod:`snowpy.corpora.builtin_formats`).

:func:`snowpy.corpora.load` finds, verifies and reads the file a
:class:`CorpusSpec` describes (:mod:`snowpy.corpora.registry`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from snowpy.corpora.documents import Document
from snowpy.exceptions import PluginError
from snowpy.params import Param

__all__ = ["CorpusFile", "CorpusSpec", "FormatSpec", "LAYOUT_OPTIONS"]


@dataclass(frozen=True)
class CorpusFile:
    """One accepted form of a corpus's file.

    ``sha256`` is checked when known; ``url`` is where this exact file can be
    downloaded (``None``: it cannot, put it in place by hand).
    """

    name: str
    sha256: str | None = None
    url: str | None = None


@dataclass(frozen=True)
class CorpusSpec:
    """A named corpus as a plugin declares it.

    Parameters
    ----------
    name : str
        Lower-case name (``"20newsgroups"``).
    summary : str
        One line: what it is, size, task.
    files : tuple of CorpusFile
        Accepted files, in order of preference.
    read : callable
        ``read(path, split, problems, **options) -> Iterator[Document]``.
    splits : tuple of str
        The splits, the default first.
    counts : mapping
        Documented number of documents per split (checked by the tests).
    source, license, citation : str
        Where it comes from, its terms, how to cite it.
    split_note : str
        How the splits are defined (a seeded split where the corpus has none).
    options : tuple of Param
        Corpus-specific options of ``read`` (TREC's label granularity).
    multilabel : bool
        Whether labels are tuples.
    """

    name: str
    summary: str
    files: tuple[CorpusFile, ...]
    read: Callable[..., Iterator[Document]]
    splits: tuple[str, ...]
    counts: Mapping[str, int]
    source: str
    license: str
    citation: str
    split_note: str = ""
    options: tuple[Param, ...] = ()
    multilabel: bool = False

    def __post_init__(self) -> None:
        if not self.name or self.name.lower() != self.name or " " in self.name:
            raise PluginError(f"corpus name {self.name!r} must be lower-case without spaces")
        if not self.files or not self.splits:
            raise PluginError(f"corpus {self.name!r} needs at least one file and one split")


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
