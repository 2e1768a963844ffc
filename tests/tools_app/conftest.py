from __future__ import annotations

from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

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


@pytest.fixture
def private_network(settings) -> Callable[[str], str]:
    """`allow(url)`: put the URL's exact host:port on the operator's allow-list
    (settings.STUDIO_PRIVATE_NETWORKS), so the address guard lets requests reach that one
    test server on 127.0.0.1; returns the URL. Other ports stay refused."""

    def allow(url: str) -> str:
        parts = urlsplit(url)
        entry = f"{parts.hostname}:{parts.port}"
        settings.STUDIO_PRIVATE_NETWORKS = [*settings.STUDIO_PRIVATE_NETWORKS, entry]
        return url

    return allow
