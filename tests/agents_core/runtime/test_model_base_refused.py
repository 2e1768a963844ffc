"""No run sends the server's model key to a base URL the operator did not list.

The server's OPENAI_API_KEY is a canary value and a canary model server listens on
127.0.0.1; a signed-in user with no permissions starts runs on a shared code agent whose
model is `openai/...`, pointing every path at the canary: run options over REST and over
the websocket, the agent's saved configuration, a sub-agent, a resumed run, the offline
provider's options. The canary must never see a connection. When the operator lists it,
it receives the call (and the key): the refusals are what kept it away.
"""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async

from agents_core.models import Agent, AgentTool, Message, Run, StreamEvent, SubAgent
from agents_core.runtime.execution.active import wait_idle
from agents_core.services.threads import thread_create
from common.exceptions import ApplicationError
from tests.agents_core.canary import CANARY_KEY, canary_server
from tests.agents_core.factories import AgentFactory
from tests.agents_core.runtime.conftest import run_to_end, types
from tests.agents_core.runtime.test_websocket import communicator

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def canary(settings, monkeypatch):
    """The canary server, not listed by the operator; the server's key is the canary key."""
    monkeypatch.setenv("OPENAI_API_KEY", CANARY_KEY)
    settings.STUDIO_MODEL_API_BASES = ["http://127.0.0.1:11434"]
    with canary_server() as server:
        yield server


@pytest.fixture
def shared(synced):
    """A code agent every signed-in user may chat with, on a hosted provider."""
    return AgentFactory(slug="shared-openai", model="openai/gpt-4o-mini", code=True)


def finish_runs() -> None:
    async def wait() -> None:
        await wait_idle(60)

    async_to_sync(wait)()


def refused_events() -> list[dict]:
    return [
        event.payload
        for event in StreamEvent.objects.filter(type="run-error")
        if event.payload.get("code") == "model_base_refused"
    ]


# --- at run start -----------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["api_base", "apiBase", "baseURL"])
def test_run_options_naming_an_unlisted_base_are_a_400_over_rest(
    outsider_api, outsider, shared, canary, key
):
    thread = thread_create(user=outsider, agent=shared)

    response = outsider_api.post(
        f"/api/threads/{thread.pk}/runs/",
        {"message": "hello", "options": {"modelSettings": {key: canary.base}}},
        format="json",
    )
    finish_runs()

    assert canary.connections == []  # the key never left the server
    assert response.status_code == 400, response.json()
    body = response.json()
    assert body["code"] == "model_base_refused"
    assert body["errors"][0]["path"] == f"$.options.modelSettings.{key}"
    assert "not a model server this studio may call" in body["detail"]
    assert not Run.objects.exists() and not Message.objects.exists()


def test_the_users_own_key_does_not_open_an_unlisted_base(outsider_api, outsider, shared, canary):
    thread = thread_create(user=outsider, agent=shared)
    settings = {"api_base": canary.base, "api_key": "sk-the-users-own"}

    response = outsider_api.post(
        f"/api/threads/{thread.pk}/runs/",
        {"message": "hello", "options": {"modelSettings": settings}},
        format="json",
    )
    finish_runs()

    assert canary.connections == []
    assert response.status_code == 400


async def test_run_options_naming_an_unlisted_base_are_refused_over_the_websocket(
    outsider, shared, canary
):
    thread = await database_sync_to_async(thread_create)(user=outsider, agent=shared)
    comm = communicator(thread, outsider)
    connected, _ = await comm.connect()
    assert connected

    await comm.send_json_to(
        {"type": "chat", "text": "hello", "options": {"modelSettings": {"apiBase": canary.base}}}
    )
    error = await comm.receive_json_from(timeout=10)
    # The socket stays open: the next request gets its own answer.
    await comm.send_json_to({"type": "abort"})
    after = await comm.receive_json_from(timeout=10)
    await comm.disconnect()
    await wait_idle(60)

    assert canary.connections == []
    assert error["type"] == "error" and error["request"] == "chat"
    assert error["code"] == "model_base_refused"
    assert error["errors"][0]["path"] == "$.options.modelSettings.apiBase"
    assert after["type"] == "error" and after["code"] == "not_running"
    assert not await database_sync_to_async(Run.objects.exists)()


def test_an_agent_saved_with_a_base_no_longer_listed_cannot_start_a_run(api, owner, synced, canary):
    # Saved while the operator listed the canary (rows written directly, as then).
    agent = AgentFactory(slug="old-local", owner=owner, model="openai/gpt-4o-mini")
    Agent.objects.filter(pk=agent.pk).update(metadata={"api_base": canary.base})
    thread = thread_create(user=owner, agent=agent)

    response = api.post(f"/api/threads/{thread.pk}/runs/", {"message": "hello"}, format="json")
    finish_runs()

    assert canary.connections == []
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "agent.metadata.api_base"
    assert not Run.objects.exists()


# --- at run time ------------------------------------------------------------------------------
async def test_a_sub_agent_with_an_unlisted_base_ends_with_run_error_and_calls_nothing(
    owner, synced, canary
):
    def make() -> object:
        parent = AgentFactory(slug="boss", owner=owner)  # the offline model
        child = AgentFactory(
            slug="probe",
            owner=owner,
            model="openai/gpt-4o-mini",
            default_options={"modelSettings": {"api_base": canary.base}},
        )
        SubAgent.objects.create(parent=parent, child=child, key="probe")
        return thread_create(user=owner, agent=parent)

    thread = await database_sync_to_async(make)()

    run, events = await run_to_end(thread, "use agent-probe to look it up", owner)

    assert canary.connections == []
    refused = await database_sync_to_async(refused_events)()
    assert len(refused) == 1
    assert refused[0]["error"].startswith(
        "The model call was not made: agent.default_options.modelSettings.api_base: "
        f"{canary.origin} is not a model server this studio may call"
    )
    assert "tool-error" in types(events) or "tool-result" in types(events)
    assert run.status == "completed"


async def test_a_resumed_run_whose_agent_now_names_an_unlisted_base_ends_with_run_error(
    owner, synced, canary
):
    from agents_core.services.runs import run_resume
    from tools_app.models import Tool

    def make() -> object:
        agent = AgentFactory(slug="asker", owner=owner)  # the offline model asks first
        AgentTool.objects.create(
            agent=agent, tool=Tool.objects.get(name="ask_user"), key="ask_user"
        )
        return thread_create(user=owner, agent=agent)

    thread = await database_sync_to_async(make)()
    run, events = await run_to_end(thread, "ask me which city", owner)
    assert run.status == "suspended", types(events)
    call_id = next(e for e in events if e["type"] == "tool-call-suspended")["toolCallId"]
    # Meanwhile the agent is pointed at the canary (written directly: no save checks).
    await database_sync_to_async(Agent.objects.filter(slug="asker").update)(
        model="openai/gpt-4o-mini", metadata={"apiBase": canary.base}
    )

    await database_sync_to_async(run_resume)(
        run=run, tool_call_id=call_id, payload={"answer": "Paris"}, user=owner
    )
    await wait_idle(60)

    assert canary.connections == []
    await database_sync_to_async(run.refresh_from_db)()
    refused = await database_sync_to_async(refused_events)()
    assert run.status == "failed" and run.error.startswith("The model call was not made")
    assert [event["runId"] for event in refused] == [str(run.pk)]


async def test_the_offline_providers_options_cannot_redirect_the_call(make_thread, owner, canary):
    thread = await database_sync_to_async(make_thread)("weather-assistant")
    escape = {
        "model": "openai/gpt-4o-mini",
        "custom_llm_provider": "openai",
        "api_base": canary.base,
        "api_key": CANARY_KEY,
    }

    # Options the offline provider does not take are refused before the run starts, with
    # the path of each one.
    with pytest.raises(ApplicationError) as refused:
        await run_to_end(
            thread, "hello", owner, {"providerOptions": {"studio": {**escape, "delay": 0}}}
        )

    assert refused.value.code == "invalid_options"
    paths = {error["path"] for error in refused.value.extra["errors"]}
    assert paths == {f"$.options.providerOptions.studio.{key}" for key in escape}
    assert canary.connections == []


# --- listed -----------------------------------------------------------------------------------
def test_a_listed_base_receives_the_call(outsider_api, outsider, shared, canary, settings):
    settings.STUDIO_MODEL_API_BASES = [canary.origin]
    thread = thread_create(user=outsider, agent=shared)

    response = outsider_api.post(
        f"/api/threads/{thread.pk}/runs/",
        {"message": "hello", "options": {"modelSettings": {"api_base": canary.base}}},
        format="json",
    )
    finish_runs()

    assert response.status_code == 201, response.json()
    run = Run.objects.get()
    assert run.status == "completed", run.error
    assert [r["path"] for r in canary.requests] == ["/v1/chat/completions"]
    assert canary.requests[0]["authorization"] == f"Bearer {CANARY_KEY}"
    assert canary.requests[0]["body"]["model"] == "gpt-4o-mini"


# --- messages that start runs (signals) -----------------------------------------------------
def test_a_message_that_would_start_a_run_with_an_unlisted_base_is_a_400(
    outsider_api, outsider, shared, canary
):
    from agents_core.models import RunStatus, Signal

    thread = thread_create(user=outsider, agent=shared)
    options = {"modelSettings": {"api_base": canary.base}}

    woken = outsider_api.post(
        f"/api/threads/{thread.pk}/send-message",
        {"message": "hello", "streamOptions": options},
        format="json",
    )
    # Queued behind a running run, it would start once that run ends: refused now, not then.
    Run.objects.create(thread=thread, agent=shared, status=RunStatus.RUNNING, started_by=outsider)
    queued = outsider_api.post(
        f"/api/threads/{thread.pk}/queue-message",
        {"message": "later", "streamOptions": options},
        format="json",
    )
    finish_runs()

    assert canary.connections == []
    assert woken.status_code == queued.status_code == 400, (woken.json(), queued.json())
    assert queued.json()["code"] == "model_base_refused"
    assert queued.json()["errors"][0]["path"] == "$.options.modelSettings.api_base"
    assert not Signal.objects.exists()
    assert Run.objects.count() == 1
