"""The records a corpus plugin returns: a named corpus and its accepted files.

:func:`snowpy.corpora.load` finds, verifies and reads the file a
:class:`CorpusSpec` describes (:mod:`snowpy.corpora.registry`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from snowpy.exceptions import PluginError
from snowpy.records.documents import Document
from snowpy.records.params import Param

__all__ = ["CorpusFile", "CorpusSpec"]


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


