"""Secrets never leave the place they are used: a provider that quotes the key it was sent
in its 401, and an API that echoes the credential a tool sent it, leave no trace of either
in the run's error, its stored and streamed events, its spans, the logs, or what the
thread's and the agent's API pages export (tools_app.redaction)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from rest_framework.test import APIClient

from tests.agents_core.runtime.conftest import events_of, settle, start
from tests.agents_core.runtime.test_websocket import communicator, receive_until
from tests.model_servers import Reply

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "sk-proj-Secret0Key1That2Must3Not4Leak"
TOKEN = "tok-Echoed0Bearer1Token2Of3The4Tool"


def _agent_thread(owner: Any, model: str) -> Any:
    from agents_core.models import Agent
    from agents_core.services.threads import thread_create

    agent = Agent.objects.create(slug="keyed", name="Keyed", model=model, owner=owner)
    return thread_create(user=owner, agent=agent)


def _stored_text(run: Any, owner: Any) -> str:
    """Everything stored or exported of the run, as one text."""
    from agents_core.models import Run, ToolCall
    from traces.models import Span

    run = Run.objects.get(pk=run.pk)
    client = APIClient()
    client.force_authenticate(owner)
    pages = [
        f"/api/threads/{run.thread_id}/events/",
        f"/api/threads/{run.thread_id}/messages/",
        f"/api/runs/{run.pk}/",
        f"/api/agents/{run.agent.slug}/export",
        f"/api/runs/{run.pk}/trace",
    ]
    texts = [run.error, json.dumps(events_of(run.thread))]
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, (page, response.content[:300])
        texts.append(response.content.decode())
    for span in Span.objects.filter(run=run):
        texts += [span.error, json.dumps(span.attributes)]
    for call in ToolCall.objects.filter(run=run):
        texts += [call.error, json.dumps([call.output, call.model_output])]
    return "\n".join(texts)


async def _run_watched(thread: Any, owner: Any) -> tuple[Any, list[dict]]:
    """Start a run while a socket watches the thread; (run, what the socket received)."""
    comm = communicator(thread, owner)
    connected, _ = await comm.connect()
    assert connected
    run = await start(thread, "hello", owner)
    received = await receive_until(
        comm,
        lambda e: e.get("type") in ("run-error", "run-finish") and e.get("runId") == str(run.pk),
    )
    await comm.disconnect()
    await settle()
    await database_sync_to_async(run.refresh_from_db)()
    return run, received


async def test_a_key_the_provider_quotes_in_its_401_is_nowhere(
    synced, owner, openai_server, caplog
):
    from providers.services import credential_create

    caplog.set_level(logging.DEBUG)
    openai_server.quotes_key = True  # and answers 401: its own key is another
    await database_sync_to_async(credential_create)(
        owner=owner, provider="openai", api_key=KEY, api_base=openai_server.url
    )
    thread = await database_sync_to_async(_agent_thread)(owner, "openai/gpt-4o-mini")

    run, streamed = await _run_watched(thread, owner)

    assert openai_server.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    assert run.status == "failed"
    assert "Incorrect API key provided: [redacted]" in run.error
    assert streamed[-1]["type"] == "run-error" and "[redacted]" in streamed[-1]["error"]
    stored = await database_sync_to_async(_stored_text)(run, owner)
    assert "[redacted]" in stored
    assert KEY not in stored
    assert KEY not in json.dumps(streamed)
    assert KEY not in caplog.text


def _http_tool_agent(owner: Any, api_url: str, model: str) -> Any:
    from agents_core.models import AgentTool
    from tools_app.crypto import credentials_set
    from tools_app.models import Tool

    tool = Tool.objects.create(
        name="call_api",
        kind="http",
        owner=owner,
        input_schema={"type": "object"},
        config={"url": f"{api_url}/items", "auth": {"type": "bearer"}},
        timeout_seconds=10,
    )
    credentials_set(tool, {"token": TOKEN})
    thread = _agent_thread(owner, model)
    AgentTool.objects.create(agent=thread.agent, tool=tool, key="call_api")
    return thread


def test_a_credential_an_api_echoes_to_a_tool_is_nowhere(
    synced, owner, openai_server, settings, caplog
):
    from providers.services import credential_create
    from tests.tools_app.engine.conftest import LocalServer

    caplog.set_level(logging.DEBUG)
    api = LocalServer()
    settings.STUDIO_PRIVATE_NETWORKS = [*settings.STUDIO_PRIVATE_NETWORKS, f"127.0.0.1:{api.port}"]
    api.routes["/items"] = lambda request: (
        401,
        {"Content-Type": "text/plain"},
        f"token {request['headers']['authorization']} is not valid here".encode(),
    )
    openai_server.key = KEY
    openai_server.script = [Reply(text="Calling", tool=("call_api", "{}")), Reply(text="Done")]
    credential_create(owner=owner, provider="openai", api_key=KEY, api_base=openai_server.url)
    thread = _http_tool_agent(owner, api.url, "openai/gpt-4o-mini")
    try:
        # Sync, as a tool's thread hops need (asgiref's executor of the test's thread).
        run, streamed = async_to_sync(_run_watched)(thread, owner)
    finally:
        api.stop()

    assert api.requests[0]["headers"]["authorization"] == f"Bearer {TOKEN}"
    assert run.status == "completed", run.error
    errors = [e for e in streamed if e["type"] == "tool-error"]
    assert errors and "token Bearer [redacted] is not valid here" in errors[0]["error"]
    second_prompt = json.dumps(openai_server.requests[1].body["messages"])
    assert "[redacted]" in second_prompt and TOKEN not in second_prompt
    stored = _stored_text(run, owner)
    assert TOKEN not in stored and TOKEN not in json.dumps(streamed)
    assert TOKEN not in caplog.text
