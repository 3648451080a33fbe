"""The commands' side of reading a corpus: the options that say how a file is laid out
(a :class:`snowpy.corpora.Layout`), and what was read, said to the user, never silent.
Where a corpus is and how it is read is decided once, by :func:`snowpy.corpora.open`."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from snowpy.exceptions import ConfigurationError

if TYPE_CHECKING:  # pragma: no cover
    from snowpy.corpora.corpus import Layout, Read

__all__ = ["as_options", "check_classes", "check_labels", "describe_read", "read_as_trained",
           "read_lines"]

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


def as_options(settings: dict[str, Any]) -> str:
    """Settings as the command line's options: ``--epochs 20 --links touched``."""
    return " ".join(f"--{name.replace('_', '-')} "
                    + (f"{value:g}" if isinstance(value, float) else str(value))
                    for name, value in settings.items())


def _multilabel_defaults() -> str:
    """The multi-label defaults of the default rule and of Balanced Winnow, as options."""
    from snowpy.declared import CLASSIFIER
    from snowpy.presets import multilabel_settings

    rule = CLASSIFIER["rule"].default
    return (f"{rule}: {as_options(multilabel_settings(rule))}; balanced-winnow: "
            f"{as_options(multilabel_settings('balanced-winnow'))}")


Multilabel = Annotated[bool, typer.Option(
    "--multilabel", help="each document has a set of labels, each decided on its own (VW's "
    "--multilabel_oaa, fastText's -loss ova). Recognised without it from the labels: a "
    "JSON list, or several fastText __label__ tags on a line. A multi-label corpus is "
    "trained at its rule's multi-label defaults where those options are not given ("
    f"{_multilabel_defaults()}; any other rule: --epochs 20 --links touched)",
    rich_help_panel=_PANEL)]

def read_as_trained(layout: Layout, recorded: Any, corpus: str, format: str | None,
                    given: set[str], *, quiet: bool) -> Layout:
    """``layout`` completed by a model's recorded reader options
    (:meth:`~snowpy.corpora.Layout.completed`), the options taken said in a note."""
    completed, taken = layout.completed(recorded, corpus, format, given)
    if taken and not quiet:
        from snowpy.cli.common import err

        err(f"note: {corpus} read as the model's training corpus was: {' '.join(taken)}")
    return completed


def check_classes(corpus: str, read: Read) -> None:
    """Refuse a corpus a classifier cannot learn from (:func:`check_labels`)."""
    from snowpy.network.labels import is_multilabel

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


def describe_read(corpus: str, read: Read, *, training: bool = True) -> str:
    """What was read, for the user: ``read 20newsgroups, split train: 11,314 documents,
    20 classes``, then a line for each note a reader made (a header row recognised...),
    and, for a corpus to train on, a note on a class that is most likely not one."""
    names = _classes(read.labels)
    where = f"{corpus}, split {read.split}" if read.split else corpus
    lines = [f"read {where}: {len(read):,} document{'s' * (len(read) != 1)}, "
             f"{len(names):,} class{'es' * (len(names) != 1)}"]
    lines += [f"note: {note}" for note in getattr(read.problems, "notes", ())]
    if training:
        lines += [f"note: {note}" for note in _lopsided(read.labels, len(names))]
    return "\n".join(lines)


#: Folder names that hold unlabelled documents in corpora as distributed (aclImdb's
#: ``train/unsup``), which a folder reader takes for one class more.
UNLABELLED = ("unsup", "unlabeled", "unlabelled")


def _lopsided(labels: Any, classes: int) -> list[str]:
    """A note on a class that is most likely not one: a folder of unlabelled documents,
    or, among three classes or more, one class holding more documents than all the others
    together (single-label corpora)."""
    from collections import Counter

    from snowpy.network.labels import is_multilabel

    if classes < 2 or is_multilabel(labels):
        return []
    counts = Counter(labels.tolist() if hasattr(labels, "tolist") else labels)
    total = sum(counts.values())
    notes = []
    for name, n in counts.most_common():
        if str(name).lower() in UNLABELLED or (classes >= 3 and n > total - n):
            others = ", ".join(f"{other} {m:,}" for other, m in counts.most_common()
                               if other != name)
            notes.append(f"the class {name!r} holds {n:,} of the {total:,} documents "
                         f"({others}); it is learned as a class like the others, and "
                         "predicted. A folder of unlabelled documents (aclImdb's "
                         "train/unsup) is no class: move it out of the corpus folder")
    return notes


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
    from snowpy.corpora.sources import advice, bounded_lines, recoded

    said = encoding
    number = 0
    try:
        limit = max_document_bytes()
        lines, encoding = recoded(stream, encoding, decode)  # (UTF-16: as UTF-8)
        # each line returned once complete (no read-ahead wait), and read with a bound
        for raw in bounded_lines(lines, limit):
            number += 1
            if raw is None:
                raise ConfigurationError(f"{where}:{number}: a line of more than {limit:,} "
                                         "bytes (SNOWPY_MAX_DOCUMENT_BYTES)")
            try:
                line = raw.decode(encoding, decode)
            except UnicodeDecodeError as exc:
                from snowpy.cli.common import cli_words

                raise ConfigurationError(
                    f"{where}:{number}: the byte 0x{raw[exc.start]:02x} at offset {exc.start} "
                    f"is not valid {encoding} "
                    f"({exc.reason}); {cli_words(advice(raw))}") from None
            yield line.rstrip("\r\n")
    except UnicodeDecodeError as exc:  # (met recoding UTF-16 or UTF-32)
        raise ConfigurationError(
            f"{where}:{number + 1}: not valid {said} ({exc.reason}); give --encoding, or "
            "--decode replace") from None
    finally:
        if close:
            stream.close()


