from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.tools_app.sources.servers import pets_app, serve


@pytest.fixture
def pets_api() -> Iterator[str]:
    with serve(pets_app()) as url:
        yield url


@pytest.fixture
def pets_api_reachable(pets_api, private_network) -> str:
    """The Pets API with its exact 127.0.0.1:port on the operator's allow-list."""
    return private_network(pets_api)
