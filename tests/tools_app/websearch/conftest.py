from __future__ import annotations

import pytest

from tests.tools_app.engine.conftest import LocalServer


@pytest.fixture
def local_server_url(private_network):
    """A SearXNG-speaking server on 127.0.0.1 (one result), on the allow-list."""
    server = LocalServer()
    server.route(
        "/search",
        body={
            "results": [
                {
                    "title": "Django",
                    "url": "https://www.djangoproject.com/",
                    "content": "The web framework",
                }
            ]
        },
    )
    yield private_network(server.url)
    server.stop()
