"""Reading corpora for the commands: the options that say how a file is laid out, the
split to read, and what was read (said to the user, never silent)."""

from __future__ import annotations

import gc
import glob
import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import typer

from snowpy.exceptions import ConfigurationError

__all__ = [
    "CorpusRead",
    "ReadOptions",
    "check_classes",
    "check_labels",
    "describe_read",
    "is_multilabel",
    "iter_documents",
    "read_documents",
    "read_featurised",
    "read_as_trained",
    "read_lines",
    "settled_labels",
]

_PANEL = "Corpus layout"

# The corpus layout options, shared by the commands that read a corpus.
Encoding = Annotated[str | None, typer.Option(
    help="text encoding of the corpus (utf-8; latin-1 for 20 Newsgroups)",
    rich_help_panel=_PANEL)]
Decode = Annotated[str, typer.Option(
    help="bytes that are not valid in the encoding: strict (an error naming the file and "
         "line), replace (U+FFFD) or skip (the record, counted)", rich_help_panel=_PANEL)]
LabelColumn = Annotated[str | None, typer.Option(
    help="tsv/csv: the label's column, a number from 0 or (csv) a header name",
    rich_help_panel=_PANEL)]
TextColumn = Annotated[list[str] | None, typer.Option(
    help="tsv/csv: the text's column, a number from 0 or (csv) a header name; csv: repeat "
         "to join several", rich_help_panel=_PANEL)]
Header = Annotated[bool | None, typer.Option(
    "--header/--no-header", help="csv: the first row names the columns (default: "
    "recognised by its words, and said)", rich_help_panel=_PANEL)]
LabelField = Annotated[str | None, typer.Option(
    help="jsonl: the field holding the label (or a list of labels)", rich_help_panel=_PANEL)]
TextField = Annotated[list[str] | None, typer.Option(
    help="jsonl: the field holding the text; repeat to join several", rich_help_panel=_PANEL)]
Multilabel = Annotated[bool, typer.Option(
    "--multilabel", help="each document has a set of labels, each decided on its own (VW's "
    "--multilabel_oaa, fastText's -loss ova). Recognised without it from the labels: a "
    "JSON list, or several fastText __label__ tags on a line. A multi-label corpus is "
    "trained at the multi-label defaults (--thickness 6 --negative-thickness 3 --alpha 1.2 "
    "--beta 0.8 --epochs 20 --links touched) where those options are not given",
    rich_help_panel=_PANEL)]

def _applies(flag: str) -> tuple[str, ...]:
    """The formats that take a layout option, by its command-line name (each format says
    which it takes: :attr:`snowpy.corpora.spec.FormatSpec.options`)."""
    from snowpy.corpora import corpus_formats

    name = "header" if flag == "--no-header" else flag[2:].replace("-", "_")
    return tuple(spec.name for spec in corpus_formats().values() if name in spec.options)


@dataclass(frozen=True)
class ReadOptions:
    """How a corpus file is laid out, as the command line gave it (None: not given)."""

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

    def recorded(self, corpus: str, format: str | None) -> dict[str, Any]:
        """The options given and the format CORPUS is read in, as a model file keeps them
        (``read_with``), for :meth:`completed` to read another corpus the same way."""
        defaults = asdict(ReadOptions())
        kept = {name: value for name, value in asdict(self).items() if value != defaults[name]}
        kind = format or _kind_of(corpus)
        return {**kept, "format": kind} if kind else kept

    def completed(self, recorded: Any, corpus: str, format: str | None,
                  given: set[str] | None = None) -> tuple[ReadOptions, list[str]]:
        """These options, with each one not given taken from ``recorded`` (a model's
        ``read_with``) where CORPUS is read in the recorded format and the option applies
        to it; and the options taken, by their command-line names. ``given``: the options
        on the command line, by field name (else those that differ from the defaults)."""
        kind = format or _kind_of(corpus)
        if not isinstance(recorded, dict) or kind is None or recorded.get("format") != kind:
            return self, []
        ours, defaults, taken = asdict(self), asdict(ReadOptions()), {}
        if given is None:
            given = {name for name, value in ours.items() if value != defaults[name]}
        for name, value in recorded.items():
            flag = "--" + name.replace("_", "-")
            if name in ours and name not in given and kind in _applies(flag):
                taken[name] = value
        return ReadOptions(**{**ours, **taken}), [_flag(name, value)
                                                    for name, value in taken.items()]

    def for_format(self, kind: str, where: str, recognise: bool = False) -> dict[str, Any]:
        """The reader's keyword arguments for a ``kind`` corpus; an option that does not
        apply to it is refused by name (``--text-field`` on a tsv file). ``recognise``
        reads fastText lines as multi-label whatever ``multilabel`` says, for
        :func:`settled_labels` to decide from the labels read."""
        from snowpy.plugins import get_format

        spec = get_format(kind)
        wrong = [name for name in self.given() if kind not in _applies(name)]
        if wrong:
            raise ConfigurationError(
                f"{where} is read as {kind}: {', '.join(wrong)} "
                f"{'does' if len(wrong) == 1 else 'do'} not apply (they go with: "
                + "; ".join(f"{name} {'/'.join(_applies(name))}" for name in wrong) + ")")
        values = asdict(self)
        values["multilabel"] = self.multilabel or (recognise and spec.several_labels)
        return spec.layout({name: values[name] for name in spec.options})


def read_as_trained(layout: ReadOptions, recorded: Any, corpus: str, format: str | None,
                    given: set[str], *, quiet: bool) -> ReadOptions:
    """``layout`` completed by a model's recorded reader options
    (:meth:`ReadOptions.completed`), the options taken said in a note."""
    completed, taken = layout.completed(recorded, corpus, format, given)
    if taken and not quiet:
        from snowpy.cli.common import err

        err(f"note: {corpus} read as the model's training corpus was: {' '.join(taken)}")
    return completed


def _flag(name: str, value: Any) -> str:
    """An option as the command line writes it: ``--decode replace``, ``--no-header``."""
    flag = "--" + name.replace("_", "-")
    if isinstance(value, bool):
        return flag if value else "--no-" + flag[2:]
    return " ".join(f"{flag} {item}" for item in (value if isinstance(value, list) else [value]))


def _kind_of(corpus: str) -> str | None:
    """The format a file, a folder or a glob's first file is read in; None for standard
    input and a registered corpus (read as its manifest says)."""
    from snowpy import corpora

    if corpus != "-" and glob.has_magic(corpus) and not Path(corpus).exists():
        corpus = next(iter(sorted(glob.glob(corpus))), "-")
    if corpus == "-" or not Path(corpus.split("::")[0]).exists():
        return None
    return corpora.detect_format(corpus)


class CorpusRead(NamedTuple):
    """What :func:`read_documents` read: texts, labels, the problems report, the split;
    or, read by the compiled reader (:func:`read_featurised`), no texts but their rows
    of features and shuffling keys."""

    texts: list[Any] | None
    labels: Any
    problems: Any
    split: str | None
    rows: Any = None
    keys: Any = None

    def __len__(self) -> int:  # (the documents read)
        return len(self.labels)


def read_featurised(corpus: str, featurizer: Any, *, split: str | None, format: str | None,
                    layout: ReadOptions | None = None) -> CorpusRead | None:
    """A ``label<TAB>text`` or fastText file read and featurised in compiled code
    (:func:`snowpy.files.read_rows`), or None when CORPUS, its layout or the front end
    is one the Python reader reads (then :func:`read_documents`)."""
    from snowpy import corpora
    from snowpy.corpora.documents import Problems
    from snowpy.files import read_rows, reads_in_compiled_code

    layout = layout or ReadOptions()
    path = Path(corpus)
    if corpus == "-" or split is not None or "::" in corpus or not path.is_file() \
            or featurizer.keep_names or not reads_in_compiled_code(featurizer):
        return None
    if (layout.encoding or "utf-8").lower().replace("_", "-") not in ("utf-8", "utf8"):
        return None
    if layout.label_column is not None or layout.text_column or layout.header is not None \
            or layout.label_field or layout.text_field:
        return None
    kind = format or corpora.detect_format(corpus)
    if kind not in ("tsv", "fasttext"):
        return None
    read = read_rows(path, featurizer, format=kind, multilabel=kind == "fasttext")
    if read is None:
        return None
    problems = Problems()
    for note in read.notes:
        problems.note(note)
    labels = settled_labels(read.labels, kind == "fasttext", layout.multilabel)
    return CorpusRead(None, labels, problems, None, read.rows, read.keys)


def settled_labels(labels: Any, recognising: bool, multilabel: bool) -> Any:
    """The labels a multi-label corpus is recognised by. fastText lines are read as
    multi-label (``recognising``) and become single labels again when no line carries
    more than one; with ``multilabel`` (``--multilabel``) every label is a set, of one
    where a document has one. A JSON list is multi-label as read."""
    if multilabel:
        return [tuple(x) if isinstance(x, (list, tuple)) else (x,) for x in labels]
    if recognising and len(labels) and all(len(x) == 1 for x in labels):
        import numpy as np

        return np.array([x[0] for x in labels], dtype=str)
    return labels


def is_multilabel(labels: Any) -> bool:
    """Whether the labels read are sets of labels (a multi-label corpus)."""
    return not hasattr(labels, "dtype") and any(isinstance(x, (list, tuple)) for x in labels)


def read_documents(corpus: str, *, split: str | None, format: str | None, on_error: str,
                   layout: ReadOptions | None = None, prefer: str | None = None
                   ) -> CorpusRead:
    """Texts, labels, the problems report and the split read of CORPUS.

    CORPUS is a path (any format :func:`snowpy.corpora.read` knows), ``-``
    for standard input (``label<TAB>text`` or fastText lines), or the name of
    a registered corpus (``snowpy corpus list``), read in ``split``, else in
    ``prefer`` when it has that split. A corpus with splits is never read
    whole by default (training on its test documents would leak them): with
    no split given and none preferred that it has, it is refused.
    """
    with _no_collection():
        return _read_documents(corpus, split=split, format=format, on_error=on_error,
                               layout=layout, prefer=prefer)


@contextmanager
def _no_collection() -> Iterator[None]:
    """Python's cycle collector off while a corpus becomes hundreds of thousands of
    objects, none in a cycle: it would traverse them, and every module the command has
    imported, again and again as they are made (``snowpy train`` on 160,000 documents:
    a median 2.58 s against 2.70 s with it on)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _read_documents(corpus: str, *, split: str | None, format: str | None, on_error: str,
                    layout: ReadOptions | None, prefer: str | None) -> CorpusRead:
    from snowpy import corpora
    from snowpy.corpora.documents import Problems

    problems = Problems(on_error)
    layout = layout or ReadOptions()
    kinds = set()
    if corpus == "-":
        data = sys.stdin.buffer.read()
        with _temporary(data) as path:
            kind = format or ("fasttext" if data.lstrip()[:9] == b"__label__" else "tsv")
            kinds.add(kind)
            documents = list(corpora.read(path, format=kind, problems=problems,
                                          **layout.for_format(kind, "standard input", True)))
            documents = [type(d)(d.text, d.label, d.source.replace(str(path), "<stdin>"))
                         for d in documents]
    elif Path(corpus.split("::")[0]).exists():
        kind = format or corpora.detect_format(corpus)
        if split is None and kind == "directory":
            split = corpora.default_split(corpus, corpora.splits_of(corpus), prefer)
        kinds.add(kind)
        documents = list(corpora.read(corpus, format=kind, split=split, problems=problems,
                                      **layout.for_format(kind, corpus, True)))
    elif glob.has_magic(corpus):  # part-*.tsv: the files it matches, in name order
        matches = _matches(corpus)
        documents = []
        for path in matches:
            kind = format or corpora.detect_format(path)
            kinds.add(kind)
            documents.extend(corpora.read(path, format=kind, problems=problems,
                                          **layout.for_format(kind, path, True)))
    elif os.sep in corpus or "." in Path(corpus).name:
        raise ConfigurationError(f"{corpus}: no such file or folder")
    else:
        from snowpy.plugins import get_corpus

        given = [name for name in layout.given() if name != "--multilabel"]
        if given:
            raise ConfigurationError(f"{corpus} is a registered corpus, read as its manifest "
                                     f"says: {', '.join(given)} cannot apply")
        if split is None:
            split = corpora.default_split(corpus, list(get_corpus(corpus).splits), prefer)
        loaded = corpora.load(corpus, split, on_error=on_error)
        documents = loaded.documents()
        problems = loaded.problems
        split = loaded.split
    if not documents:
        raise ConfigurationError(f"{corpus}: no documents found"
                                 + (f" in split {split!r}" if split else "")
                                 + "".join(f"; {note}" for note in problems.notes))
    labels = settled_labels([d.label for d in documents], kinds == {"fasttext"},
                            layout.multilabel)
    return CorpusRead([d.text for d in documents], labels, problems, split)


def iter_documents(corpus: str, *, split: str | None, format: str | None, on_error: str,
                   layout: ReadOptions | None = None, featurizer: Any = None
                   ) -> tuple[Iterator[Any], Any]:
    """The documents of CORPUS one by one, and the problems report: standard input
    (``-``) as the lines arrive, a file as it is read, a registered corpus from memory.

    With a ``featurizer``, standard input laid out as ``tsv`` or ``fasttext`` lines with
    no layout option comes in blocks read and featurised in compiled code
    (:func:`snowpy.files.read_blocks`), the Python reader taking over from the first
    block the compiled reader leaves to it."""
    from snowpy import corpora
    from snowpy.corpora.documents import Problems

    problems = Problems(on_error)
    layout = layout or ReadOptions()
    if corpus == "-" and featurizer is not None and not layout.given() \
            and format in (None, "tsv", "fasttext"):
        return _stdin_blocks(featurizer, format, problems), problems
    if corpus == "-":
        options = layout.for_format(format or "tsv", "standard input")
        if format is None and "multilabel" in layout.for_format("fasttext", "standard input"):
            options = layout.for_format("fasttext", "standard input")
        return corpora.read_stream(sys.stdin.buffer, format=format, problems=problems,
                                   **options), problems
    if Path(corpus.split("::")[0]).exists():
        kind = format or corpora.detect_format(corpus)
        return iter(corpora.read(corpus, format=kind, split=split, problems=problems,
                                 **layout.for_format(kind, corpus))), problems
    if glob.has_magic(corpus):  # part-*.tsv: each file it matches in name order, in turn
        return _each_file(_matches(corpus), format, layout, problems), problems
    if os.sep in corpus or "." in Path(corpus).name:
        raise ConfigurationError(f"{corpus}: no such file or folder")
    loaded = corpora.load(corpus, split, on_error=on_error)
    return iter(loaded.documents()), loaded.problems


def _stdin_blocks(featurizer: Any, format: str | None, problems: Any) -> Iterator[Any]:
    """Standard input in blocks read in compiled code, then, from a block it leaves to
    Python (bytes that are not UTF-8, a malformed line...), documents one by one."""
    from snowpy import corpora
    from snowpy.corpora.delimited import line_format
    from snowpy.files import Chained, NotCompiled, read_blocks

    stream = sys.stdin.buffer
    head = stream.read(1 << 16)
    first = next((line for line in head.splitlines() if line.strip()), b"")
    kind = format or line_format(first.decode("utf-8", "replace"))
    try:
        yield from read_blocks(Chained(head, stream), featurizer, format=kind)
    except NotCompiled as failed:
        yield from corpora.read_stream(io.BufferedReader(failed.rest), format=kind,
                                       problems=problems, first_line=failed.line)


def _each_file(paths: list[str], format: str | None, layout: ReadOptions, problems: Any
               ) -> Iterator[Any]:
    from snowpy import corpora

    for path in paths:
        kind = format or corpora.detect_format(path)
        yield from corpora.read(path, format=kind, problems=problems,
                                **layout.for_format(kind, path))


def _matches(pattern: str) -> list[str]:
    """The files a glob matches, in name order; none is an error."""
    matches = sorted(name for name in glob.glob(pattern) if Path(name).is_file())
    if not matches:
        raise ConfigurationError(f"{pattern}: no file matches this pattern")
    return matches


def check_classes(corpus: str, read: CorpusRead) -> None:
    """Refuse a corpus a classifier cannot learn from (:func:`check_labels`)."""
    check_labels(corpus, len(read), _classes(read.labels), is_multilabel(read.labels))


def check_labels(corpus: str, documents: int, names: set[Any], multilabel: bool) -> None:
    """Refuse ``documents`` carrying the labels ``names`` when a classifier cannot learn
    from them: one class only (every document would be given it, with probability 1),
    or nearly a class per document (the columns swapped, most likely)."""
    if len(names) < 2 and not multilabel:
        raise ConfigurationError(
            f"{corpus}: every document has the class {next(iter(names), '')!r}; a classifier "
            "needs at least two classes (a folder corpus needs a folder per class; a tsv "
            "or csv file, a label column: see --label-column)")
    if documents >= 20 and len(names) > 0.9 * documents and not multilabel:
        raise ConfigurationError(
            f"{corpus}: {documents:,} documents carry {len(names):,} different labels, nearly "
            "one each: nothing learned from one document would apply to another. Is the "
            "label column the text? (--label-column and --text-column choose them)")


def _classes(labels: Any) -> set[Any]:
    if hasattr(labels, "tolist"):  # an array of strings: its distinct ones, as Python's
        import numpy as np

        return set(np.unique(labels).tolist())
    names: set[Any] = set()
    for label in labels:
        names.update(label if isinstance(label, (list, tuple)) else (label,))
    return names


def describe_read(corpus: str, read: CorpusRead) -> str:
    """What was read, for the user: ``read 20newsgroups, split train: 11,314 documents,
    20 classes``, then a line for each note a reader made (a header row recognised...)."""
    names = _classes(read.labels)
    where = f"{corpus}, split {read.split}" if read.split else corpus
    lines = [f"read {where}: {len(read):,} document{'s' * (len(read) != 1)}, "
             f"{len(names):,} class{'es' * (len(names) != 1)}"]
    lines += [f"note: {note}" for note in getattr(read.problems, "notes", ())]
    return "\n".join(lines)


class _temporary:
    """Standard input stored in a temporary file, so every reader can take it."""

    def __init__(self, data: bytes) -> None:
        import tempfile

        handle, self.path = tempfile.mkstemp(prefix="snowpy-stdin-")
        with os.fdopen(handle, "wb") as out:
            out.write(data)

    def __enter__(self) -> str:
        return self.path

    def __exit__(self, *exc: object) -> None:
        os.unlink(self.path)


def read_lines(source: str | None, encoding: str | None = None, decode: str = "strict"
               ) -> Iterator[str]:
    """Lines of a file, or of standard input for ``None`` or ``-``, each as soon as it
    is complete (a pipe is read line by line, never to its end first). A line that is
    not valid in ``encoding`` is an error naming it, unless ``decode`` is ``replace``."""
    encoding = encoding or "utf-8"
    try:
        "".encode(encoding)
    except LookupError:
        raise ConfigurationError(f"--encoding {encoding!r}: no such text encoding") from None
    if decode not in ("strict", "replace"):
        raise ConfigurationError(f"--decode must be strict or replace, got {decode!r}")
    if source in (None, "-"):
        return _lines(sys.stdin.buffer, "standard input", encoding, decode)
    path = Path(source)
    if not path.exists() or path.is_dir():  # (a named pipe is read as it comes, a device
        #                                      line by line with the document bound)
        raise ConfigurationError(f"{path}: " + ("a folder, not a file of lines"
                                                if path.is_dir() else "no such file"))
    return _lines(path.open("rb"), str(path), encoding, decode, close=True)


def _lines(stream: Any, where: str, encoding: str, decode: str, close: bool = False
           ) -> Iterator[str]:
    from snowpy.corpora.documents import max_document_bytes
    from snowpy.corpora.sources import bounded_lines

    try:
        number = 0
        limit = max_document_bytes()
        # each line returned once complete (no read-ahead wait), and read with a bound
        for raw in bounded_lines(stream, limit):
            number += 1
            if raw is None:
                raise ConfigurationError(f"{where}:{number}: a line of more than {limit:,} "
                                         "bytes (SNOWPY_MAX_DOCUMENT_BYTES)")
            try:
                line = raw.decode(encoding, decode)
            except UnicodeDecodeError as exc:
                raise ConfigurationError(
                    f"{where}:{number}: byte {exc.start} is not valid {encoding} "
                    f"({exc.reason}); give --encoding, or --decode replace") from None
            yield line.rstrip("\r\n")
    finally:
        if close:
            stream.close()


