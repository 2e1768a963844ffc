from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.tools_app.sources.servers import pets_app, serve


@pytest.fixture
def loopback(settings) -> None:
    """Let the address guard reach the test servers on 127.0.0.1 (test-only setting)."""
    settings.STUDIO_ALLOW_LOOPBACK_FETCH = True


@pytest.fixture
def pets_api() -> Iterator[str]:
    with serve(pets_app()) as url:
        yield url
