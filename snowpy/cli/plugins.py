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
    check: Annotated[str | None, typer.Option(
        help="run the conformance suite on this rule in a separate process, its kernel's "
             "buffers guarded: a kernel that writes outside its arrays is named, not a "
             "crash of yours")] = None,
) -> None:
    """List installed update rules, feature extractors and corpora, with their parameters."""
    if check is not None:
        _check(check)
        return
    data = installed()
    if json_output:
        echo_json(data)
        return
    from snowpy.cli.common import console as make_console
    from snowpy.cli.common import table as Table

    console = make_console()
    for kind, records in data.items():
        table = Table("name", "summary (from)", "parameters (default)", title=kind,
                      title_justify="left", show_lines=kind == "rules",
                      whole={"name": [r["name"] for r in records],
                             "parameters (default)": [
                                 "--" + p["name"].replace("_", "-")
                                 for r in records for p in r["parameters"]]})
        for record in records:
            params = "\n".join(f"--{p['name'].replace('_', '-')}\n  {p['default']}; {p['range']}"
                               for p in record["parameters"])
            table.add_row(record["name"], f"{record['summary']}\n(from "
                          f"{record['distribution']})", params)
        console.print(table)


def _check(rule: str) -> None:
    """The conformance suite on ``rule`` in a child process, its step run on guarded
    copies of its buffers (and numba's bounds checking on, for a numba rule): a pass,
    a failure named, or the signal that killed it."""
    from snowpy.cli.common import err, fail
    from snowpy.cli.rule_check import verify_rule
    from snowpy.plugins import rule_provider

    provided = rule_provider(rule)  # an unknown rule is named before anything runs
    err(f"checking rule {rule!r} (plugin {provided.plugin!r}, {provided.distribution}) "
        "with its buffers guarded...")
    ok, message = verify_rule(rule)
    if not ok:
        fail(message)
    typer.echo(message)
