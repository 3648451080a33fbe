"""What the commands share: error handling, output, rule options (reading corpora:
:mod:`snowpy.cli.reading`)."""

from __future__ import annotations

import functools
import os
import re
import sys
import warnings
from collections.abc import Callable
from typing import Any

import orjson
import typer

from snowpy.exceptions import ConfigurationError, SnowpyError

__all__ = [
    "echo_json",
    "err",
    "fail",
    "given_options",
    "check_output",
    "cli_words",
    "handles_errors",
    "parse_optional_float",
    "parse_range",
    "quiet_on_closed_pipe",
    "rule_options",
    "settle_memory",
    "state",
]


class _State:
    debug = bool(os.environ.get("SNOWPY_DEBUG"))
    #: Run as the ``snowpy`` program (:func:`snowpy.cli.main`), not called in another
    #: program's process: the process's settings are the command line's to make.
    owns_process = False


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
            with quiet_on_closed_pipe(), warnings.catch_warnings():  # (| head -1: status 0)
                if not state.debug:
                    warnings.showwarning = _one_line
                return command(*args, **kwargs)
        except (SnowpyError, OSError) as exc:
            if state.debug:
                raise
            if isinstance(exc, OSError) and exc.filename:
                fail(f"{exc.filename}: {exc.strerror or exc}")
            fail(cli_words(str(exc)))
        except MemoryError as exc:  # the last resort: the bounds below name what was large
            if state.debug:
                raise
            what = f" ({exc})" if str(exc) else ""
            fail(f"out of memory{what}: the input or the model is too large for this "
                 "machine; bound documents with SNOWPY_MAX_DOCUMENT_BYTES, or use fewer --bits "
                 "or n-grams")
    return wrapper


def _one_line(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
              line: Any = None) -> None:
    """A library warning as the command line says it: one ``warning:`` line, without
    the library's source line."""
    text = re.sub(r"\b(char_)?ngrams=(?:\((\d+), (\d+)\)|(\d+))",
                  lambda m: f"--{'char-' if m[1] else ''}ngrams {m[4] or f'{m[2]}-{m[3]}'}",
                  str(message))
    err(f"warning: {cli_words(text)}")


#: Python keyword arguments the library's messages name, and the options that set them.
_OPTION_OF = {"errors": "decode", "text_fields": "text-field", "label_field": "label-field",
              "n_jobs": "threads"}
_KEYWORD = re.compile(r"\b([a-z][a-z_]*)=(?:True\b|'([\w.:-]+)')")
#: A library message that opens on a parameter's name: ``calibrate must be ...``.
_OPENING = re.compile(r"^([a-z][a-z_]*) must be ")


def cli_words(message: str) -> str:
    """A library message in the command line's words: the keyword arguments it names as
    the options that set them.

    >>> cli_words("use errors='replace' to treat them as separators")
    'use --decode replace to treat them as separators'
    >>> cli_words("(read with multilabel=True)")
    '(read with --multilabel)'
    >>> cli_words("calibrate must be 'cv' or 'none', got 'cv:1'")
    "--calibrate must be 'cv' or 'none', got 'cv:1'"
    """
    def option(match: re.Match[str]) -> str:
        name = _OPTION_OF.get(match[1], match[1].replace("_", "-"))
        return f"--{name} {match[2]}" if match[2] else f"--{name}"

    message = _OPENING.sub(lambda m: f"--{_OPTION_OF.get(m[1], m[1].replace('_', '-'))} "
                                     "must be ", message)
    return _KEYWORD.sub(option, message)


def check_output(output: Any, inputs: list[Any], *, force: bool = False, option: str = "-o"
                 ) -> None:
    """Refuse an output path that would destroy something: a folder, a device or any
    file that is not a regular one, one of the inputs (the corpus), or (without
    ``force``) a symbolic link, which saving would replace by a file; and one where no
    file can be written, before any work (the save makes the folders missing). The
    messages name the path as ``option`` (``-o``, or the argument a path came from)."""
    import tempfile
    from pathlib import Path

    path = Path(output)
    folder = path.absolute().parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise ConfigurationError(f"{option} {path}: {folder} is a file, not a folder")
    try:
        handle, probe = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise ConfigurationError(f"{option} {path}: no file can be written in {folder} "
                                 f"({exc.strerror or exc})") from None
    os.close(handle)
    os.unlink(probe)
    if path.is_symlink() and not force:
        raise ConfigurationError(f"{option} {path}: a symbolic link (to {os.readlink(path)}); saving "
                                 "replaces the link by a file: give the target's path, or "
                                 "--force")
    if path.exists():
        if path.is_dir():
            raise ConfigurationError(f"{option} {path}: a folder, not a model file")
        mode = path.stat().st_mode
        import stat

        if not stat.S_ISREG(mode):
            raise ConfigurationError(f"{option} {path}: not a regular file (a device, pipe or "
                                     "socket); a model is written to a file")
        for item in inputs:
            if item is None or str(item) == "-":
                continue
            source = Path(str(item).split("::")[0])
            if source.exists() and source.is_file() and os.path.samefile(source, path):
                raise ConfigurationError(f"{option} {path} is the corpus {item}: saving would "
                                         "overwrite it")


def echo_json(payload: Any) -> None:
    """Print JSON on standard output."""
    typer.echo(orjson.dumps(payload, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)
               .decode())


def summarise(summary: dict[str, Any], line: str, *, json_output: bool, quiet: bool
              ) -> None:
    """A command's summary: JSON on standard output with ``--json``, else ``line`` on
    standard error unless ``--quiet``."""
    if json_output:
        echo_json(summary)
    elif not quiet:
        err(line)


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
        shortest, longest = int(low), int(high) if dash else None
    except ValueError:
        raise ConfigurationError(f"{option} must look like 1-2 or 3, got {text!r}") from None
    if longest is None:
        return shortest
    if shortest > longest:
        raise ConfigurationError(f"{option} must look like 1-2 or 3 (the shortest length "
                                 f"first), got {text!r}")
    return shortest, longest


def rule_options(rule: str, extra: list[str], command: Any = None) -> dict[str, Any]:
    """Rule parameters from extra ``--name value`` options, validated against the rule.

    ``--name=value`` works too; a boolean parameter may be given as a flag
    (``--threshold-relative``, ``--no-threshold-relative``). An option of neither the
    rule nor ``command`` (a click command) names the closest of both, as click does.
    """
    from snowpy.network.cloud import cloud_members
    from snowpy.plugins import get_rule

    members = cloud_members(rule) or [(rule, {})]
    params = {}  # a cloud ("winnow+perceptron") takes every member's parameters
    for name, _ in members:
        params.update({p.name: p for p in get_rule(name).params if p.name not in params})
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
            import difflib

            ours = [option for param in getattr(command, "params", ())
                    for option in param.opts if option.startswith("--")]
            close = difflib.get_close_matches(
                f"--{name}", ours + ["--" + p.replace("_", "-") for p in params], n=1)
            raise ConfigurationError(
                f"no such option --{name}"
                + (f": did you mean {close[0]}?" if close else "")
                + f" (rule {rule!r} takes: "
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


class quiet_on_closed_pipe:
    """Output to a reader that went away (``snowpy predict ... | head``) ends the
    command quietly, with status 0, as the reader asked: no traceback, no message."""

    def __enter__(self) -> quiet_on_closed_pipe:
        return self

    def __exit__(self, kind: Any, exc: Any, trace: Any) -> bool:  # type: ignore[exit-return]
        if kind is None or not issubclass(kind, BrokenPipeError):
            return False
        # Python flushes standard output once more at exit: point it at nothing first
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(0)


#: The environment variable naming a file of key bytes: every model the command line
#: saves is signed with it, and every model it loads must be signed with it.
KEY_VARIABLE = "SNOWPY_MODEL_KEY_FILE"


def model_key() -> bytes | None:
    """The signing key of ``$SNOWPY_MODEL_KEY_FILE`` (None when unset)."""
    where = os.environ.get(KEY_VARIABLE)
    if not where:
        return None
    try:
        with open(where, "rb") as stream:
            key = stream.read(1 << 16)
    except OSError as exc:
        raise ConfigurationError(f"{KEY_VARIABLE}={where}: cannot read the key "
                                 f"({exc.strerror or exc})") from None
    if len(key) < 16:
        raise ConfigurationError(f"{KEY_VARIABLE}={where}: a key has at least 16 bytes, "
                                 f"this one {len(key)}")
    return key


def console(**options: Any) -> Any:
    """A rich console whose closed pipe ends the command with status 0, as
    :class:`quiet_on_closed_pipe` does (rich's own answer is status 1)."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    return _Console(**options)


def table(*columns: str, whole: dict[str, list[str]] | None = None, **options: Any) -> Any:
    """A rich table whose cells wrap where they do not fit, never cut (rich ends a cut
    word with an ellipsis). ``whole`` names, per column, what a user must type (a
    corpus's name, an option): the column is at least as wide as the longest, so that
    each stays on one line while the other columns wrap, at 80 columns and in a pipe."""
    from rich.table import Column, Table

    widths = {name: max(map(len, words), default=0) for name, words in (whole or {}).items()}
    return Table(*(Column(name, overflow="fold", min_width=widths.get(name))
                   for name in columns), **options)


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """``1 epoch``, ``2 epochs``, ``4,837 documents``: a count as a user reads it.

    >>> counted(1, "epoch"), counted(4837, "document"), counted(2, "class", "classes")
    ('1 epoch', '4,837 documents', '2 classes')
    """
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"


def given_options(ctx: Any) -> set[str]:
    """The parameters the command line gave (by name), not left at their defaults. (By the
    source's name: typer may carry its own copy of click's enum.)"""
    given = set()
    for name in ctx.params:
        source = ctx.get_parameter_source(name)
        if source is not None and source.name != "DEFAULT":
            given.add(name)
    return given


def settle_memory(*, stream: bool = False) -> None:
    """The command line's process-wide memory settings, when it runs as the ``snowpy``
    program (Linux; the library, and a command called in another program's process,
    leave that process as it is).

    * No transparent huge pages (``PR_SET_THP_DISABLE``, which the processes the command
      starts inherit: a local cluster's workers). numpy asks for them for every array of
      4 MB or more; the first touch of such an array's memory then zeroes 2 MB at a
      time, and where the kernel has no free 2 MB at hand it compacts memory first,
      synchronously (its default for memory asked so). A command's memory is mostly
      such arrays, fresh: reading and weighing 360,000 synthetic documents took 1.2 s
      more with them, and the epoch's random reads gained nothing measurable.
    * glibc hands every large freed block back to the system. It serves a block of 128
      KiB or more from its own mapping, freed back to the system, until such a block is
      freed: then it raises that threshold (to 32 MiB at most), and the large
      temporaries that follow (numpy's, reading a corpus or a model) come from the heap,
      where freed memory stays the process's. A fixed threshold (as the environment
      variable ``MALLOC_MMAP_THRESHOLD_`` sets, which wins when set) keeps the peak to
      what is held at once: 20 Newsgroups trained at the defaults peaks at 328 MB
      instead of 401, a one-line ``snowpy predict`` of that model at 115 MB instead of
      135, at no cost in time (docs/benchmarks.md).
    * ``stream``: a stream's blocks are alike, and each one's arrays are freed before the
      next block's are made; blocks below 4 MiB come from the heap and stay there (up to
      256 MiB kept free), so that the next block finds its memory mapped already instead
      of faulting it in again: 360,000 documents 5.7 to 4.9 s, the peak 691 to 774 MB,
      as bounded as before.
    """
    if not sys.platform.startswith("linux") or not state.owns_process:
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return
    pr_set_thp_disable = 41
    getattr(libc, "prctl", lambda *_: -1)(pr_set_thp_disable, 1, 0, 0, 0)
    mallopt = getattr(libc, "mallopt", None)  # (glibc's; musl has none)
    if mallopt is None or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    mallopt(ctypes.c_int(m_mmap_threshold), ctypes.c_int((4 << 20) if stream else 128 << 10))
    if stream:
        mallopt(ctypes.c_int(m_trim_threshold), ctypes.c_int(256 << 20))
