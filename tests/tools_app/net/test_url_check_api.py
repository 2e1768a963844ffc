"""/api/url-check and /api/tools/<name>/network: the guard's verdict without a request."""

from __future__ import annotations

import pytest

from tools_app.models import ToolSource

pytestmark = pytest.mark.django_db
CHECK = "/api/url-check"


def test_a_refused_url_comes_back_with_the_reason(api):
    response = api.post(CHECK, {"url": "http://metadata.google.internal/x"}, format="json")

    assert response.status_code == 200
    assert response.json() == {
        "url": "http://metadata.google.internal/x",
        "status": "refused",
        "message": "Calls to this URL will be refused: metadata.google.internal is the Google "
        "Cloud metadata service.",
        "reason": "metadata.google.internal is the Google Cloud metadata service.",
        "private_network": None,
    }


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("http://10.0.0.5:8080/api", "Private-Use (10.0.0.0/8, RFC 1918)"),
        ("http://[::1]/", "Loopback Address (::1/128, RFC 4291)"),
        ("http://redis:6379/", "single-label name"),
        ("ftp://example.org/", "Only http and https"),
        ("http://user@example.org/", "user name or password"),
    ],
)
def test_each_refusal_says_why(api, url, fragment):
    data = api.post(CHECK, {"url": url}, format="json").json()

    assert data["status"] == "refused"
    assert fragment in data["reason"] and fragment in data["message"]


def test_an_operator_allowed_private_address_names_the_entry(api, settings):
    settings.STUDIO_PRIVATE_NETWORKS = ["10.1.0.0/16"]

    data = api.post(CHECK, {"url": "http://10.1.4.2/v1"}, format="json").json()

    assert data["status"] == "allowed"
    assert data["private_network"] == "10.1.0.0/16"
    assert data["message"] == "Private network access: allowed by the operator (10.1.0.0/16)."


def test_a_host_taken_from_the_input_cannot_be_judged_in_advance(api):
    data = api.post(CHECK, {"url": "https://{host}/items/{id}"}, format="json").json()

    assert data["status"] == "unknown"
    assert "the host comes from the tool's input" in data["message"]


def test_a_template_path_does_not_stop_the_check(api):
    data = api.post(CHECK, {"url": "http://10.0.0.1/cities/{city}"}, format="json").json()

    assert data["status"] == "refused"


@pytest.mark.parametrize("body", [{}, {"url": ""}, {"url": 12}, {"url": "x" * 2001}])
def test_a_missing_or_bad_url_is_a_400_on_the_field(api, body):
    response = api.post(CHECK, body, format="json")

    assert response.status_code == 400
    assert "url" in response.json()


def test_anonymous_callers_are_refused(anon_client):
    assert anon_client.post(CHECK, {"url": "http://10.0.0.1/"}, format="json").status_code in (
        401,
        403,
    )


# --- a tool's own URLs --------------------------------------------------------------------
def test_an_http_tool_on_an_allowed_private_network(api, owner, make_tool, settings):
    settings.STUDIO_PRIVATE_NETWORKS = ["10.1.0.0/16"]
    make_tool(name="inventory", kind="http", owner=owner, config={"url": "http://10.1.2.3/{sku}"})

    data = api.get("/api/tools/inventory/network").json()

    assert [(u["url"], u["private_network"]) for u in data["urls"]] == [
        ("http://10.1.2.3/{sku}", "10.1.0.0/16")
    ]


def test_an_openapi_tool_is_judged_by_its_base_url(api, owner, make_tool):
    make_tool(
        name="list_pets",
        kind="openapi",
        owner=owner,
        config={"method": "GET", "path": "/pets", "base_url": "http://pets.internal/api"},
    )

    [verdict] = api.get("/api/tools/list_pets/network").json()["urls"]

    assert verdict["status"] == "refused"
    assert "pets.internal ends in .internal" in verdict["reason"]


def test_mcp_and_a2a_tools_are_judged_by_their_sources_endpoint(api, owner, make_tool):
    mcp = ToolSource.objects.create(
        kind="mcp", name="calc", owner=owner, url="http://192.168.7.7/mcp"
    )
    a2a = ToolSource.objects.create(
        kind="a2a",
        name="agent",
        owner=owner,
        url="https://agent.example.org/.well-known/agent-card.json",
        document={"supportedInterfaces": [{"url": "http://169.254.169.254/a2a"}]},
    )
    make_tool(
        name="calc_add", kind="mcp", owner=owner, config={"source_id": mcp.pk, "remote_name": "add"}
    )
    make_tool(name="ask_agent", kind="a2a", owner=owner, config={"source_id": a2a.pk})

    [calc] = api.get("/api/tools/calc_add/network").json()["urls"]
    [agent] = api.get("/api/tools/ask_agent/network").json()["urls"]

    assert (calc["url"], calc["status"]) == ("http://192.168.7.7/mcp", "refused")
    assert (agent["url"], agent["status"]) == ("http://169.254.169.254/a2a", "refused")
    assert "Link Local" in agent["reason"]


def test_a_tool_pointing_at_another_users_source_shows_no_url(api, owner, outsider, make_tool):
    theirs = ToolSource.objects.create(
        kind="mcp", name="theirs", owner=outsider, url="http://10.9.9.9/mcp"
    )
    make_tool(
        name="borrowed",
        kind="mcp",
        owner=owner,
        config={"source_id": theirs.pk, "remote_name": "x"},
    )

    assert api.get("/api/tools/borrowed/network").json() == {"urls": []}


def test_tools_without_urls_have_an_empty_list(api, owner, make_tool):
    make_tool(name="plain", kind="python", owner=owner, config={"code": "return 1"})

    assert api.get("/api/tools/plain/network").json() == {"urls": []}


def test_another_users_tool_is_not_found(outsider_api, owner, make_tool):
    make_tool(name="inventory", kind="http", owner=owner, config={"url": "http://10.1.2.3/"})

    response = outsider_api.get("/api/tools/inventory/network")

    assert response.status_code == 404


def test_anonymous_callers_cannot_read_a_tools_network(anon_client, owner, make_tool):
    make_tool(name="inventory", kind="http", owner=owner, config={"url": "http://10.1.2.3/"})

    assert anon_client.get("/api/tools/inventory/network").status_code in (401, 403)
