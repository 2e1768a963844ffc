"""The authorization code flow with PKCE, per user, driven through the studio's views
with Django's test client acting as the browser and the local OAuth server approving."""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlsplit

import pytest
from django.test import Client

from tests.tools_app.auth.servers import approve, s256
from tools_app.execution import ExecutionContext
from tools_app.models import OAuthToken, Tool
from tools_app.services.execute import tool_execute

CALLBACK = "http://testserver/oauth/callback"


@pytest.fixture
def code_tool(oauth_server, auth_tool):
    oauth_server.clients["studio-web"] = {"secret": "web-secret", "redirect_uris": [CALLBACK]}

    def make(**auth):
        return auth_tool(
            f"{oauth_server.url}/api/me",
            {
                "type": "oauth2_authorization_code",
                "authorization_url": f"{oauth_server.url}/authorize",
                "token_url": f"{oauth_server.url}/token",
                "revocation_url": f"{oauth_server.url}/revoke",
                "scopes": ["profile"],
                **auth,
            },
            {"client_id": "studio-web", "client_secret": "web-secret"},
        )

    return make


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def connect(client: Client, tool, user_name: str = "alice", query: str = "") -> str:
    """Press Connect, approve as `user_name` on the server; returns the callback URL."""
    return approve(client, f"/oauth/tools/{tool.name}/connect{query}", user_name)[1]


def finish(client: Client, callback: str):
    parts = urlsplit(callback)
    return client.get(f"{parts.path}?{parts.query}")


def test_connect_sends_the_browser_with_state_and_an_s256_challenge(code_tool, owner):
    tool = code_tool()
    client = browser(owner)

    response = client.get(f"/oauth/tools/{tool.name}/connect")

    query = parse_qs(urlsplit(response["Location"]).query)
    assert query["response_type"] == ["code"]
    assert query["client_id"] == ["studio-web"]
    assert query["redirect_uri"] == [CALLBACK]
    assert query["scope"] == ["profile"]
    assert query["code_challenge_method"] == ["S256"]
    pending = client.session["studio_oauth_pending"][query["state"][0]]
    assert s256(pending["verifier"]) == query["code_challenge"][0]


def test_the_callback_stores_the_token_and_a_call_acts_as_that_user(code_tool, oauth_server, owner):
    tool = code_tool()
    client = browser(owner)

    done = finish(client, connect(client, tool, "alice"))
    run = tool_execute(tool=tool, input={}, user=owner)

    assert done.status_code == 302
    assert done["Location"] == f"/tools/{tool.name}/?connected=1"
    assert run.status == "completed", run.error
    assert run.output["body"]["sub"] == "alice"
    exchange = oauth_server.token_requests[0]
    assert exchange["grant_type"] == "authorization_code"
    assert s256(exchange["code_verifier"])  # PKCE verified by the server
    row = OAuthToken.objects.get(tool=tool, user=owner)
    assert oauth_server.api_requests[0]["token"] not in row.token_encrypted
    status = client.get(f"/api/tools/{tool.name}/connection").json()
    assert status["connected"] is True and status["refreshable"] is True
    assert "access_token" not in str(status)


@pytest.mark.parametrize(
    ("next_url", "back_to"),
    [
        ("/connectors/#salesforce", "/connectors/?connected=1#salesforce"),
        ("/connectors/?tab=a", "/connectors/?tab=a&connected=1"),
        ("https://evil.example/", None),
        ("//evil.example/x", None),
        ("/\\evil.example", None),
    ],
)
def test_the_callback_comes_back_to_a_studio_page_named_by_next(
    code_tool, oauth_server, owner, next_url, back_to
):
    tool = code_tool()
    client = browser(owner)

    done = finish(client, connect(client, tool, "alice", f"?next={quote(next_url)}"))

    assert done.status_code == 302
    assert done["Location"] == (back_to or f"/tools/{tool.name}/?connected=1")


def test_a_callback_with_a_state_from_another_session_is_refused(code_tool, owner, teammate):
    tool = code_tool()
    callback = connect(browser(owner), tool)

    response = finish(browser(teammate), callback)

    assert response.status_code == 400
    assert b"unknown or expired state" in response.content
    assert not OAuthToken.objects.exists()


def test_a_denied_authorization_is_a_clear_page(code_tool, owner):
    tool = code_tool()
    client = browser(owner)
    start = client.get(f"/oauth/tools/{tool.name}/connect")
    state = parse_qs(urlsplit(start["Location"]).query)["state"][0]

    response = client.get(f"/oauth/callback?state={state}&error=access_denied")

    assert response.status_code == 400
    assert b"did not grant access (access_denied)" in response.content


def test_without_a_connection_the_tool_error_says_to_connect(code_tool, owner):
    tool = code_tool()

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert "Connect your account first" in run.error
    assert f"/tools/{tool.name}/" in run.error


def test_each_user_calls_with_their_own_token(code_tool, owner, teammate):
    # A shared tool (no owner, like a code tool): both users may run it, each connects
    # their own account.
    tool = code_tool(owner=None)
    client = browser(owner)
    finish(client, connect(client, tool, "alice"))

    mine = tool_execute(tool=tool, input={}, user=owner)
    theirs = tool_execute(tool=tool, input={}, user=teammate)

    assert mine.output["body"]["sub"] == "alice"
    assert theirs.status == "failed"
    assert "Connect your account first" in theirs.error


def test_another_users_tool_connection_is_404(code_tool, owner, outsider):
    tool = code_tool()
    client = browser(owner)
    finish(client, connect(client, tool))
    other = browser(outsider)

    assert other.get(f"/api/tools/{tool.name}/connection").status_code == 404
    assert other.delete(f"/api/tools/{tool.name}/connection").status_code == 404
    assert other.get(f"/oauth/tools/{tool.name}/connect").status_code == 404
    assert OAuthToken.objects.filter(user=owner).count() == 1


def test_an_expiring_token_is_refreshed_with_the_refresh_token(code_tool, oauth_server, owner):
    oauth_server.expires_in = 30  # inside the one-minute margin: refreshed before use
    tool = code_tool()
    client = browser(owner)
    finish(client, connect(client, tool))

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "completed", run.error
    assert [r["grant_type"] for r in oauth_server.token_requests] == [
        "authorization_code",
        "refresh_token",
    ]


def test_a_token_revoked_at_the_server_is_a_clear_tool_error(code_tool, oauth_server, owner):
    tool = code_tool()
    client = browser(owner)
    finish(client, connect(client, tool))
    assert tool_execute(tool=tool, input={}, user=owner).status == "completed"
    oauth_server.revoke_everything()

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert "no longer valid" in run.error and "Connect again" in run.error
    assert "invalid_grant" in run.error
    assert not OAuthToken.objects.filter(user=owner).exists()


def test_disconnect_revokes_at_the_server_and_forgets_the_token(code_tool, oauth_server, owner):
    tool = code_tool()
    client = browser(owner)
    finish(client, connect(client, tool))

    response = client.delete(f"/api/tools/{tool.name}/connection")
    run = tool_execute(tool=tool, input={}, user=owner)

    assert response.json() == {
        "connected": False,
        "revoked": True,
        "detail": "Revoked at the server.",
    }
    assert oauth_server.revocations[0]["token_type_hint"] == "refresh_token"
    assert "Connect your account first" in run.error


def test_a_run_for_no_user_cannot_use_a_user_token(code_tool, owner):
    from asgiref.sync import async_to_sync

    from tools_app.execution import run_tool

    tool = code_tool()
    outcome = async_to_sync(run_tool)(tool, {}, ExecutionContext())

    assert "runs for no user" in outcome.error


def test_one_connection_serves_every_operation_of_an_imported_source(api, oauth_server, owner):
    import json

    oauth_server.clients["studio-web"] = {"secret": "web-secret", "redirect_uris": [CALLBACK]}
    flows = {
        "authorizationCode": {
            "authorizationUrl": f"{oauth_server.url}/authorize",
            "tokenUrl": f"{oauth_server.url}/token",
            "scopes": {"profile": "p"},
        }
    }
    ok = {"responses": {"200": {"description": "ok"}}}
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Me", "version": "1"},
        "servers": [{"url": oauth_server.url}],
        "components": {"securitySchemes": {"o": {"type": "oauth2", "flows": flows}}},
        "security": [{"o": ["profile"]}],
        "paths": {"/api/me": {"get": ok}, "/api/files": {"get": ok}},
    }
    picks = [{"key": "GET /api/me", "name": "whoami"}, {"key": "GET /api/files", "name": "files"}]
    body = {
        "text": json.dumps(document),
        "picks": picks,
        "credentials": {"client_id": "studio-web", "client_secret": "web-secret"},
    }
    assert api.post("/api/sources/openapi/import", body, format="json").status_code == 201
    client = browser(owner)

    finish(client, connect(client, Tool.objects.get(name="whoami"), "bob"))
    run = tool_execute(tool=Tool.objects.get(name="files"), input={}, user=owner)

    assert run.status == "completed", run.error
    assert run.output["body"] == {"sub": "bob", "scope": "profile", "path": "/api/files"}
    assert (
        OAuthToken.objects.get(user=owner).source_id
        == Tool.objects.get(name="files").config["source_id"]
    )


def test_without_a_refresh_token_an_expired_connection_asks_to_connect_again(
    code_tool, oauth_server, owner
):
    oauth_server.issue_refresh = False
    oauth_server.expires_in = 30  # expiring: it would need a refresh
    tool = code_tool()
    client = browser(owner)
    finish(client, connect(client, tool))

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert "the access token expired, and there is no refresh token" in run.error
    assert "Connect again" in run.error
    assert not oauth_server.api_requests
