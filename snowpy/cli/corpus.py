"""``snowpy corpus list | info NAME | fetch NAME``."""

from __future__ import annotations

from typing import Annotated

import typer

from snowpy.cli.common import echo_json, handles_errors

corpus_app = typer.Typer(help="Registered corpora: list them, describe one, fetch its file.",
                         no_args_is_help=True)


def _where(spec) -> str | None:
    from snowpy.corpora.registry import present

    found = present(spec)
    return None if found is None else str(found[0])


@corpus_app.command("list")
@handles_errors
def list_(json_output: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Every registered corpus, its splits, and whether its file is present."""
    from snowpy.plugins import list_corpora

    rows = [{"name": name, "summary": p.record.summary, "splits": list(p.record.splits),
             "present": _where(p.record)} for name, p in sorted(list_corpora().items())]
    if json_output:
        echo_json(rows)
        return
    from snowpy.cli.common import console
    from snowpy.cli.common import table as Table

    table = Table("name", "splits", "file", "summary",
                  whole={"name": [row["name"] for row in rows]})
    for row in rows:  # (where: --json and `corpus info`; a path would not fit 80 columns)
        table.add_row(row["name"], ", ".join(row["splits"]),
                      "present" if row["present"] else "absent", row["summary"])
    console().print(table)


@corpus_app.command("info")
@handles_errors
def info(name: str, json_output: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Everything known about corpus NAME: files, checksums, splits, license, citation."""
    from snowpy.corpora.registry import data_dirs
    from snowpy.plugins import get_corpus

    spec = get_corpus(name)
    data = {"name": spec.name, "summary": spec.summary, "splits": list(spec.splits),
            "counts": dict(spec.counts), "split_note": spec.split_note, "source": spec.source,
            "license": spec.license, "citation": spec.citation, "multilabel": spec.multilabel,
            "files": [{"name": f.name, "sha256": f.sha256, "url": f.url} for f in spec.files],
            "present": _where(spec), "data_dirs": [str(d) for d in data_dirs()],
            "options": [p.name for p in spec.options]}
    if json_output:
        echo_json(data)
        return
    fetched = any(f.url for f in spec.files)
    shown = {**data, "present": data["present"] or "absent: put its file in one of data_dirs "
             "(or point SNOWPY_DATA at the folder that holds it)"
             + (f", or snowpy corpus fetch {spec.name}" if fetched else "")}
    for key, value in shown.items():
        typer.echo(f"{key:>12}: {value}")


@corpus_app.command("fetch")
@handles_errors
def fetch(name: str) -> None:
    """Find corpus NAME's file (verifying it), downloading it when absent."""
    from snowpy.corpora.registry import locate
    from snowpy.plugins import get_corpus

    typer.echo(str(locate(get_corpus(name))))
