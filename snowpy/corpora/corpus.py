"""A corpus opened for reading: one decision of where its documents are and how they are
read.

:func:`open` takes what a user names: a file (``train.tsv``, an archive's member
``news.tar.gz::train/a.txt``), a folder or archive of class folders, a glob of files
(``part-*.tsv``), ``-`` for standard input, or a registered corpus (``snowpy corpus
list``); it decides the format (``format``, else detected), the split (``split``, else
``prefer`` where the corpus has it, never its test and training documents together) and
the reader's options (a :class:`Layout`). The :class:`Corpus` it returns reads the
documents as a stream (iterate) or whole (:meth:`Corpus.read`); where it is a clean file
of lines (:attr:`Corpus.line_file`), :func:`snowpy.files.read_corpus` reads it and
featurises it in compiled code instead. The command line,
:meth:`snowpy.SnowClassifier.fit_file` and the cluster's shards open every corpus here.
"""

from __future__ import annotations

import gc
import glob
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from snowpy.corpora.documents import CorpusError, Document, Problems
from snowpy.corpora.formats import corpus_formats, detect_format, read
from snowpy.corpora.registry import check_file, default_split, locate
from snowpy.corpora.spec import CorpusSpec
from snowpy.exceptions import ConfigurationError
from snowpy.params import validate_declared

__all__ = ["Corpus", "Layout", "Read", "format_of", "load", "open", "settled_labels"]


def _applies(flag: str) -> tuple[str, ...]:
    """The formats that take a layout option, by its command-line name (each format says
    which it takes: :attr:`snowpy.corpora.spec.FormatSpec.options`)."""
    name = "header" if flag == "--no-header" else flag[2:].replace("-", "_")
    return tuple(spec.name for spec in corpus_formats().values() if name in spec.options)


@dataclass(frozen=True)
class Layout:
    """How a corpus file is laid out (None: not given; the command line's ``--encoding``,
    ``--label-column`` and the like, by the same names)."""

    encoding: str | None = None
    decode: str = "strict"
    label_column: str | None = None
    text_column: list[str] = field(default_factory=list)
    header: bool | None = None
    label_field: str | None = None
    text_field: list[str] = field(default_factory=list)
    multilabel: bool = False

    def given(self) -> list[str]:
        """The options given, by their command-line names."""
        named = {"--encoding": self.encoding, "--decode": self.decode != "strict" or None,
                 "--label-column": self.label_column, "--text-column": self.text_column,
                 "--header" if self.header else "--no-header": self.header is not None or None,
                 "--label-field": self.label_field, "--text-field": self.text_field,
                 "--multilabel": self.multilabel or None}
        return [name for name, value in named.items() if value]

    def flags(self) -> list[str]:
        """The options given, as the command line writes them (``--encoding latin-1``).

        >>> Layout(encoding="latin-1", header=False).flags()
        ['--encoding latin-1', '--no-header']
        """
        return [_flag(name, value) for name, value in self._changed().items()]

    def _changed(self) -> dict[str, Any]:
        """The options that differ from their defaults, by field name."""
        defaults = asdict(Layout())
        return {name: value for name, value in asdict(self).items() if value != defaults[name]}

    def recorded(self, corpus: str, format: str | None) -> dict[str, Any]:
        """The options given and the format CORPUS is read in, as a model file keeps them
        (``read_with``), for :meth:`completed` to read another corpus the same way."""
        kept, kind = self._changed(), format or format_of(corpus)
        return {**kept, "format": kind} if kind else kept

    def completed(self, recorded: Any, corpus: str, format: str | None,
                  given: set[str] | None = None) -> tuple[Layout, list[str]]:
        """This layout, with each option not given taken from ``recorded`` (a model's
        ``read_with``) where CORPUS is read in the recorded format and the option applies
        to it; and the options taken, by their command-line names. ``given``: the options
        on the command line, by field name (else those that differ from the defaults)."""
        kind = format or format_of(corpus)
        if not isinstance(recorded, dict) or kind is None or recorded.get("format") != kind:
            return self, []
        ours, taken = asdict(self), {}
        given = set(self._changed()) if given is None else given
        for name, value in recorded.items():
            flag = "--" + name.replace("_", "-")
            if name in ours and name not in given and kind in _applies(flag):
                taken[name] = value
        return Layout(**{**ours, **taken}), [_flag(name, value)
                                             for name, value in taken.items()]

    def for_format(self, kind: str, where: str, recognise: bool = False) -> dict[str, Any]:
        """The reader's keyword arguments for a ``kind`` corpus; an option that does not
        apply to it is refused by name (``--text-field`` on a tsv file). ``recognise``
        reads fastText lines as multi-label whatever ``multilabel`` says, for
        :meth:`Corpus.read` to decide from the labels read."""
        from snowpy.plugins import get_format

        spec = get_format(kind)
        wrong = [name for name in self.given() if kind not in _applies(name)]
        if wrong:
            raise ConfigurationError(
                f"{where} is read as {kind}: {', '.join(wrong)} "
                f"{'does' if len(wrong) == 1 else 'do'} not apply (they go with: "
                + "; ".join(f"{name} {'/'.join(_applies(name))}" for name in wrong) + ")")
        for label, texts in (("column", self.text_column), ("field", self.text_field)):
            chosen = getattr(self, f"label_{label}")
            if chosen is not None and chosen in texts:
                raise ConfigurationError(f"{where}: --label-{label} and --text-{label} name "
                                         f"the same {label} ({chosen})")
        values = asdict(self)
        values["multilabel"] = self.multilabel or (recognise and spec.several_labels)
        return spec.layout({name: values[name] for name in spec.options})

    def compiled(self) -> bool:
        """Whether the compiled reader reads a file so laid out (UTF-8, the label first,
        no column or field chosen)."""
        return (self.encoding or "utf-8").lower().replace("_", "-") in ("utf-8", "utf8") \
            and self.label_column is None and not self.text_column \
            and self.header is None and not self.label_field and not self.text_field


def _flag(name: str, value: Any) -> str:
    """An option as the command line writes it: ``--decode replace``, ``--no-header``."""
    flag = "--" + name.replace("_", "-")
    if isinstance(value, bool):
        return flag if value else "--no-" + flag[2:]
    return " ".join(f"{flag} {item}" for item in (value if isinstance(value, list) else [value]))


def format_of(corpus: str) -> str | None:
    """The format a file, a folder or a glob's first file is read in; None for standard
    input and a registered corpus (read as its manifest says)."""
    if corpus != "-" and glob.has_magic(corpus) and not Path(corpus).exists():
        corpus = next(iter(sorted(glob.glob(corpus))), "-")
    if corpus == "-" or not Path(corpus.split("::")[0]).exists():
        return None
    return detect_format(corpus)


class Read(NamedTuple):
    """What :meth:`Corpus.read` read: texts, labels, the problems report, the split; or,
    read in compiled code (:mod:`snowpy.files`), no texts but their rows of features,
    shuffling keys and the lines read."""

    texts: list[Any] | None
    labels: Any
    problems: Problems
    split: str | None
    rows: Any = None
    keys: Any = None
    lines: int = 0

    def __len__(self) -> int:  # (the documents read)
        return len(self.labels)


@dataclass
class Corpus:
    """Documents of a corpus, where :func:`open` (or :func:`~snowpy.corpora.load`, a
    registered corpus) found them.

    Iterate for :class:`Document` records as they are read; :meth:`documents` reads them
    all once and keeps them (``texts`` and ``labels``: their lists); :meth:`read` reads
    what training takes. Malformed records skipped with ``on_error="skip"`` are counted
    in ``problems``.
    """

    name: str                        # as given: a path, a glob, "-", a registered name
    split: str | None
    format: str | None = None        # None: each file's own (a glob), or not known yet
    files: tuple[str, ...] = ()      # the files read, in order (none: "-", registered)
    layout: Layout = field(default_factory=Layout)
    problems: Problems = field(default_factory=Problems)
    spec: CorpusSpec | None = None   # a registered corpus's record ...
    path: Path | None = None         # ... and its file (a single file's own path)
    options: dict[str, Any] = field(default_factory=dict)  # a registered corpus's options
    _cache: list[Document] | None = None

    def __iter__(self) -> Iterator[Document]:
        if self._cache is not None:
            return iter(self._cache)
        return self._documents(recognise=False)

    def __repr__(self) -> str:
        read = (f"{len(self._cache):,} documents" if self._cache is not None
                else "not read yet")
        skipped = f", {self.problems.skipped} skipped" if self.problems.skipped else ""
        return f"Corpus({self.name!r}, split={self.split!r}, path='{self.path}', " \
               f"{read}{skipped})"

    def documents(self) -> list[Document]:
        """All documents (read once)."""
        if self._cache is None:
            self._cache = list(self.__iter__())
        return self._cache

    def __len__(self) -> int:
        return len(self.documents())

    @property
    def texts(self) -> list[Any]:
        return [d.text for d in self.documents()]

    @property
    def labels(self) -> list[Any]:
        return [d.label for d in self.documents()]

    @property
    def line_file(self) -> Path | None:
        """The one file of ``label<TAB>text`` or fastText lines this corpus is, laid out as
        the compiled reader reads it (UTF-8, the label first, no column or field chosen,
        no split): what :func:`snowpy.files.read_corpus` reads in compiled code; else
        None."""
        if self.path is None or self.spec is not None or self.split is not None \
                or "::" in self.name or not self.path.is_file() \
                or self.format not in ("tsv", "fasttext") or not self.layout.compiled():
            return None
        return self.path

    def read(self) -> Read:
        """The documents whole: texts and labels, the labels of a multi-label corpus
        recognised (:func:`settled_labels`). A corpus of no document is refused."""
        with _no_collection():
            documents = list(self._documents(recognise=True))
        if not documents:
            raise ConfigurationError(f"{self.name}: no documents found"
                                     + (f" in split {self.split!r}" if self.split else "")
                                     + "".join(f"; {note}" for note in self.problems.notes))
        recognising = self.spec is None and all(
            (self.format or detect_format(f)) == "fasttext" for f in self.files or ["-"])
        labels = settled_labels([d.label for d in documents], recognising,
                                self.layout.multilabel)
        return Read([d.text for d in documents], labels, self.problems, self.split)

    def _documents(self, *, recognise: bool) -> Iterator[Document]:
        """The documents in order (``recognise``: fastText lines read as multi-label,
        for :meth:`read` to settle)."""
        if self.spec is not None:
            assert self.path is not None and self.split is not None
            yield from self.spec.read(self.path, self.split, self.problems, **self.options)
        elif self.name == "-":
            yield from (_stdin_whole(self, recognise) if recognise else _stdin(self))
        else:
            for path in self.files:
                kind = self.format or detect_format(path)
                yield from read(path, format=kind, problems=self.problems,
                                **({"split": self.split} if path == self.name else {}),
                                **self.layout.for_format(kind, path, recognise))


def open(name: str, *, split: str | None = None, format: str | None = None,
         layout: Layout | None = None, prefer: str | None = None, on_error: str = "raise"
         ) -> Corpus:
    """The corpus ``name`` opened for reading (see the module's description).

    Parameters
    ----------
    name : str
        A path (a file, an archive's member ``archive::member``, a folder or archive of
        class folders), a glob of files (read in name order), ``-`` for standard input,
        or a registered corpus.
    split : str, optional
        The split to read of a corpus that has splits; else ``prefer`` when it has that
        split. A corpus with splits is never read whole: with none given and none
        preferred that it has, it is refused.
    format : str, optional
        The format (default: detected from each file's name and first line).
    layout : Layout, optional
        The reader's options; one that does not apply to the format is refused by name.
    on_error : {"raise", "skip"}
        A malformed record stops reading with an error naming it, or is skipped and
        counted in ``problems``.

    Examples
    --------
    >>> from snowpy.corpora import demo_path
    >>> corpus = open(str(demo_path()))
    >>> corpus.format, len(corpus.read())
    ('tsv', 400)
    """
    from snowpy.corpora.directory import splits_of

    layout = layout or Layout()
    problems = Problems(on_error)
    if name == "-":
        return Corpus(name, split, format, (), layout, problems)
    if Path(name.split("::")[0]).exists():
        kind = format or detect_format(name)
        if split is None and kind == "directory":
            split = default_split(name, splits_of(name), prefer)
        return Corpus(name, split, kind, (name,), layout, problems, path=Path(name))
    if glob.has_magic(name):  # part-*.tsv: the files it matches, in name order
        matches = sorted(path for path in glob.glob(name) if Path(path).is_file())
        if not matches:
            raise ConfigurationError(f"{name}: no file matches this pattern")
        return Corpus(name, None, format, tuple(matches), layout, problems)
    if os.sep in name or "." in Path(name).name:
        raise ConfigurationError(f"{name}: no such file or folder")
    from snowpy.plugins import get_corpus

    given = [option for option in layout.given() if option != "--multilabel"]
    if given:
        raise ConfigurationError(f"{name} is a registered corpus, read as its manifest "
                                 f"says: {', '.join(given)} cannot apply")
    if split is None:
        split = default_split(name, list(get_corpus(name).splits), prefer)
    corpus = load(name, split, on_error=on_error)
    corpus.layout = layout
    return corpus


def load(name: str, split: str | None = None, *, path: str | os.PathLike | None = None,
         download: bool = True, verify: bool = True, on_error: str = "raise",
         **options: Any) -> Corpus:
    """A split of a registered corpus.

    Parameters
    ----------
    name : str
        A registered corpus (``snowpy corpus list``).
    split : str, optional
        One of the corpus's splits; its first (usually ``train``) by default.
    path : path, optional
        Read this file instead of looking in the data directories (its
        checksum is still verified when it has a known file name).
    download : bool
        Download the file when absent and a download location is known.
    verify : bool
        Check the file's SHA-256.
    on_error : {"raise", "skip"}
        A malformed record stops reading with an error naming it, or is
        skipped and counted in ``corpus.problems``.
    **options
        Corpus options (``labels="fine"`` for TREC).

    Examples
    --------
    >>> corpus = load("sms-spam", split="train")  # doctest: +SKIP
    >>> len(corpus), corpus.labels[:3]  # doctest: +SKIP
    (4459, ['ham', 'ham', 'spam'])
    """
    from snowpy.plugins import get_corpus

    spec = get_corpus(name)
    split = spec.splits[0] if split is None else split
    if split not in spec.splits:
        raise ConfigurationError(
            f"corpus {name!r} has no split {split!r}; its splits are: {', '.join(spec.splits)}"
        )
    values = validate_declared(spec.options, options, kind="corpus", name=name, word="option")
    if path is not None:
        found = Path(path)
        if not found.exists():
            raise CorpusError(f"{found}: no such file or folder")
        if verify:
            for file in spec.files:
                if file.name == found.name:
                    check_file(found, file.sha256)
    else:
        found = locate(spec, download=download, verify=verify)
    return Corpus(spec.name, split, spec=spec, path=found, options=values,
                  problems=Problems(on_error))


def settled_labels(labels: Any, recognising: bool, multilabel: bool) -> Any:
    """The labels a multi-label corpus is recognised by. fastText lines are read as
    multi-label (``recognising``) and become single labels again when no line carries
    more than one; with ``multilabel`` every label is a set, of one where a document has
    one. A JSON list is multi-label as read."""
    if multilabel:
        return [tuple(x) if isinstance(x, (list, tuple)) else (x,) for x in labels]
    if recognising and len(labels) and all(len(x) == 1 for x in labels):
        import numpy as np

        return np.array([x[0] for x in labels], dtype=str)
    return labels


@contextmanager
def _no_collection() -> Iterator[None]:
    """Python's cycle collector off while a corpus becomes hundreds of thousands of
    objects, none in a cycle: it would traverse them, and every module imported, again
    and again as they are made (``snowpy train`` on 160,000 documents: a median 2.58 s
    against 2.70 s with it on)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _stdin(corpus: Corpus) -> Iterator[Document]:
    """Standard input's lines as they arrive (``tsv``, or fastText's when the layout
    takes them)."""
    from snowpy.corpora.delimited import read_stream

    return read_stream(sys.stdin.buffer, format=corpus.format, problems=corpus.problems,
                       **corpus.layout.for_format(corpus.format or "tsv", "standard input"))


def _stdin_whole(corpus: Corpus, recognise: bool) -> Iterator[Document]:
    """Standard input read to its end, stored in a temporary file so that every reader
    takes it (its format: ``format``, else fastText's by its first bytes, else tsv)."""
    data = sys.stdin.buffer.read()
    handle, path = tempfile.mkstemp(prefix="snowpy-stdin-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        kind = corpus.format = corpus.format or (
            "fasttext" if data.lstrip()[:9] == b"__label__" else "tsv")
        documents = list(read(path, format=kind, problems=corpus.problems,
                              **corpus.layout.for_format(kind, "standard input", recognise)))
    finally:
        os.unlink(path)
    for d in documents:
        yield type(d)(d.text, d.label, d.source.replace(str(path), "<stdin>"))
