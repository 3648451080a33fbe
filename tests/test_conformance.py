"""snowpy's own rules pass the conformance suite they ship to plugin authors."""

from __future__ import annotations

import pytest

from snowpy.testing import check_rule, conformance_checks

RULES = ["perceptron", "winnow", "balanced-winnow", "thick-separator", "aggressive",
         "passive-aggressive", "naive-bayes", "normalised-winnow"]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("check", conformance_checks(), ids=lambda check: check.__name__)
def test_builtin_rules_conform(rule, check):
    check(rule)


def test_check_rule_runs_everything():
    check_rule("winnow", {"alpha": 1.5, "beta": 0.7})


def test_fixture_registers_for_one_test(snowpy_plugin):
    import dataclasses
    import types

    import snowpy
    from snowpy.plugins import get_rule, list_rules

    copy = dataclasses.replace(get_rule("perceptron"), name="fixture-rule")
    snowpy_plugin(types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: [copy])),
                  name="fixture-plugin")
    assert "fixture-rule" in list_rules()
