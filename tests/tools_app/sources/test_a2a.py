"""A2A both ways: an external agent built with a2a-sdk used as a studio tool, and a
studio agent served over A2A (Daphne) reached by the SDK's client."""

from __future__ import annotations

import asyncio

import pytest
from rest_framework.authtoken.models import Token

from agents_core.models import Agent
from tests.conftest import free_port
from tests.tools_app.sources.servers import A2A_TOKEN, http_get, http_post, serve_a2a_agent
from tools_app.models import Tool, ToolSource
from tools_app.services.execute import tool_execute
from tools_app.sources.a2a import a2a_send

pytestmark = pytest.mark.django_db
AUTH = {"Authorization": f"Bearer {A2A_TOKEN}"}


@pytest.fixture
def agent_base(private_network):
    with serve_a2a_agent() as base:
        yield private_network(base)


def _add(api, base, **extra):
    response = api.post(
        "/api/sources/a2a/",
        {"card_url": f"{base}/.well-known/agent-card.json", "headers": AUTH, **extra},
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()


def test_adding_an_agent_by_its_card_makes_a_tool(api, owner, agent_base):
    data = _add(api, agent_base)
    tool = Tool.objects.get(name=data["tool"])
    assert (tool.name, tool.kind, tool.owner) == ("echo_agent", "a2a", owner)
    assert tool.description.startswith("Repeats what it is told.")
    assert tool.input_schema["required"] == ["message"]
    assert data["source"]["has_credentials"] is True


def test_the_tool_follows_the_task_until_it_is_completed(api, owner, agent_base):
    _add(api, agent_base, name="echo")
    run = tool_execute(tool=Tool.objects.get(name="echo"), input={"message": "hello"}, user=owner)
    assert run.status == "completed", run.error
    assert run.output["reply"] == "You said: hello"
    assert run.output["state"] == "completed"
    assert "working" in run.output["states"]


def test_a_failed_task_is_a_tool_error_with_the_agents_message(api, owner, agent_base):
    _add(api, agent_base, name="echo")
    run = tool_execute(
        tool=Tool.objects.get(name="echo"), input={"message": "please fail"}, user=owner
    )
    assert run.status == "failed"
    assert run.error == "The agent's task ended failed: I cannot do that"


def test_a_task_past_the_timeout_is_a_tool_error(api, owner, agent_base):
    _add(api, agent_base, name="echo", timeout_seconds=1)
    run = tool_execute(
        tool=Tool.objects.get(name="echo"), input={"message": "slow please"}, user=owner
    )
    assert run.status == "failed"
    assert "1 s" in run.error


def test_an_agent_that_is_down_is_a_tool_error(api, owner, agent_base, private_network):
    _add(api, agent_base, name="echo")
    source = ToolSource.objects.get(kind="a2a")
    card = source.document
    card["supportedInterfaces"][0]["url"] = private_network(f"http://127.0.0.1:{free_port()}/")
    source.save()
    run = tool_execute(tool=Tool.objects.get(name="echo"), input={"message": "hi"}, user=owner)
    assert run.status == "failed"
    assert "Echo Agent" in run.error


def test_a_card_url_that_is_not_a_card_is_refused(api, agent_base, pets_api, pets_api_reachable):
    response = api.post(
        "/api/sources/a2a/", {"card_url": f"{pets_api}/openapi.json"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_card"


def test_the_card_fetch_obeys_the_address_guard(api):
    response = api.post(
        "/api/sources/a2a/",
        {"card_url": "http://127.0.0.1:9/.well-known/agent-card.json"},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["code"] == "blocked_url"


def test_the_agents_headers_are_never_returned(api, agent_base):
    data = _add(api, agent_base)
    assert A2A_TOKEN not in str(data)
    assert A2A_TOKEN not in api.get("/api/sources/").content.decode()
    assert A2A_TOKEN not in api.get(f"/api/tools/{data['tool']}/").content.decode()


# --- a studio agent over A2A --------------------------------------------------------------
def _studio_agent(owner) -> Agent:
    return Agent.objects.create(
        slug="helper", name="Helper", description="Helps.", model="studio/scripted", owner=owner
    )


@pytest.mark.django_db(transaction=True)
def test_a_studio_agent_answers_an_a2a_client(owner, studio_server, private_network):
    private_network(studio_server)
    _studio_agent(owner)
    token = Token.objects.create(user=owner).key
    headers = {"Authorization": f"Token {token}"}
    card = http_get(
        f"{studio_server}/a2a/helper/.well-known/agent-card.json", headers=headers
    ).json()
    assert card["name"] == "Helper"
    assert card["supportedInterfaces"][0]["url"] == f"{studio_server}/a2a/helper/"
    result = asyncio.run(a2a_send(card_data=card, headers=headers, text="hello there", timeout=60))
    assert result["state"] == "completed"
    assert result["reply"].strip()


@pytest.mark.django_db(transaction=True)
def test_the_studio_adds_its_own_agent_as_an_a2a_tool(api, owner, studio_server, private_network):
    private_network(studio_server)
    _studio_agent(owner)
    token = Token.objects.create(user=owner).key
    response = api.post(
        "/api/sources/a2a/",
        {
            "card_url": f"{studio_server}/a2a/helper/.well-known/agent-card.json",
            "headers": {"Authorization": f"Bearer {token}"},
            "name": "ask_helper",
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    run = tool_execute(
        tool=Tool.objects.get(name="ask_helper"), input={"message": "hi"}, user=owner
    )
    assert run.status == "completed", run.error
    assert run.output["reply"].strip()


@pytest.mark.django_db(transaction=True)
def test_the_a2a_endpoint_needs_a_token_and_an_agent_the_user_sees(owner, outsider, studio_server):
    _studio_agent(owner)
    url = f"{studio_server}/a2a/helper/.well-known/agent-card.json"
    assert http_get(url).status_code == 401
    outsider_token = Token.objects.create(user=outsider).key
    response = http_get(url, headers={"Authorization": f"Token {outsider_token}"})
    assert response.status_code == 404
    response = http_post(
        f"{studio_server}/a2a/helper/",
        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}},
        headers={"Authorization": f"Token {outsider_token}"},
    )
    assert response.status_code == 404


def test_a_tool_pointing_at_another_users_agent_cannot_borrow_its_headers(
    api, outsider, agent_base
):
    data = _add(api, agent_base)
    stolen = Tool.objects.create(
        name="borrowed_echo",
        kind="a2a",
        owner=outsider,
        input_schema={"type": "object"},
        config={"source_id": data["source"]["id"]},
    )
    run = tool_execute(tool=stolen, input={"message": "hi"}, user=outsider)
    assert run.status == "failed"
    assert "not yours" in run.error


def test_an_agent_asking_for_input_returns_its_question(api, owner, agent_base):
    _add(api, agent_base, name="echo")
    run = tool_execute(
        tool=Tool.objects.get(name="echo"), input={"message": "which file?"}, user=owner
    )
    assert run.status == "completed", run.error
    assert (run.output["state"], run.output["reply"]) == (
        "input-required",
        "Which one do you mean?",
    )


def test_an_agent_answering_with_a_message_at_once_is_a_reply(api, owner, agent_base):
    _add(api, agent_base, name="echo")
    run = tool_execute(
        tool=Tool.objects.get(name="echo"), input={"message": "direct hi"}, user=owner
    )
    assert run.status == "completed", run.error
    assert run.output["reply"] == "Directly: direct hi"
    assert run.output["task_id"] is None
