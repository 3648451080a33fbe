"""The ``snowpy`` command line: one module per command, composed here.

Exit status: 0 success, 1 a user error (missing file, bad option value,
malformed corpus, unreadable model; one line says which), 2 a usage error (an
unknown option, a missing argument: click's usage text), 130 interrupted.
``--debug`` (or ``SNOWPY_DEBUG=1``) shows tracebacks.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from snowpy._version import __version__
from snowpy.cli.common import settle_memory, state
from snowpy.cli.corpus import corpus_app
from snowpy.cli.evaluate import evaluate
from snowpy.cli.experiment import experiment
from snowpy.cli.explain import explain
from snowpy.cli.forget import forget
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
for command in (evaluate, predict, inspect, explain, serve, forget, tune, plugins, experiment):
    app.command(command.__name__)(command)
app.add_typer(corpus_app, name="corpus")


def main() -> None:
    """Entry point of the ``snowpy`` script."""
    # numpy's OpenBLAS starts a thread per core at import, which then spin: the commands
    # do no linear algebra worth them (and a single thread steadies numpy's import)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    state.owns_process = True
    settle_memory()
    app(prog_name="snowpy")
