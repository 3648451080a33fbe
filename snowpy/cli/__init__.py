"""The ``snowpy`` command line: one module per command, composed here.

Exit status: 0 success, 1 a user error (missing file, bad option value,
malformed corpus, unreadable model; one line says which), 2 a usage error (an
unknown option, a missing argument: click's usage text), 130 interrupted.
``--debug`` (or ``SNOWPY_DEBUG=1``) shows tracebacks.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from snowpy._version import __version__
from snowpy.cli.common import state
from snowpy.cli.corpus import corpus_app
from snowpy.cli.evaluate import evaluate
from snowpy.cli.experiment import experiment
from snowpy.cli.explain import explain
from snowpy.cli.inspect import inspect
from snowpy.cli.plugins import plugins
from snowpy.cli.predict import predict
from snowpy.cli.serve import serve
from snowpy.cli.train import HELP as TRAIN_HELP
from snowpy.cli.train import train
from snowpy.cli.tune import tune

__all__ = ["app", "main"]

class _Commands(TyperGroup):
    """snowpy's commands: a bad option value is one line and status 1, as every other
    mistake of the user's (click says it in a usage box, with status 2)."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except typer.BadParameter as exc:
            if state.debug or type(exc).__name__ == "MissingParameter":
                raise  # (a usage error: click's usage text, status 2)
            message = exc.format_message()
            command = exc.ctx.command_path if exc.ctx is not None else "snowpy"
            typer.echo(f"snowpy: error: {message[:1].lower()}{message[1:]} ({command} "
                       "--help)", err=True)
            raise typer.Exit(1) from None


app = typer.Typer(name="snowpy", no_args_is_help=True, add_completion=True, cls=_Commands,
                  help="Sparse, online, mistake-driven text classification (SNoW in Python).")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"snowpy {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="print the version and exit")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="show tracebacks")] = False,
) -> None:
    state.debug = state.debug or debug


app.command("train", help=TRAIN_HELP,
            context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(train)
app.command("evaluate")(evaluate)
app.command("predict")(predict)
app.command("inspect")(inspect)
app.command("explain")(explain)
app.command("serve")(serve)
app.command("tune")(tune)
app.command("plugins")(plugins)
app.command("experiment")(experiment)
app.add_typer(corpus_app, name="corpus")


def main() -> None:
    """Entry point of the ``snowpy`` script."""
    # numpy's OpenBLAS starts a thread per core at import, which then spin: the commands
    # do no linear algebra worth them (and a single thread steadies numpy's import)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    settle_memory()
    app(prog_name="snowpy")


def settle_memory() -> None:
    """The command line's process-wide memory settings (Linux; the library leaves its
    users' process as it is).

    * glibc hands every large freed block back to the system. It serves a block of 128
      KiB or more from its own mapping, freed back to the system, until such a block is
      freed: then it raises that threshold (to 32 MiB at most), and the large
      temporaries that follow (numpy's, reading a corpus or a model) come from the heap,
      where freed memory stays the process's. A fixed threshold (as the environment
      variable ``MALLOC_MMAP_THRESHOLD_`` sets, which wins when set) keeps the peak to
      what is held at once: 20 Newsgroups trained at the defaults peaks at 328 MB
      instead of 401, a one-line ``snowpy predict`` of that model at 115 MB instead of
      135, at no cost in time (docs/benchmarks.md).
    * No transparent huge pages (``PR_SET_THP_DISABLE``, which the processes the command
      starts inherit: a local cluster's workers). numpy asks for them for every array of
      4 MB or more; the first touch of such an array's memory then zeroes 2 MB at a
      time, and where the kernel has no free 2 MB at hand it compacts memory first,
      synchronously (its default for memory asked so). A command's memory is mostly
      such arrays, fresh: reading and weighing 360,000 synthetic documents took 1.2 s
      more with them, and the epoch's random reads gained nothing measurable.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return
    pr_set_thp_disable = 41
    getattr(libc, "prctl", lambda *_: -1)(pr_set_thp_disable, 1, 0, 0, 0)
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return
    mallopt = getattr(libc, "mallopt", None)  # (glibc's; musl has none)
    if mallopt is None:
        return
    m_mmap_threshold = -3
    mallopt(ctypes.c_int(m_mmap_threshold), ctypes.c_int(128 * 1024))
