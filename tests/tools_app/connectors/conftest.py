from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from tests.tools_app.sources.servers import serve
from tools_app.models import Tool
from tools_app.services.execute import tool_execute


@pytest.fixture
def connect(api, private_network) -> Iterator[Callable[..., tuple[str, Any]]]:
    """`connect(slug, app, **body)`: serve the stand-in API `app` on 127.0.0.1 (on the
    operator's allow-list), connect the connector to it through the REST API as the
    owner, and return (its URL, the app, whose state.requests records what it got)."""
    with ExitStack() as stack:

        def run(slug: str, app: Any, **body: Any) -> tuple[str, Any]:
            url = private_network(stack.enter_context(serve(app)))
            response = api.post(
                f"/api/connectors/{slug}/add", {"instance_url": url, **body}, format="json"
            )
            assert response.status_code == 201, response.json()
            return url, app

        yield run


@pytest.fixture
def run_tool(owner) -> Callable[..., Any]:
    """`run_tool(name, input)`: the tool's recorded run, as the console and REST make it."""

    def run(name: str, payload: dict[str, Any]) -> Any:
        return tool_execute(tool=Tool.objects.get(name=name), input=payload, user=owner)

    return run
