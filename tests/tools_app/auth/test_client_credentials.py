"""OAuth 2.0 client credentials against the local authorization server: the token is
fetched with the configured scopes and audience, cached encrypted, renewed before it
expires and once after a 401."""

from __future__ import annotations

import pytest

from tools_app.models import OAuthToken
from tools_app.services.execute import tool_execute


@pytest.fixture
def cc_tool(oauth_server, auth_tool):
    oauth_server.clients["studio"] = {"secret": "s3cret", "redirect_uris": []}

    def make(**auth):
        return auth_tool(
            f"{oauth_server.url}/api/reports",
            {
                "type": "oauth2_client_credentials",
                "token_url": f"{oauth_server.url}/token",
                "scopes": ["reports.read", "reports.write"],
                "audience": "https://api.example.test",
                **auth,
            },
            {"client_id": "studio", "client_secret": "s3cret"},
        )

    return make


def test_a_call_gets_a_token_and_the_next_one_reuses_it(cc_tool, oauth_server, owner):
    tool = cc_tool()

    first = tool_execute(tool=tool, input={}, user=owner)
    second = tool_execute(tool=tool, input={}, user=owner)

    assert first.status == "completed", first.error
    assert first.output["body"]["sub"] == "client:studio"
    assert second.status == "completed", second.error
    assert len(oauth_server.token_requests) == 1
    request = oauth_server.token_requests[0]
    assert request["grant_type"] == "client_credentials"
    assert request["scope"] == "reports.read reports.write"
    assert request["audience"] == "https://api.example.test"
    assert "client_secret" not in request  # client_secret_basic: in the Authorization header
    tokens = [r["token"] for r in oauth_server.api_requests]
    assert tokens[0] == tokens[1]
    row = OAuthToken.objects.get(tool=tool, user=None)
    assert tokens[0] not in row.token_encrypted


def test_client_secret_post_sends_the_secret_in_the_form(cc_tool, oauth_server, owner):
    run = tool_execute(tool=cc_tool(client_auth="client_secret_post"), input={}, user=owner)

    assert run.status == "completed", run.error
    assert oauth_server.token_requests[0]["client_secret"] == "s3cret"


def test_a_token_about_to_expire_is_replaced_before_the_call(cc_tool, oauth_server, owner):
    oauth_server.expires_in = 30  # inside the resolver's one-minute margin
    tool = cc_tool()

    tool_execute(tool=tool, input={}, user=owner)
    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "completed", run.error
    assert len(oauth_server.token_requests) == 2
    assert [r["token"] for r in oauth_server.api_requests][0] != oauth_server.api_requests[1][
        "token"
    ]


def test_a_401_gets_one_new_token_and_the_call_is_sent_again(cc_tool, oauth_server, owner):
    tool = cc_tool()
    tool_execute(tool=tool, input={}, user=owner)
    oauth_server.revoke_everything()

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "completed", run.error
    assert len(oauth_server.token_requests) == 2
    assert [r["token"] for r in oauth_server.api_requests[1:]] == [
        oauth_server.api_requests[0]["token"],
        oauth_server.api_requests[2]["token"],
    ]
    assert oauth_server.api_requests[2]["token"] != oauth_server.api_requests[0]["token"]


def test_changing_the_credentials_fetches_a_new_token(cc_tool, oauth_server, owner):
    from tools_app.crypto import credentials_set

    tool = cc_tool()
    tool_execute(tool=tool, input={}, user=owner)
    oauth_server.clients["studio"]["secret"] = "rotated"
    credentials_set(tool, {"client_id": "studio", "client_secret": "rotated"})

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "completed", run.error
    assert len(oauth_server.token_requests) == 2


def test_a_wrong_secret_is_a_tool_error_with_the_servers_answer(cc_tool, oauth_server, owner):
    oauth_server.clients["studio"]["secret"] = "something else"

    run = tool_execute(tool=cc_tool(), input={}, user=owner)

    assert run.status == "failed"
    assert "client credentials grant refused" in run.error
    assert "invalid_client" in run.error
    assert not oauth_server.api_requests


def test_the_token_endpoint_goes_through_the_address_guard(auth_tool, oauth_server, owner):
    # The API is allow-listed; the token endpoint (another port) is not.
    tool = auth_tool(
        f"{oauth_server.url}/api/reports",
        {"type": "oauth2_client_credentials", "token_url": "http://127.0.0.1:9/token"},
        {"client_id": "studio", "client_secret": "s3cret"},
    )

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert "authorization server http://127.0.0.1:9/token is not reachable" in run.error
    assert "Refused" in run.error


def test_rotation_re_encrypts_cached_tokens(cc_tool, oauth_server, owner, settings):
    from cryptography.fernet import Fernet
    from django.test import override_settings

    from tools_app.crypto import credentials_rotate, decrypt

    tool = cc_tool()
    tool_execute(tool=tool, input={}, user=owner)
    old = OAuthToken.objects.get(tool=tool).token_encrypted
    new_key = Fernet.generate_key().decode()

    with override_settings(STUDIO_ENCRYPTION_KEYS=[new_key, *settings.STUDIO_ENCRYPTION_KEYS]):
        credentials_rotate()
    row = OAuthToken.objects.get(tool=tool)
    with override_settings(STUDIO_ENCRYPTION_KEYS=[new_key]):
        token = decrypt(row.token_encrypted)

    assert row.token_encrypted != old
    assert token["access_token"] == oauth_server.api_requests[0]["token"]
