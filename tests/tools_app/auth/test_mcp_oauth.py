"""MCP servers that sign in with their own OAuth (the MCP authorization spec): discovery
from the 401 (RFC 9728, RFC 8414), Dynamic Client Registration (RFC 7591), each user's
connection through the connect flow (PKCE, RFC 8707 resource), tool calls as that user,
refresh, revocation, and the errors for bad metadata. A real MCP server (the `mcp` SDK)
on 127.0.0.1 checks the tokens the local OAuth server issued."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from django.test import Client

from tests.conftest import free_port
from tests.tools_app.auth.mcp_server import PRM_PATH, RequireOAuth, mcp_oauth_app
from tests.tools_app.auth.servers import approve
from tests.tools_app.sources.servers import serve
from tools_app.models import OAuthToken, Tool, ToolSource
from tools_app.services.execute import tool_execute

CALLBACK = "http://testserver/oauth/callback"


class McpServer:
    def __init__(self, url: str, app: RequireOAuth) -> None:
        self.url, self.app = url, app


@pytest.fixture
def mcp(oauth_server, private_network) -> Iterator[McpServer]:
    oauth_server.publish_metadata()
    app = mcp_oauth_app(oauth_server)
    with serve(app) as base:
        yield McpServer(f"{private_network(base)}/mcp", app)


def add_source(api, url: str, **extra):
    return api.post("/api/sources/mcp/", {"url": url, "name": "Remote", **extra}, format="json")


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def connect(client: Client, source_id: int, user_name: str = "alice") -> tuple[dict, object]:
    """Press "Connect your account" on the Sources page, approve as `user_name` at the
    authorization server, follow the callback; (authorization query, final response)."""
    query, callback = approve(
        client, f"/oauth/sources/{source_id}/connect?next=/sources/", user_name
    )
    back = urlsplit(callback)
    return query, client.get(f"{back.path}?{back.query}")


@pytest.fixture
def connected(api, owner, mcp):
    """A source added, connected as alice, its tools listed and whoami exposed."""
    source = add_source(api, mcp.url).json()
    connect(browser(owner), source["id"])
    assert api.post(f"/api/sources/{source['id']}/mcp/refresh").status_code == 200
    picked = api.post(
        f"/api/sources/{source['id']}/mcp/pick",
        {"picks": [{"remote_name": "whoami"}]},
        format="json",
    )
    assert picked.status_code == 201, picked.json()
    return source


def test_adding_a_server_that_answers_401_discovers_its_oauth_and_registers_a_client(
    api, mcp, oauth_server
):
    response = add_source(api, mcp.url)

    assert response.status_code == 201, response.json()
    data = response.json()
    auth = data["config"]["auth"]
    assert auth["type"] == "oauth2_authorization_code"
    assert auth["authorization_url"] == f"{oauth_server.url}/authorize"
    assert auth["token_url"] == f"{oauth_server.url}/token"
    assert auth["revocation_url"] == f"{oauth_server.url}/revoke"
    assert auth["resource"] == mcp.url
    assert auth["scopes"] == ["mcp:tools"]  # the 401's scope before scopes_supported
    oauth = data["config"]["oauth"]
    assert oauth["registration"] == "dynamic"
    assert oauth["resource_metadata"] == mcp.url.removesuffix("/mcp") + PRM_PATH
    [registration] = oauth_server.registrations
    assert registration["redirect_uris"] == [CALLBACK]
    assert registration["token_endpoint_auth_method"] == "none"  # PKCE, no secret
    assert data["remote_tools"] == []
    status = api.get(f"/api/sources/{data['id']}/connection").json()
    assert status == {
        "connectable": True,
        "connected": False,
        "connect_url": f"/oauth/sources/{data['id']}/connect",
    }


def test_connecting_uses_pkce_and_the_resource_and_comes_back_to_the_sources_page(
    api, owner, mcp, oauth_server
):
    source = add_source(api, mcp.url).json()

    query, done = connect(browser(owner), source["id"])

    assert query["code_challenge_method"] == "S256"
    assert query["resource"] == mcp.url
    assert query["scope"] == "mcp:tools"
    assert done.status_code == 302
    assert done["Location"] == "/sources/?connected=1"
    exchange = oauth_server.token_requests[-1]
    assert exchange["grant_type"] == "authorization_code"
    assert exchange["resource"] == mcp.url
    assert api.get(f"/api/sources/{source['id']}/connection").json()["connected"] is True


def test_listing_the_tools_uses_the_connecting_users_token(api, owner, mcp):
    source = add_source(api, mcp.url).json()
    refused = api.post(f"/api/sources/{source['id']}/mcp/refresh")
    assert refused.status_code == 409
    assert "Connect your account first" in refused.json()["detail"]

    connect(browser(owner), source["id"], "bob")
    response = api.post(f"/api/sources/{source['id']}/mcp/refresh")

    assert response.status_code == 200, response.json()
    assert response.json()["changes"]["added"] == ["add", "whoami"]
    assert mcp.app.seen and set(mcp.app.seen) == {"bob"}


def test_a_tool_call_acts_as_the_connected_user(connected, owner):
    run = tool_execute(tool=Tool.objects.get(name="whoami"), input={}, user=owner)

    assert run.status == "completed", run.error
    assert run.output == {"result": "alice"}


def test_a_user_without_a_connection_is_told_to_connect(connected, owner, oauth_server, api):
    disconnected = api.delete(f"/api/sources/{connected['id']}/connection").json()
    assert disconnected["revoked"] is True and oauth_server.revocations

    run = tool_execute(tool=Tool.objects.get(name="whoami"), input={}, user=owner)

    assert run.status == "failed"
    assert "Connect your account first" in run.error and "/sources/" in run.error


def test_a_refused_access_token_is_refreshed_and_the_call_sent_again(
    connected, owner, oauth_server
):
    for entry in oauth_server.access.values():
        entry["revoked"] = True  # the access token only; the refresh token still works

    run = tool_execute(tool=Tool.objects.get(name="whoami"), input={}, user=owner)

    assert run.status == "completed", run.error
    refresh = oauth_server.token_requests[-1]
    assert refresh["grant_type"] == "refresh_token"
    assert refresh["resource"] == connected["config"]["auth"]["resource"]


def test_a_revoked_grant_is_a_connect_again_error(connected, owner, oauth_server):
    oauth_server.revoke_everything()

    run = tool_execute(tool=Tool.objects.get(name="whoami"), input={}, user=owner)

    assert run.status == "failed"
    assert "Connect again on /sources/" in run.error
    assert not OAuthToken.objects.filter(source_id=connected["id"]).exists()


def test_another_user_cannot_see_connect_or_refresh_the_source(api, outsider, outsider_api, mcp):
    source = add_source(api, mcp.url).json()

    assert outsider_api.get(f"/api/sources/{source['id']}/connection").status_code == 404
    assert outsider_api.delete(f"/api/sources/{source['id']}/connection").status_code == 404
    assert outsider_api.post(f"/api/sources/{source['id']}/mcp/refresh").status_code == 404
    assert browser(outsider).get(f"/oauth/sources/{source['id']}/connect").status_code == 404


def test_a_client_the_user_gives_is_used_when_the_server_cannot_register_one(
    api, oauth_server, mcp, owner
):
    oauth_server.publish_metadata(registration=False)
    refused = add_source(api, mcp.url)
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["path"] == "$.oauth.client_id"
    assert CALLBACK in refused.json()["detail"]
    oauth_server.clients["given"] = {"secret": "given-secret", "redirect_uris": [CALLBACK]}

    response = add_source(
        api, mcp.url, oauth={"client_id": "given", "client_secret": "given-secret"}
    )

    assert response.status_code == 201, response.json()
    assert response.json()["config"]["oauth"]["registration"] == "given"
    assert "given-secret" not in response.content.decode()
    query, done = connect(browser(owner), response.json()["id"])
    assert query["client_id"] == "given" and done["Location"] == "/sources/?connected=1"
    assert oauth_server.registrations == []


def test_without_a_challenge_the_well_known_metadata_is_found(api, mcp):
    mcp.app.challenge_metadata = False

    response = add_source(api, mcp.url)

    assert response.status_code == 201, response.json()
    assert response.json()["config"]["oauth"]["resource_metadata"].endswith(PRM_PATH)


def test_openid_discovery_is_the_fallback(api, mcp, oauth_server):
    metadata = oauth_server.documents.pop("/.well-known/oauth-authorization-server")
    oauth_server.documents["/.well-known/openid-configuration"] = metadata

    response = add_source(api, mcp.url)

    assert response.status_code == 201, response.json()
    assert response.json()["config"]["oauth"]["server_metadata"].endswith("openid-configuration")


@pytest.mark.parametrize(
    ("break_it", "message"),
    [
        (lambda mcp, oauth: mcp.app.documents.update({PRM_PATH: b"<html>"}), "is not JSON"),
        (
            lambda mcp, oauth: mcp.app.documents.update({PRM_PATH: {"resource": mcp.url}}),
            "names no authorization server ($.authorization_servers)",
        ),
        (
            lambda mcp, oauth: mcp.app.documents.update(
                {PRM_PATH: {"resource": "http://127.0.0.1:1/mcp", "authorization_servers": []}}
            ),
            "not this server ($.resource)",
        ),
        (
            lambda mcp, oauth: oauth.documents.pop("/.well-known/oauth-authorization-server"),
            "publishes no authorization server metadata",
        ),
        (
            lambda mcp, oauth: oauth.documents.update(
                {"/.well-known/oauth-authorization-server": b'{"issuer": "x"}'}
            ),
            "no usable authorization_endpoint",
        ),
    ],
)
def test_bad_metadata_is_a_clear_error_at_the_url(api, mcp, oauth_server, break_it, message):
    break_it(mcp, oauth_server)

    response = add_source(api, mcp.url)

    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert response.json()["errors"][0]["path"] == "$.url"


def test_an_unreachable_or_private_authorization_server_is_a_clear_error(api, mcp, private_network):
    down = private_network(f"http://127.0.0.1:{free_port()}")
    metadata = {"resource": mcp.url, "authorization_servers": [down]}
    mcp.app.documents[PRM_PATH] = metadata
    unreachable = add_source(api, mcp.url)
    private = f"http://127.0.0.1:{free_port()}"  # not on the operator's allow-list
    mcp.app.documents[PRM_PATH] = {**metadata, "authorization_servers": [private]}
    blocked = add_source(api, mcp.url)

    assert unreachable.status_code == 400
    assert "could not be fetched" in unreachable.json()["detail"]
    assert blocked.status_code == 400
    assert blocked.json()["code"] == "blocked_url"
    assert blocked.json()["errors"][0]["path"] == "$.url"


def test_a_token_about_to_expire_is_refreshed_before_the_call(api, owner, mcp, oauth_server):
    oauth_server.expires_in = 30  # inside the minute before expiry the studio renews in
    source = add_source(api, mcp.url).json()
    connect(browser(owner), source["id"])
    before = len(oauth_server.token_requests)

    response = api.post(f"/api/sources/{source['id']}/mcp/refresh")

    assert response.status_code == 200, response.json()
    assert [r["grant_type"] for r in oauth_server.token_requests[before:]] == ["refresh_token"]


def test_refreshing_a_source_whose_server_now_asks_for_oauth_sets_up_its_sign_in(api, owner, mcp):
    plain = ToolSource.objects.create(
        kind="mcp", name="Plain", owner=owner, url=mcp.url, config={"transport": "streamable_http"}
    )

    response = api.post(f"/api/sources/{plain.pk}/mcp/refresh")

    assert response.status_code == 200, response.json()
    assert response.json()["changes"]["signin"] == ["oauth"]
    plain.refresh_from_db()
    assert plain.config["auth"]["resource"] == mcp.url
    assert api.get(f"/api/sources/{plain.pk}/connection").json()["connectable"] is True
