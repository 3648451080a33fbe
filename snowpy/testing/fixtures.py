"""pytest fixtures for snowpy plugins (loaded through the ``pytest11`` entry point)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest

from snowpy.plugins import temporary_plugin


@pytest.fixture
def snowpy_plugin() -> Iterator[Callable[..., str]]:
    """Register plugin objects for the current test only.

    >>> def test_it(snowpy_plugin):  # doctest: +SKIP
    ...     snowpy_plugin(my_module, name="mine")
    ...     assert "my-rule" in snowpy.plugins.list_rules()
    """
    with contextlib.ExitStack() as stack:
        def register(plugin: object, name: str | None = None) -> str:
            return stack.enter_context(temporary_plugin(plugin, name))

        yield register
