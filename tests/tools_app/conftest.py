from __future__ import annotations

from collections.abc import Iterator

import pytest

from tools_app import types


@pytest.fixture
def tool_types() -> Iterator[None]:
    """Register the tests' own tool types for one test, then restore the registry."""
    before = dict(types.TYPE_MODULES)
    types.register("test_echo", "tests.tools_app.echo_type")
    types.register("test_builtin", "tests.tools_app.builtin_type")
    yield
    types.TYPE_MODULES.clear()
    types.TYPE_MODULES.update(before)
    types.get_type.cache_clear()
