"""MCP both ways: the studio as a client of an MCP server built with the `mcp` SDK (on
127.0.0.1), and the studio as an MCP server (Daphne) used by the SDK's client."""

from __future__ import annotations

import asyncio

import pytest
from rest_framework.authtoken.models import Token

from tests.conftest import free_port
from tests.tools_app.sources.servers import (
    MCP_TOKEN,
    http_post,
    mcp_http_app,
    mcp_sse_app,
    serve,
)
from tools_app.models import Tool, ToolSource
from tools_app.services.execute import tool_execute

pytestmark = pytest.mark.django_db


@pytest.fixture
def mcp_url(private_network):
    with serve(mcp_http_app()) as url:
        yield f"{private_network(url)}/mcp"


@pytest.fixture
def sse_url(private_network):
    with serve(mcp_sse_app()) as url:
        yield f"{private_network(url)}/sse"


def _register(api, url, **extra):
    response = api.post(
        "/api/sources/mcp/", {"url": url, "headers": {"X-Token": MCP_TOKEN}, **extra}, format="json"
    )
    assert response.status_code == 201, response.json()
    return response.json()


def _pick(api, source_id, *names):
    response = api.post(
        f"/api/sources/{source_id}/mcp/pick",
        {"picks": [{"remote_name": n} for n in names]},
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()["tools"]


def test_registering_a_server_lists_its_tools_with_schemas(api, mcp_url):
    data = _register(api, mcp_url, name="Calculator")
    remote = {t["name"]: t for t in data["remote_tools"]}
    assert set(remote) == {"add", "repeat", "explode", "dawdle"}
    assert remote["add"]["input_schema"]["required"] == ["a", "b"]
    assert remote["add"]["description"] == "Add two integers."
    assert data["has_credentials"] is True
    assert data["tools"] == []  # nothing exposed until picked


def test_the_headers_are_encrypted_and_never_returned(api, mcp_url):
    data = _register(api, mcp_url)
    source = ToolSource.objects.get(pk=data["id"])
    assert MCP_TOKEN not in source.credentials_encrypted
    for url in ("/api/sources/", f"/api/sources/{data['id']}/"):
        assert MCP_TOKEN not in api.get(url).content.decode()


def test_a_server_refusing_the_headers_is_reported(api, mcp_url):
    response = api.post("/api/sources/mcp/", {"url": mcp_url}, format="json")
    assert response.status_code == 400
    assert "401" in response.json()["detail"]


def test_picked_tools_run_and_return_structured_output(api, owner, mcp_url):
    data = _register(api, mcp_url)
    assert _pick(api, data["id"], "add", "repeat") == ["add", "repeat"]
    run = tool_execute(tool=Tool.objects.get(name="add"), input={"a": 2, "b": 40}, user=owner)
    assert run.status == "completed", run.error
    assert run.output == {"result": 42}
    run = tool_execute(
        tool=Tool.objects.get(name="repeat"), input={"word": "hi", "times": 3}, user=owner
    )
    assert run.output == {"result": ["hi", "hi", "hi"]}


def test_the_input_is_checked_against_the_servers_schema(api, owner, mcp_url):
    data = _register(api, mcp_url)
    _pick(api, data["id"], "add")
    run = tool_execute(tool=Tool.objects.get(name="add"), input={"a": "two"}, user=owner)
    assert run.status == "failed"
    assert {e["path"] for e in run.errors} == {"$", "$.a"}


def test_an_is_error_result_is_a_tool_error_with_the_servers_message(api, owner, mcp_url):
    data = _register(api, mcp_url)
    _pick(api, data["id"], "explode")
    run = tool_execute(tool=Tool.objects.get(name="explode"), input={"reason": "boom"}, user=owner)
    assert run.status == "failed"
    assert run.error == "Error executing tool explode: exploded: boom"


def test_a_server_that_is_down_is_a_tool_error(api, owner, mcp_url, private_network):
    data = _register(api, mcp_url)
    _pick(api, data["id"], "add")
    down = private_network(f"http://127.0.0.1:{free_port()}/mcp")
    ToolSource.objects.filter(pk=data["id"]).update(url=down)
    run = tool_execute(tool=Tool.objects.get(name="add"), input={"a": 1, "b": 1}, user=owner)
    assert run.status == "failed"
    assert "ConnectError" in run.error


def test_registering_a_server_that_is_down_answers_400(api, private_network):
    down = private_network(f"http://127.0.0.1:{free_port()}/mcp")
    response = api.post("/api/sources/mcp/", {"url": down}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "mcp_unreachable"


def test_a_slow_tool_past_the_timeout_is_a_tool_error(api, owner, mcp_url):
    data = _register(api, mcp_url)
    _pick(api, data["id"], "dawdle")
    Tool.objects.filter(name="dawdle").update(timeout_seconds=1)
    run = tool_execute(tool=Tool.objects.get(name="dawdle"), input={"seconds": 5}, user=owner)
    assert run.status == "failed"
    assert "1 s" in run.error or "timed out" in run.error.lower()


def test_the_sse_transport_works_for_older_servers(api, owner, sse_url):
    response = api.post("/api/sources/mcp/", {"url": sse_url, "transport": "sse"}, format="json")
    assert response.status_code == 201, response.json()
    _pick(api, response.json()["id"], "add")
    run = tool_execute(tool=Tool.objects.get(name="add"), input={"a": 1, "b": 2}, user=owner)
    assert run.output == {"result": 3}


def test_refresh_updates_exposed_tools_and_retires_dropped_ones(api, mcp_url):
    data = _register(api, mcp_url)
    _pick(api, data["id"], "add", "repeat")
    source = ToolSource.objects.get(pk=data["id"])
    # As if the server had listed a tool that it no longer has, and an older `add`.
    tools = source.document["tools"]
    tools.append(
        {
            "name": "gone",
            "description": "",
            "input_schema": {"type": "object"},
            "output_schema": None,
        }
    )
    source.save()
    Tool.objects.create(
        name="gone",
        kind="mcp",
        owner=source.owner,
        config={"source_id": source.id, "remote_name": "gone"},
    )
    Tool.objects.filter(name="add").update(description="old")
    response = api.post(f"/api/sources/{data['id']}/mcp/refresh")
    assert response.status_code == 200, response.json()
    changes = response.json()["changes"]
    assert changes["removed"] == ["gone"] and changes["retired"] == ["gone"]
    assert changes["updated"] == ["add"]
    assert Tool.objects.get(name="add").description == "Add two integers."
    assert Tool.objects.get(name="gone").gone_at is not None


def test_picking_an_unknown_or_already_exposed_tool_is_refused(api, mcp_url):
    data = _register(api, mcp_url)
    _pick(api, data["id"], "add")
    response = api.post(
        f"/api/sources/{data['id']}/mcp/pick",
        {"picks": [{"remote_name": "add", "name": "add_again"}, {"remote_name": "nope"}]},
        format="json",
    )
    assert response.status_code == 400
    messages = [e["message"] for e in response.json()["errors"]]
    assert "already exposed" in messages[0] and "no tool" in messages[1]


def test_another_users_server_cannot_be_refreshed_or_picked(api, outsider_api, mcp_url):
    data = _register(api, mcp_url)
    assert outsider_api.post(f"/api/sources/{data['id']}/mcp/refresh").status_code == 404
    response = outsider_api.post(
        f"/api/sources/{data['id']}/mcp/pick", {"picks": [{"remote_name": "add"}]}, format="json"
    )
    assert response.status_code == 404


# --- the studio as an MCP server ---------------------------------------------------------------
async def _studio_mcp(url: str, token: str, call: tuple[str, dict] | None = None):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Token {token}"}, timeout=60)
    async with Client(streamable_http_client(f"{url}/mcp/", http_client=http)) as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool(*call) if call else None
    await http.aclose()
    return tools, result


@pytest.mark.django_db(transaction=True)
def test_an_mcp_client_lists_and_calls_the_users_tools_on_the_studio(
    owner, outsider, studio_server
):
    from agents_core.registry import definitions_sync

    definitions_sync()
    Tool.objects.create(
        name="owners_private_tool",
        kind="mcp",
        owner=owner,
        config={"source_id": 0, "remote_name": "x"},
    )
    Tool.objects.create(
        name="outsiders_tool",
        kind="mcp",
        owner=outsider,
        config={"source_id": 0, "remote_name": "x"},
    )
    Tool.objects.create(
        name="takes_a_string",
        kind="mcp",
        owner=owner,
        input_schema={"type": "string"},
        config={"source_id": 0, "remote_name": "x"},
    )
    token = Token.objects.create(user=owner).key
    tools, result = asyncio.run(
        _studio_mcp(studio_server, token, ("unit_convert", {"value": 1, "from": "km", "to": "m"}))
    )
    names = {t.name for t in tools}
    assert {"unit_convert", "owners_private_tool"} <= names
    assert "outsiders_tool" not in names
    assert "takes_a_string" not in names  # MCP arguments are always an object
    assert result.is_error is False
    assert result.structured_content == {"value": 1000, "unit": "m"}
    # The call was recorded like any other tool run.
    assert Tool.objects.get(name="unit_convert").runs.filter(created_by=owner).count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_failing_studio_tool_is_an_is_error_result(owner, studio_server):
    token = Token.objects.create(user=owner).key
    Tool.objects.create(
        name="orphan", kind="mcp", owner=owner, config={"source_id": 999999, "remote_name": "x"}
    )
    _, result = asyncio.run(_studio_mcp(studio_server, token, ("orphan", {})))
    assert result.is_error is True
    assert "removed" in result.content[0].text
    _, result = asyncio.run(_studio_mcp(studio_server, token, ("not_a_tool", {})))
    assert result.is_error is True


@pytest.mark.django_db(transaction=True)
def test_the_studio_mcp_endpoint_refuses_missing_or_wrong_tokens(owner, studio_server):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    response = http_post(f"{studio_server}/mcp/", json=body, headers=headers)
    assert response.status_code == 401
    response = http_post(
        f"{studio_server}/mcp/", json=body, headers={**headers, "Authorization": "Token wrong"}
    )
    assert response.status_code == 401
    token = Token.objects.create(user=owner).key
    response = http_post(
        f"{studio_server}/mcp/",
        json=body,
        headers={**headers, "Authorization": f"Bearer {token}", "Host": "evil.example"},
    )
    assert response.status_code == 400


def test_a_tool_pointing_at_another_users_server_cannot_borrow_its_headers(api, outsider, mcp_url):
    data = _register(api, mcp_url)
    stolen = Tool.objects.create(
        name="borrowed_add",
        kind="mcp",
        owner=outsider,
        input_schema={"type": "object"},
        config={"source_id": data["id"], "remote_name": "add"},
    )
    run = tool_execute(tool=stolen, input={"a": 1, "b": 2}, user=outsider)
    assert run.status == "failed"
    assert "not yours" in run.error


def test_an_endpoint_that_does_not_speak_mcp_is_a_protocol_error(
    api, owner, mcp_url, pets_api, pets_api_reachable
):
    data = _register(api, mcp_url)
    _pick(api, data["id"], "add")
    ToolSource.objects.filter(pk=data["id"]).update(url=f"{pets_api}/api/not-mcp")
    run = tool_execute(tool=Tool.objects.get(name="add"), input={"a": 1, "b": 1}, user=owner)
    assert run.status == "failed"
    assert run.error.startswith(f"MCP server {pets_api}/api/not-mcp: "), run.error
    ToolSource.objects.filter(pk=data["id"]).update(url=f"{pets_api}/api/boom")
    run = tool_execute(tool=Tool.objects.get(name="add"), input={"a": 1, "b": 1}, user=owner)
    assert run.status == "failed"
    assert "HTTP 405 Method Not Allowed" in run.error


def test_registering_a_loopback_server_is_refused_by_the_address_guard(api):
    with serve(mcp_http_app()) as url:
        response = api.post("/api/sources/mcp/", {"url": f"{url}/mcp"}, format="json")
    assert response.status_code == 400
    assert "not allowed" in response.json()["detail"]
    assert "Loopback (127.0.0.0/8" in response.json()["detail"]
