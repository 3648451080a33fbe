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


def test_every_hook_is_documented():
    import inspect

    from snowpy import hookspecs

    hooks = [name for name, value in inspect.getmembers(hookspecs, inspect.isfunction)
             if name.startswith("snowpy_")]
    assert hooks == sorted(["snowpy_corpora", "snowpy_feature_extractors",
                            "snowpy_update_rules"])
    text = (DOCS / "plugins.md").read_text()
    for hook in hooks:
        assert f"### `{hook}`" in text, f"{hook} is not documented in docs/plugins.md"
        assert getattr(hookspecs, hook).__doc__.strip(), f"{hook} has no docstring"


def test_readme_commands_match_ci():
    readme = (DOCS.parent / "README.md").read_text()
    ci = (DOCS.parent / ".ci" / "run").read_text()
    test_command = 'python -m pip install -e ".[test]" ./plugins/snowpy-arow && python -m pytest'
    assert test_command in readme and test_command in ci
    assert "snowpy train corpora/demo/train.tsv -o demo.snowpy" in readme
