"""The ``snowpy`` command line: one module per command, composed here.

Exit status: 0 success, 1 a user error (missing file, bad option value,
malformed corpus, unreadable model; one line says which), 2 a usage error (an
unknown option, a missing argument: click's usage text), 130 interrupted.
``--debug`` (or ``SNOWPY_DEBUG=1``) shows tracebacks.
"""

from __future__ import annotations

import gc
import importlib
import os
from collections.abc import Iterator, MutableMapping
from typing import Annotated, Any

import typer
import typer.main
from typer.core import TyperGroup
from typer.models import CommandInfo

from snowpy._version import __version__
from snowpy.cli.common import settle_memory, state

__all__ = ["app", "main"]

#: The commands, in the order ``snowpy --help`` lists them, and their settings: each
#: command's module ``snowpy.cli.<name>`` defines a function of the command's name (and,
#: in ``HELP``, its help when not the function's docstring) or, for a group of commands,
#: a ``Typer`` named ``<name>_app``. A command's module is imported when the command
#: runs (or ``--help`` lists it), not before: a process that trains imports no server.
COMMANDS: dict[str, dict[str, Any]] = {
    "train": {"context_settings": {"allow_extra_args": True, "ignore_unknown_options": True}},
    "evaluate": {}, "predict": {}, "inspect": {}, "explain": {}, "serve": {}, "forget": {},
    "tune": {}, "plugins": {}, "experiment": {}, "corpus": {},
}


class _Commands(MutableMapping[str, Any]):
    """The group's commands by name, each one made from its module when first asked for
    (:data:`COMMANDS`)."""

    def __init__(self) -> None:
        self.made: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self.made:
            if name not in COMMANDS:
                raise KeyError(name)
            try:
                module = importlib.import_module(f"snowpy.cli.{name}")
            except KeyError as exc:  # (click would take it for a command not found)
                raise RuntimeError(f"snowpy.cli.{name} could not be imported") from exc
            if hasattr(module, f"{name}_app"):
                self.made[name] = typer.main.get_group(getattr(module, f"{name}_app"))
                self.made[name].name = name
            else:
                info = CommandInfo(name, callback=getattr(module, name),
                                   help=getattr(module, "HELP", None), **COMMANDS[name])
                self.made[name] = typer.main.get_command_from_info(
                    info, pretty_exceptions_short=app.pretty_exceptions_short,
                    rich_markup_mode=app.rich_markup_mode)
        return self.made[name]

    def __setitem__(self, name: str, command: Any) -> None:
        raise TypeError("snowpy's commands are named in snowpy.cli.COMMANDS")

    def __delitem__(self, name: str) -> None:
        raise TypeError("snowpy's commands are named in snowpy.cli.COMMANDS")

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


class _Group(TyperGroup):
    """snowpy's commands (:data:`COMMANDS`): a bad option value is one line and status
    1, as every other mistake of the user's (click says it in a usage box, with status
    2)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.commands:
            raise TypeError(f"commands {sorted(self.commands)} were registered with typer: "
                            "snowpy's commands are named in snowpy.cli.COMMANDS")
        self.commands = _Commands()

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


app = typer.Typer(name="snowpy", no_args_is_help=True, add_completion=True, cls=_Group,
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


def main() -> None:
    """Entry point of the ``snowpy`` script."""
    # numpy's OpenBLAS starts a thread per core at import, which then spin: the commands
    # do no linear algebra worth them (and a single thread steadies numpy's import)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    state.owns_process = True
    settle_memory()
    try:
        app(prog_name="snowpy")
    finally:
        # the process ends: its objects go as their references do, without a last search
        # of all of them for cycles (20 ms of the 30 the interpreter takes to end)
        gc.freeze()
