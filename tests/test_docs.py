"""The documentation keeps up with the code."""

from __future__ import annotations

from pathlib import Path

from snowpy.plugins import list_rules

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_every_builtin_rule_and_parameter_is_documented():
    text = (DOCS / "rules.md").read_text()
    for name, provided in list_rules().items():
        if not provided.plugin.startswith("snowpy."):
            continue
        assert f"`{name}`" in text, name
        for param in provided.record.params:
            assert f"`{param.name}`" in text, (name, param.name)
