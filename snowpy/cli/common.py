"""What the commands share: error handling, output, reading corpora, rule options."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import orjson
import typer

from snowpy.exceptions import ConfigurationError, SnowpyError

__all__ = [
    "describe_read",
    "echo_json",
    "err",
    "fail",
    "handles_errors",
    "iter_documents",
    "parse_optional_float",
    "parse_range",
    "quiet_on_closed_pipe",
    "read_documents",
    "read_lines",
    "rule_options",
    "state",
]


class _State:
    debug = bool(os.environ.get("SNOWPY_DEBUG"))


state = _State()


def err(message: str) -> None:
    """A line on standard error."""
    typer.echo(message, err=True)


def fail(message: str, code: int = 1) -> None:
    """Stop with a message on standard error and an exit code (1: the user's mistake)."""
    err(f"snowpy: error: {message}")
    raise typer.Exit(code)


def handles_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn snowpy's errors and file errors into a message and exit status 1.

    With ``--debug`` (or ``SNOWPY_DEBUG=1``) the traceback is shown instead.
    """
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (SnowpyError, OSError) as exc:
            if state.debug:
                raise
            if isinstance(exc, OSError) and exc.filename:
                fail(f"{exc.filename}: {exc.strerror or exc}")
            fail(str(exc))
    return wrapper


def echo_json(payload: Any) -> None:
    """Print JSON on standard output."""
    typer.echo(orjson.dumps(payload, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)
               .decode())


def parse_optional_float(text: str, option: str) -> float | None:
    """A number, or None for ``none``; a clear error otherwise.

    >>> parse_optional_float("0.5", "--discard"), parse_optional_float("none", "--discard")
    (0.5, None)
    """
    if text.strip().lower() in {"none", "off", "no"}:
        return None
    try:
        return float(text)
    except ValueError:
        raise ConfigurationError(f"{option} must be a number or none, got {text!r}") from None


def parse_range(text: str | None, option: str) -> Any:
    """``"1-2"`` -> ``(1, 2)``, ``"3"`` -> ``3``, ``"none"`` -> ``None``."""
    if text is None or text.lower() in {"none", "off", "0"}:
        return None
    low, dash, high = text.partition("-")
    try:
        return (int(low), int(high)) if dash else int(low)
    except ValueError:
        raise ConfigurationError(f"{option} must look like 1-2 or 3, got {text!r}") from None


def rule_options(rule: str, extra: list[str]) -> dict[str, Any]:
    """Rule parameters from extra ``--name value`` options, validated against the rule.

    ``--name=value`` works too; a boolean parameter may be given as a flag
    (``--threshold-relative``, ``--no-threshold-relative``).
    """
    from snowpy.plugins import get_rule

    spec = get_rule(rule)
    params = {p.name: p for p in spec.params}
    values: dict[str, Any] = {}
    position = 0
    while position < len(extra):
        token = extra[position]
        position += 1
        if not token.startswith("--"):
            raise ConfigurationError(f"unexpected argument {token!r}")
        name, equals, value = token[2:].partition("=")
        key = name.replace("-", "_")
        negated = key.startswith("no_") and key[3:] in params and params[key[3:]].type is bool
        if negated:
            values[key[3:]] = False
            continue
        if key not in params:
            raise ConfigurationError(
                f"no such option --{name} (rule {rule!r} takes: "
                f"{', '.join('--' + p.replace('_', '-') for p in params)}; "
                "see snowpy plugins)"
            )
        param = params[key]
        if not equals:
            if param.type is bool and (position >= len(extra) or extra[position].startswith("--")):
                values[key] = True
                continue
            if position >= len(extra):
                raise ConfigurationError(f"option --{name} needs a value")
            value = extra[position]
            position += 1
        values[key] = param.parse(value, rule=rule)
    return values


class CorpusRead(NamedTuple):
    """What :func:`read_documents` read: texts, labels, the problems report, the split."""

    texts: list[Any]
    labels: list[Any]
    problems: Any
    split: str | None


def read_documents(corpus: str, *, split: str | None, format: str | None,
                   encoding: str | None, on_error: str, label_column: int | None = None,
                   text_column: int | None = None, prefer: str | None = None
                   ) -> CorpusRead:
    """Texts, labels, the problems report and the split read of CORPUS.

    CORPUS is a path (any format :func:`snowpy.corpora.read` knows), ``-``
    for standard input (``label<TAB>text`` or fastText lines), or the name of
    a registered corpus (``snowpy corpus list``), read in ``split``, else in
    ``prefer`` when it has that split. A corpus with splits is never read
    whole by default (training on its test documents would leak them): with
    no split given and none preferred that it has, it is refused.
    """
    from snowpy import corpora
    from snowpy.corpora.documents import Problems

    problems = Problems(on_error)
    options: dict[str, Any] = {}
    if encoding:
        options["encoding"] = encoding
    if label_column is not None:
        options["label_column"] = label_column
    if text_column is not None:
        options["text_column"] = text_column
    if corpus == "-":
        data = sys.stdin.buffer.read()
        with _temporary(data) as path:
            kind = format or ("fasttext" if data.lstrip()[:9] == b"__label__" else "tsv")
            documents = list(corpora.read(path, format=kind, problems=problems, **options))
            documents = [type(d)(d.text, d.label, d.source.replace(str(path), "<stdin>"))
                         for d in documents]
    elif Path(corpus.split("::")[0]).exists():
        if split is None and (format in (None, "directory")):
            split = _default_split(corpus, corpora.splits_of(corpus)
                                   if corpora.detect_format(corpus) == "directory" else [],
                                   prefer)
        documents = list(corpora.read(corpus, format=format, split=split, problems=problems,
                                      **options))
    elif os.sep in corpus or "." in Path(corpus).name:
        raise ConfigurationError(f"{corpus}: no such file or folder")
    else:
        from snowpy.plugins import get_corpus

        if split is None:
            split = _default_split(corpus, list(get_corpus(corpus).splits), prefer)
        loaded = corpora.load(corpus, split, on_error=on_error)
        documents = loaded.documents()
        problems = loaded.problems
        split = loaded.split
    if not documents:
        raise ConfigurationError(f"{corpus}: no documents found"
                                 + (f" in split {split!r}" if split else ""))
    return CorpusRead([d.text for d in documents], [d.label for d in documents], problems,
                      split)


def iter_documents(corpus: str, *, split: str | None, format: str | None,
                   encoding: str | None, on_error: str) -> tuple[Iterator[Any], Any]:
    """The documents of CORPUS one by one, and the problems report: standard input
    (``-``) as the lines arrive, a file as it is read, a registered corpus from memory."""
    from snowpy import corpora
    from snowpy.corpora.documents import Problems

    problems = Problems(on_error)
    options: dict[str, Any] = {"encoding": encoding} if encoding else {}
    if corpus == "-":
        return corpora.read_stream(sys.stdin.buffer, format=format, problems=problems,
                                   **options), problems
    if Path(corpus.split("::")[0]).exists():
        return iter(corpora.read(corpus, format=format, split=split, problems=problems,
                                 **options)), problems
    if os.sep in corpus or "." in Path(corpus).name:
        raise ConfigurationError(f"{corpus}: no such file or folder")
    loaded = corpora.load(corpus, split, on_error=on_error)
    return iter(loaded.documents()), loaded.problems


def describe_read(corpus: str, read: CorpusRead) -> str:
    """What was read, for the user: ``read 20newsgroups, split train: 11,314 documents,
    20 classes``, then a line for each note a reader made (a header row recognised...)."""
    names = set()
    for label in read.labels:
        names.update(label if isinstance(label, (list, tuple)) else (label,))
    where = f"{corpus}, split {read.split}" if read.split else corpus
    lines = [f"read {where}: {len(read.texts):,} documents, {len(names):,} classes"]
    lines += [f"note: {note}" for note in getattr(read.problems, "notes", ())]
    return "\n".join(lines)


def _default_split(corpus: str, splits: list[str], prefer: str | None) -> str | None:
    """The split to read when none was asked for: ``prefer`` when the corpus has it, the
    only split of a one-split corpus, else a refusal naming the splits."""
    if not splits or (len(splits) == 1 and splits[0] == "all"):
        return None if not splits else splits[0]
    if prefer in splits:
        return prefer
    if len(splits) == 1:
        return splits[0]
    raise ConfigurationError(f"{corpus} has the splits {', '.join(splits)}; choose one with "
                             "--split (reading them together would mix training and test "
                             "documents)")


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


def read_lines(source: str | None) -> Iterator[str]:
    """Lines of a file, or of standard input for ``None`` or ``-``, each as soon as it
    is complete (a pipe is read line by line, never to its end first)."""
    if source in (None, "-"):
        return _lines(sys.stdin.buffer)
    path = Path(source)
    if not path.is_file():
        raise ConfigurationError(f"{path}: no such file")
    return _lines(path.open("rb"), close=True)


def _lines(stream: Any, close: bool = False) -> Iterator[str]:
    try:
        while True:
            raw = stream.readline()  # returns once a line is complete: no read-ahead wait
            if not raw:
                return
            yield raw.decode("utf-8", "replace").rstrip("\r\n")
    finally:
        if close:
            stream.close()


class quiet_on_closed_pipe:
    """Output to a reader that went away (``snowpy predict ... | head``) ends the
    command quietly, with status 0, as the reader asked: no traceback, no message."""

    def __enter__(self) -> quiet_on_closed_pipe:
        return self

    def __exit__(self, kind: Any, exc: Any, trace: Any) -> bool:
        if kind is None or not issubclass(kind, BrokenPipeError):
            return False
        # Python flushes standard output once more at exit: point it at nothing first
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(0)
