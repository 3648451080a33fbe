"""The multi-label defaults (:data:`snowpy.presets.MULTILABEL`) on the command line: set
where the user gave ``--multilabel`` or the corpus was recognised as multi-label, for each
option the user did not give."""

from __future__ import annotations

from typing import Any

import typer

__all__ = ["apply_multilabel_defaults"]


def apply_multilabel_defaults(ctx: typer.Context, classifier: Any, rule: str,
                              given_rule_params: dict[str, Any], *,
                              streaming: bool = False) -> dict[str, Any]:
    """Set on ``classifier`` each multi-label setting for ``rule`` whose option was not on
    the command line (a typer option left at its default, or a rule parameter absent from
    ``given_rule_params``); the settings made. A stream keeps its one pass."""
    from snowpy.cli.common import given_options
    from snowpy.presets import multilabel_settings

    chosen, given = {}, given_options(ctx) | set(given_rule_params)
    for name, value in multilabel_settings(rule).items():
        if name in given:
            continue
        if name == "epochs" and streaming:
            continue
        chosen[name] = value
    classifier.set_params(**chosen)
    return chosen


def said(chosen: dict[str, Any], why: str) -> str:
    """The note that says which multi-label defaults were taken, and why."""
    options = " ".join(f"--{name.replace('_', '-')} "
                       + (f"{value:g}" if isinstance(value, float) else str(value))
                       for name, value in chosen.items())
    return (f"note: {why}: trained at the multi-label defaults {options} (an option given "
            "overrides its default)" if chosen else
            f"note: {why}: every multi-label setting was given")
