"""Testing helpers for update-rule plugins: a conformance suite and a fixture.

Run the suite on a rule from its own tests::

    from snowpy.testing import check_rule

    def test_my_rule_conforms():
        check_rule("my-rule")          # raises AssertionError naming the failed check

or one pytest test per check::

    from snowpy.testing import conformance_checks
    import pytest

    @pytest.mark.parametrize("check", conformance_checks(), ids=lambda c: c.__name__)
    def test_conformance(check):
        check("my-rule")

The ``snowpy_plugin`` fixture (registered with pytest through the ``pytest11``
entry point) registers a plugin object for one test and removes it after.
"""

from __future__ import annotations

from snowpy.testing.conformance import check_rule, conformance_checks

__all__ = ["check_rule", "conformance_checks"]
