"""HTTP request tools against a real local server (its exact 127.0.0.1:port on the
operator's allow-list, through the `private_network` fixture)."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest

from tools_app.crypto import credentials_set
from tools_app.services.execute import tool_execute
from tools_app.types import ConfigError, get_type


@pytest.fixture
def server(local_server, private_network):
    private_network(local_server.url)
    return local_server


@pytest.fixture
def http_tool(make_tool, owner):
    def make(config, **fields):
        fields.setdefault("timeout_seconds", 10)
        return make_tool(kind="http", owner=owner, config=config, **fields)

    return make


def test_url_headers_and_json_body_are_filled_from_the_input(http_tool, owner, server):
    server.route("/cities/New%20York/report", body={"temp": 8})
    tool = http_tool(
        {
            "method": "POST",
            "url": f"{server.url}/cities/{{city}}/report?units={{units}}",
            "headers": {"X-Trace": "trace-{trace.id}"},
            "body": '{"query": {"days": "{days}", "label": "city {city}"}}',
        }
    )

    run = tool_execute(
        tool=tool,
        input={"city": "New York", "units": "si", "days": 3, "trace": {"id": "t1"}},
        user=owner,
    )

    assert run.status == "completed", run.error
    assert run.output["status"] == 200
    assert run.output["body"] == {"temp": 8}
    request = server.requests[-1]
    assert request["method"] == "POST"
    assert request["path"] == "/cities/New%20York/report?units=si"
    assert request["headers"]["x-trace"] == "trace-t1"
    assert json.loads(request["body"]) == {"query": {"days": 3, "label": "city New York"}}


def test_without_a_body_template_a_post_sends_the_input(http_tool, owner, server):
    server.route("/echo", body="ok")
    tool = http_tool({"method": "POST", "url": f"{server.url}/echo"})

    tool_execute(tool=tool, input={"a": [1, 2]}, user=owner)

    assert json.loads(server.requests[-1]["body"]) == {"a": [1, 2]}


@pytest.mark.parametrize(
    ("auth", "credentials", "header", "expected"),
    [
        ({"type": "bearer"}, {"token": "tok-123"}, "authorization", "Bearer tok-123"),
        ({"type": "api_key", "header_name": "X-Key"}, {"api_key": "key-9"}, "x-key", "key-9"),
        (
            {"type": "basic"},
            {"username": "ann", "password": "pw"},
            "authorization",
            "Basic " + base64.b64encode(b"ann:pw").decode(),
        ),
    ],
)
def test_credentials_are_sent_as_the_configured_auth(
    http_tool, owner, server, auth, credentials, header, expected
):
    server.route("/private", body={"ok": True})
    tool = http_tool({"url": f"{server.url}/private", "auth": auth})
    credentials_set(tool, credentials)

    run = tool_execute(tool=tool, input={}, user=owner)

    assert server.requests[-1]["headers"][header] == expected
    assert run.status == "completed"
    assert expected not in json.dumps([run.input, run.output, run.logs, run.error])


def test_an_api_that_echoes_the_basic_auth_it_got_leaves_no_trace_in_the_tool_run(
    http_tool, owner, server
):
    server.routes["/private"] = lambda request: (
        401,
        {"Content-Type": "text/plain"},
        f"refused: {request['headers']['authorization']} / {request['path']}".encode(),
    )
    tool = http_tool(
        {"url": f"{server.url}/private?user={{user}}", "auth": {"type": "basic"}},
        input_schema={"type": "object", "properties": {"user": {"type": "string"}}},
    )
    password = "pw/Echoed&Back 0001"
    credentials_set(tool, {"username": "ann", "password": password})
    pair = base64.b64encode(f"ann:{password}".encode()).decode()

    run = tool_execute(tool=tool, input={"user": password}, user=owner)

    assert server.requests[-1]["headers"]["authorization"] == f"Basic {pair}"
    assert run.status == "failed"
    # The header's base64 and the password percent-encoded into the URL, both taken out.
    assert (
        run.error == "HTTP 401 Unauthorized: refused: Basic [redacted] / /private?user=[redacted]"
    )
    stored = json.dumps([run.output, run.logs, run.error, run.errors])
    assert pair not in stored and quote(password, safe="") not in stored


def test_credentials_are_not_carried_across_a_redirect_to_another_origin(
    http_tool, owner, server, private_network
):
    from tests.tools_app.engine.conftest import LocalServer

    other = LocalServer()
    try:
        other.route("/landing", body="ok")
        # "localhost" passes the name rules only because its exact host:port is listed.
        landing = private_network(f"http://localhost:{other.port}/landing")
        server.route("/start", status=302, Location=landing)
        tool = http_tool({"url": f"{server.url}/start", "auth": {"type": "bearer"}})
        credentials_set(tool, {"token": "tok-stays-home"})

        run = tool_execute(tool=tool, input={}, user=owner)
    finally:
        other.stop()

    assert run.status == "completed"
    assert server.requests[-1]["headers"]["authorization"] == "Bearer tok-stays-home"
    assert "authorization" not in other.requests[-1]["headers"]


def test_a_non_2xx_answer_is_a_tool_error_with_status_and_body(http_tool, owner, server):
    server.route("/broken", status=503, body="upstream down")
    tool = http_tool({"url": f"{server.url}/broken"})

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert run.error == "HTTP 503 Service Unavailable: upstream down"
    assert run.output["status"] == 503 and run.output["body"] == "upstream down"


def test_an_http_tool_cannot_reach_internal_addresses(http_tool, owner, listener):
    tool = http_tool({"url": f"http://0x7f.1:{listener.port}/{{path}}"})

    run = tool_execute(tool=tool, input={"path": "admin"}, user=owner)

    assert run.status == "failed"
    assert "Loopback (127.0.0.0/8" in run.error
    assert listener.connections() == 0


def test_a_missing_template_value_is_a_clear_error(http_tool, owner):
    tool = http_tool({"url": "https://api.example.com/{city}"})

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert run.error == "Cannot build the request: The input has no value for {city}."


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"url": "ftp://example.com/"}, "config.url"),
        ({"url": "https://x.test/", "body": "{not json"}, "config.body"),
        ({"url": "https://x.test/", "method": "BREW"}, "config.method"),
    ],
)
def test_bad_http_config_is_rejected_per_field(config, field):
    with pytest.raises(ConfigError) as caught:
        get_type("http").validate_config(config)

    assert field in caught.value.errors
