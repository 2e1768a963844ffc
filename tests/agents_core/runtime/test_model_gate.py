"""Fallbacks pass the gate of the agent's model (providers/gate.py): at save (a 400 with
the field's path), at run start, and right before litellm is called (the run ends with
`model_base_refused`, no request sent).

`ollama/...` models have no endpoint of their own: litellm sends them to OLLAMA_API_BASE,
here the `ollama_canary` server on 127.0.0.1, which must never see a connection.
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from agents_core.models import Agent, AgentTool, Run, StreamEvent
from agents_core.runtime.execution.active import wait_idle
from agents_core.services.threads import thread_create
from tests.agents_core.factories import AgentFactory
from tests.agents_core.runtime.conftest import run_to_end, types
from tests.agents_core.runtime.test_model_base_refused import finish_runs
from tests.model_servers import Reply

pytestmark = pytest.mark.django_db(transaction=True)

REFUSED = "ollama/ models call a server somebody runs"


def agent_body(**fields) -> dict:
    return {"slug": "falls", "name": "Falls", "model": "studio/scripted", **fields}


# --- save time --------------------------------------------------------------------------------
def test_saving_an_agent_with_a_refused_fallback_is_a_400_naming_it(api, ollama_canary):
    options = {"fallbacks": ["openai/gpt-4o-mini", "ollama/llama3"]}

    response = api.post("/api/agents/", agent_body(default_options=options), format="json")

    assert response.status_code == 400, response.json()
    (message,) = response.json()["default_options"]
    assert message.startswith(f"$.fallbacks[1]: {REFUSED}")
    assert not Agent.objects.filter(slug="falls").exists()
    assert ollama_canary.connections == []


def test_patching_in_a_refused_fallback_is_a_400_and_changes_nothing(api, owner, ollama_canary):
    AgentFactory(slug="falls", owner=owner, default_options={"fallbacks": ["openai/gpt-4o"]})

    response = api.patch(
        "/api/agents/falls/", {"default_options": {"fallbacks": ["ollama/llama3"]}}, format="json"
    )

    assert response.status_code == 400, response.json()
    assert response.json()["default_options"][0].startswith(f"$.fallbacks[0]: {REFUSED}")
    assert Agent.objects.get(slug="falls").default_options == {"fallbacks": ["openai/gpt-4o"]}


def test_a_fallback_on_a_server_gets_the_agents_listed_base(api, settings):
    settings.STUDIO_MODEL_API_BASES = ["http://127.0.0.1:11434"]
    body = agent_body(
        metadata={"api_base": "http://127.0.0.1:11434"},
        default_options={"fallbacks": ["ollama/llama3"]},
    )

    response = api.post("/api/agents/", body, format="json")

    assert response.status_code == 201, response.json()


def test_the_editor_cannot_give_an_agent_a_model_its_base_does_not_allow(owner, ollama_canary):
    from agents_core.editor.services import revisions
    from common.exceptions import ApplicationError

    agent = AgentFactory(slug="falls", owner=owner, model="studio/scripted")

    with pytest.raises(ApplicationError) as refused:
        revisions.override_save(
            lock_id=None, agent=agent, user=owner, version=1, data={"model": "ollama/llama3"}
        )

    assert REFUSED in refused.value.extra["model"][0]
    assert Agent.objects.get(slug="falls").model == "studio/scripted"


def test_run_options_with_a_refused_fallback_are_a_400(api, owner, ollama_canary):
    thread = thread_create(user=owner, agent=AgentFactory(slug="falls", owner=owner))

    response = api.post(
        f"/api/threads/{thread.pk}/runs/",
        {"message": "hello", "options": {"fallbacks": ["ollama/llama3"]}},
        format="json",
    )
    finish_runs()

    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "model_base_refused"
    assert response.json()["errors"][0]["path"] == "$.options.fallbacks[0]"
    assert not Run.objects.exists()
    assert ollama_canary.connections == []


def test_an_agent_row_with_a_refused_fallback_cannot_start_a_run(api, owner, ollama_canary):
    agent = AgentFactory(slug="falls", owner=owner)
    # Written directly, as a row saved before the rule would be.
    Agent.objects.filter(pk=agent.pk).update(default_options={"fallbacks": ["ollama/llama3"]})
    thread = thread_create(user=owner, agent=agent)

    response = api.post(f"/api/threads/{thread.pk}/runs/", {"message": "hello"}, format="json")
    finish_runs()

    assert response.status_code == 400, response.json()
    assert response.json()["errors"][0]["path"] == "agent.default_options.fallbacks[0]"
    assert ollama_canary.connections == []


# --- call time --------------------------------------------------------------------------------
async def test_a_refused_fallback_of_a_failing_model_ends_the_run_and_calls_nothing(
    owner, synced, openai_server, ollama_canary
):
    """The agent changes while its run waits for the user: its model is now one that
    answers 429 (the owner's key at a local OpenAI-protocol server), which moves a run to
    its next fallback, and that fallback is an ollama/ model without a base. The resumed
    run is refused before litellm is called: neither server sees a request."""
    from agents_core.services.runs import run_resume
    from providers.services import credential_create
    from tools_app.models import Tool

    openai_server.script = [Reply(status=429)]

    def make() -> object:
        credential_create(
            owner=owner, provider="openai", api_key="sk-good", api_base=openai_server.url
        )
        agent = AgentFactory(slug="asker", owner=owner)  # the offline model asks first
        AgentTool.objects.create(
            agent=agent, tool=Tool.objects.get(name="ask_user"), key="ask_user"
        )
        return thread_create(user=owner, agent=agent)

    thread = await database_sync_to_async(make)()
    run, events = await run_to_end(thread, "ask me which city", owner)
    assert run.status == "suspended", types(events)
    call_id = next(e for e in events if e["type"] == "tool-call-suspended")["toolCallId"]
    # Written directly: no save checks.
    await database_sync_to_async(Agent.objects.filter(slug="asker").update)(
        model="openai/gpt-4o-mini", default_options={"fallbacks": ["ollama/llama3"]}
    )

    await database_sync_to_async(run_resume)(
        run=run, tool_call_id=call_id, payload={"answer": "Paris"}, user=owner
    )
    await wait_idle(60)

    assert ollama_canary.connections == []
    await database_sync_to_async(run.refresh_from_db)()
    assert run.status == "failed"
    assert "agent.default_options.fallbacks[0]" in run.error, run.error
    codes = await database_sync_to_async(
        lambda: [e.payload.get("code") for e in StreamEvent.objects.filter(type="run-error")]
    )()
    assert codes == ["model_base_refused"]
