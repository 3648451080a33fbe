"""``snowpy plugins``: installed rules, extractors and corpora, and where they come from."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from snowpy.cli.common import echo_json, handles_errors


def _params(spec: Any) -> list[dict[str, Any]]:
    return [{"name": p.name, "default": p.default, "range": p.describe_range(), "doc": p.doc}
            for p in getattr(spec, "params", ()) or getattr(spec, "options", ())]


def installed() -> dict[str, list[dict[str, Any]]]:
    """Every plugin record, with its provider, as plain data."""
    from snowpy.plugins import list_corpora, list_extractors, list_rules

    def rows(found: dict) -> list[dict[str, Any]]:
        return [{"name": name, "plugin": p.plugin, "distribution": p.distribution,
                 "summary": p.record.summary, "parameters": _params(p.record)}
                for name, p in sorted(found.items())]

    return {"rules": rows(list_rules()), "extractors": rows(list_extractors()),
            "corpora": rows(list_corpora())}


@handles_errors
def plugins(
    json_output: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """List installed update rules, feature extractors and corpora, with their parameters."""
    data = installed()
    if json_output:
        echo_json(data)
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for kind, records in data.items():
        table = Table("name", "from", "summary", "parameters (default)", title=kind,
                      title_justify="left", show_lines=kind == "rules")
        for record in records:
            params = "\n".join(f"--{p['name'].replace('_', '-')} ({p['default']}; {p['range']})"
                               for p in record["parameters"])
            table.add_row(record["name"], record["distribution"], record["summary"], params)
        console.print(table)
