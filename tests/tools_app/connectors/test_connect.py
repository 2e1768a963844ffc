"""Connecting: what the user gives is checked (every problem at its JSON path, nothing
stored unless all is well), the tools are the user's, secrets are encrypted and never
echoed, and the address guard applies."""

from __future__ import annotations

import pytest

from tests.tools_app.connectors.servers import API_TOKEN, EMAIL, jira_app
from tests.tools_app.sources.servers import serve
from tools_app.models import Tool, ToolSource

pytestmark = pytest.mark.django_db

ADD = "/api/connectors/jira/add"
CREDENTIALS = {"username": EMAIL, "password": API_TOKEN}


@pytest.fixture
def jira_url(private_network):
    """The Jira stand-in on 127.0.0.1, on the operator's allow-list."""
    with serve(jira_app()) as url:
        yield private_network(url)


def _connect_search(api, url: str) -> dict:
    body = {
        "instance_url": url,
        "credentials": CREDENTIALS,
        "picks": [{"key": "GET /rest/api/3/search/jql"}],
    }
    response = api.post(ADD, body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def _errors(response) -> dict[str, str]:
    assert response.status_code == 400, response.json()
    return {e["path"]: e["message"] for e in response.json()["errors"]}


def _nothing_stored() -> None:
    assert not ToolSource.objects.exists()
    assert not Tool.objects.filter(kind="openapi").exists()


def test_a_missing_instance_url_and_credentials_are_named(api):
    errors = _errors(api.post(ADD, {"auth": "api_token"}, format="json"))
    assert errors["$.instance_url"] == "Site URL is required"
    assert errors["$.credentials.username"] == "Atlassian account email is required"
    assert errors["$.credentials.password"] == "API token is required"
    _nothing_stored()


@pytest.mark.parametrize(
    "url",
    [
        "not a url",
        "ftp://host/",
        "https://",
        "https://h/?q=1",
        "https://u:p@h",
        "http://93.184.215.14",  # plain HTTP outside an allowed private network
    ],
)
def test_a_bad_instance_url_is_400(api, url):
    body = {"instance_url": url, "credentials": CREDENTIALS}
    assert "$.instance_url" in _errors(api.post(ADD, body, format="json"))
    _nothing_stored()


def test_the_address_guard_refuses_an_internal_instance(api):
    body = {"instance_url": "http://127.0.0.1:9/", "credentials": CREDENTIALS}
    message = _errors(api.post(ADD, body, format="json"))["$.instance_url"]
    assert "refused" in message
    body["instance_url"] = "http://169.254.169.254"
    assert "$.instance_url" in _errors(api.post(ADD, body, format="json"))
    _nothing_stored()


def test_an_unavailable_or_unknown_preset_and_bad_shapes_are_named(api):
    body = {"instance_url": "https://acme.atlassian.net", "auth": "nope", "credentials": "x"}
    errors = _errors(api.post(ADD, body, format="json"))
    # The usable presets (OAuth ones too once the OpenAPI tool type executes them).
    assert errors["$.auth"].startswith("choose one of: api_token")
    assert errors["$.credentials"] == "must be an object of strings"
    bad_picks = {
        **body,
        "auth": "api_token",
        "credentials": CREDENTIALS,
        "picks": [{"key": "GET /x"}],
    }
    assert _errors(api.post(ADD, bad_picks, format="json")) == {
        "$.picks[0].key": "no operation 'GET /x'"
    }
    assert "$" in _errors(api.post(ADD, ["x"], format="json"))
    extra = {**body, "auth": "api_token", "credentials": {**CREDENTIALS, "token": "t"}}
    extra["settings"] = {"cx": "1"}
    assert _errors(api.post(ADD, extra, format="json")) == {
        "$.credentials.token": "sign-in api_token has no 'token'",
        "$.settings.cx": "Jira has no 'cx'",
    }
    long_url = {**body, "instance_url": "https://a.example/" + "x" * 2000}
    assert "longer than 2000" in _errors(api.post(ADD, long_url, format="json"))["$.instance_url"]
    _nothing_stored()


def test_a_required_setting_is_named(api):
    body = {"auth": "api_key", "credentials": {"api_key": "k"}}
    errors = _errors(api.post("/api/connectors/google_search/add", body, format="json"))
    assert errors == {"$.settings.cx": "Search engine ID is required"}
    _nothing_stored()


def test_connecting_makes_the_users_tools_with_encrypted_credentials(
    api, owner, outsider_api, private_network
):
    with serve(jira_app()) as url:
        private_network(url)
        body = {
            "instance_url": url + "/",
            "auth": "api_token",
            "credentials": CREDENTIALS,
            "picks": [
                {"key": "GET /rest/api/3/search/jql"},
                {"key": "GET /rest/api/3/issue/{issueIdOrKey}", "name": "acme_issue"},
            ],
        }
        response = api.post(ADD, body, format="json")
    assert response.status_code == 201, response.json()
    data = response.json()
    assert API_TOKEN not in response.content.decode()
    assert data["has_credentials"] is False  # on each tool, not on the source
    assert data["name"] == "Jira (127.0.0.1)"
    assert data["config"]["connector"] == "jira"
    assert sorted(t["name"] for t in data["tools"]) == ["acme_issue", "jira_search_issues"]
    tool = Tool.objects.get(name="acme_issue")
    assert (tool.kind, tool.owner) == ("openapi", owner)
    assert tool.config["base_url"] == url
    assert tool.config["auth"]["type"] == "basic"
    assert tool.credentials_encrypted and API_TOKEN not in tool.credentials_encrypted
    assert api.get("/api/tools/acme_issue/").status_code == 200
    assert outsider_api.get("/api/tools/acme_issue/").status_code == 404
    assert outsider_api.get(f"/api/sources/{data['id']}/").status_code == 404


def test_a_taken_tool_name_is_named_and_nothing_is_half_written(api, private_network):
    with serve(jira_app()) as url:
        private_network(url)
        body = {"instance_url": url, "credentials": CREDENTIALS}
        assert api.post(ADD, body, format="json").status_code == 201
        errors = _errors(api.post(ADD, body, format="json"))
    assert errors["$.picks[0].name"] == "a tool named 'jira_search_issues' already exists"
    assert ToolSource.objects.count() == 1
    assert Tool.objects.filter(kind="openapi").count() == 5


def test_a_run_is_refused_when_the_instance_is_not_allowed_any_more(api, owner, settings, jira_url):
    from tools_app.services.execute import tool_execute

    _connect_search(api, jira_url)
    settings.STUDIO_PRIVATE_NETWORKS = []
    run = tool_execute(
        tool=Tool.objects.get(name="jira_search_issues"),
        input={"query": {"jql": "x = 1"}},
        user=owner,
    )
    assert run.status == "failed"
    assert "not allowed" in run.error


def test_a_connector_source_updates_from_the_shipped_spec(api, owner, jira_url):
    source_id = _connect_search(api, jira_url)["id"]
    # As if connected with an older spec: one parameter fewer, one operation more.
    source = ToolSource.objects.get(pk=source_id)
    old = source.document
    search = old["paths"]["/rest/api/3/search/jql"]["get"]
    search["parameters"] = [p for p in search["parameters"] if p["name"] != "expand"]
    old["paths"]["/rest/api/2/gone"] = {"get": {"responses": {"200": {"description": "ok"}}}}
    source.save()
    tool = Tool.objects.get(name="jira_search_issues")
    del tool.input_schema["properties"]["query"]["properties"]["expand"]
    tool.save()

    diff = api.post(f"/api/sources/{source_id}/openapi/diff", {}, format="json")
    assert diff.status_code == 200, diff.json()
    status = {op["key"]: op for op in diff.json()["operations"]}
    assert status["GET /rest/api/3/search/jql"]["changes"] == ["query parameter added: expand"]
    assert status["GET /rest/api/2/gone"]["status"] == "removed"
    # An operation not picked when connecting can be added now.
    assert status["POST /rest/api/3/issue"]["tool"] is None
    assert status["POST /rest/api/3/issue"]["suggested_name"] == "jira_create_issue"

    applied = api.post(f"/api/sources/{source_id}/openapi/reimport", {}, format="json")
    assert applied.status_code == 200, applied.json()
    assert applied.json()["updated"] == ["jira_search_issues"]
    tool.refresh_from_db()
    assert "expand" in tool.input_schema["properties"]["query"]["properties"]
    # The sign-in and the instance stay as connected.
    assert tool.config["base_url"] == jira_url and tool.config["auth"]["type"] == "basic"


def test_a_connector_tool_binds_to_the_users_agent(api, owner, jira_url):
    from tests.agents_core.factories import AgentFactory

    AgentFactory(slug="support", owner=owner)
    _connect_search(api, jira_url)
    response = api.post(
        "/api/agents/support/tools/",
        {"tool": "jira_search_issues", "key": "find_issues"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert (response.json()["tool_kind"], response.json()["key"]) == ("openapi", "find_issues")
    assert response.json()["tool_description"].startswith("Search Jira issues with JQL")


def test_oauth_presets_make_tools_with_the_oauth_config(api):
    # ServiceNow's relative OAuth URLs resolve on the instance.
    body = {
        "instance_url": "https://acme.service-now.com",
        "auth": "oauth",
        "credentials": {"client_id": "cid", "client_secret": "secret"},
    }
    assert api.post("/api/connectors/servicenow/add", body, format="json").status_code == 201
    auth = Tool.objects.get(name="servicenow_list_incidents").config["auth"]
    assert auth["type"] == "oauth2_authorization_code"
    assert auth["token_url"] == "https://acme.service-now.com/oauth_token.do"
    # Graph's client credentials need the tenant, which goes into the token URL.
    graph = {"auth": "client_credentials", "credentials": {"client_id": "c", "client_secret": "s"}}
    errors = _errors(api.post("/api/connectors/sharepoint/add", graph, format="json"))
    assert errors == {"$.settings.tenant": "Directory (tenant) ID is required"}
    graph["settings"] = {"tenant": "contoso.example"}
    assert api.post("/api/connectors/sharepoint/add", graph, format="json").status_code == 201
    auth = Tool.objects.get(name="sharepoint_search").config["auth"]
    assert auth["type"] == "oauth2_client_credentials"
    assert (
        auth["token_url"] == "https://login.microsoftonline.com/contoso.example/oauth2/v2.0/token"
    )
    assert auth["scopes"] == ["https://graph.microsoft.com/.default"]
