"""A connector tool bound to an agent: the offline model calls it in a chat run, the
call reaches the local stand-in with the connector's key and fixed engine ID, and the
result is in the thread's events."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from tests.agents_core.factories import AgentFactory, AgentToolFactory
from tests.agents_core.runtime.conftest import run_to_end
from tests.tools_app.connectors.servers import CX, GOOGLE_KEY, google_search_app
from tools_app.models import Tool

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_agent_calls_a_connector_tool_in_a_chat(connect, owner, settings):
    from agents_core.services.threads import thread_create

    settings.STUDIO_OFFLINE_DELAY = 0.0
    _, app = connect(
        "google_search",
        google_search_app(),
        auth="api_key",
        credentials={"api_key": GOOGLE_KEY},
        settings={"cx": CX},
    )
    agent = AgentFactory(slug="search-helper", owner=owner)
    AgentToolFactory(agent=agent, tool=Tool.objects.get(name="google_search"), key="web")
    thread = thread_create(user=owner, agent=agent)

    run, events = async_to_sync(run_to_end)(
        thread, 'call web with {"query": {"q": "django channels", "num": 3}}', owner
    )
    results = [e for e in events if e["type"] == "tool-result"]
    assert run.status == "completed", events[-3:]
    assert len(results) == 1
    assert [i["title"] for i in results[0]["output"]["body"]["items"]] == [
        "Result 1",
        "Result 2",
        "Result 3",
    ]
    sent = app.state.requests[-1]
    assert sent["query"] == {"q": "django channels", "num": "3", "cx": CX, "key": GOOGLE_KEY}
