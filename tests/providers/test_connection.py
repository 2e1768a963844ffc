"""Test connection: a one-token call through litellm to the configured provider, against
local servers speaking the OpenAI and Anthropic protocols; the provider's answer or its
error comes back, never the key."""

from __future__ import annotations

import pytest

from providers.services import credential_create
from tests.model_servers import Reply

pytestmark = pytest.mark.django_db


def test_an_openai_credential_makes_a_one_token_call(api, owner, openai_server):
    credential = credential_create(
        owner=owner, provider="openai", api_key="sk-good", api_base=openai_server.url
    )

    response = api.post(f"/api/providers/{credential.pk}/test", {}, format="json")

    assert response.status_code == 200, response.content
    assert response.json() == {"ok": True, "model": "openai/gpt-4o-mini", "answer": "OK"}
    [received] = openai_server.requests
    assert received.body["max_tokens"] == 1
    assert received.body["model"] == "gpt-4o-mini"
    assert received.headers["Authorization"] == "Bearer sk-good"


def test_an_anthropic_credential_speaks_the_messages_protocol(api, owner, anthropic_server):
    credential = credential_create(
        owner=owner, provider="anthropic", api_key="ant-good", api_base=anthropic_server.url
    )

    response = api.post(
        f"/api/providers/{credential.pk}/test", {"model": "claude-sonnet-4-5"}, format="json"
    )

    assert response.json() == {"ok": True, "model": "anthropic/claude-sonnet-4-5", "answer": "OK"}
    [received] = anthropic_server.requests
    assert received.path == "/v1/messages"
    assert received.headers["x-api-key"] == "ant-good"
    assert received.body["max_tokens"] == 1 and received.body["model"] == "claude-sonnet-4-5"


def test_the_providers_error_is_shown_without_the_key(api, owner, anthropic_server):
    anthropic_server.quotes_key = True  # "Incorrect API key provided: <the key>"
    credential = credential_create(
        owner=owner,
        provider="anthropic",
        api_key="ant-wrong-key-1234",
        api_base=anthropic_server.url,
    )

    body = api.post(f"/api/providers/{credential.pk}/test", {}, format="json").json()

    assert body["ok"] is False and body["code"] == "auth"
    assert "Incorrect API key provided: [redacted]" in body["error"]
    assert "ant-wrong-key-1234" not in str(body)


def test_a_rate_limit_is_reported_as_such(api, owner, openai_server):
    openai_server.script = [Reply(status=429)]
    credential = credential_create(
        owner=owner, provider="openai", api_key="sk-good", api_base=openai_server.url
    )

    body = api.post(f"/api/providers/{credential.pk}/test", {}, format="json").json()

    assert body["ok"] is False and body["code"] == "rate_limited"
    assert len(openai_server.requests) == 1  # no retries: one token, one call


def test_a_compatible_server_needs_a_model_name(api, owner, openai_server):
    credential = credential_create(
        owner=owner, provider="openai_compatible", name="box", api_base=openai_server.url
    )

    response = api.post(f"/api/providers/{credential.pk}/test", {}, format="json")

    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "$.model"
    openai_server.key = "no-key"
    body = api.post(
        f"/api/providers/{credential.pk}/test", {"model": "box/llama3"}, format="json"
    ).json()
    assert body == {"ok": True, "model": "openai/llama3", "answer": "OK"}
