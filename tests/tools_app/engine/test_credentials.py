"""Tool credentials: encrypted at rest with keys apart from SECRET_KEY, rotatable, never
returned by the API."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from django.db import connection
from django.test import override_settings

from common.exceptions import ApplicationError
from tools_app.crypto import credentials_get, credentials_rotate, credentials_set
from tools_app.models import Tool, ToolSource


def _raw_column(tool: Tool) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT credentials_encrypted FROM tools_app_tool WHERE id = %s", [tool.id])
        return cursor.fetchone()[0]


def test_credentials_are_encrypted_in_the_database(make_tool, owner):
    tool = make_tool(kind="http", owner=owner, config={"url": "https://x.test/"})

    credentials_set(tool, {"token": "plain-secret-value"})

    raw = _raw_column(tool)
    assert raw and "plain-secret-value" not in raw
    assert credentials_get(Tool.objects.get(id=tool.id)) == {"token": "plain-secret-value"}


def test_rotation_re_encrypts_with_the_new_key(make_tool, owner, settings):
    tool = make_tool(kind="http", owner=owner, config={"url": "https://x.test/"})
    credentials_set(tool, {"token": "rotate-me"})
    old_raw = _raw_column(tool)
    new_key = Fernet.generate_key().decode()

    with override_settings(STUDIO_ENCRYPTION_KEYS=[new_key, *settings.STUDIO_ENCRYPTION_KEYS]):
        assert credentials_rotate() >= 1
    with override_settings(STUDIO_ENCRYPTION_KEYS=[new_key]):
        assert credentials_get(Tool.objects.get(id=tool.id)) == {"token": "rotate-me"}
    assert _raw_column(tool) != old_raw


def test_rotation_covers_the_headers_of_tool_sources(owner, settings):
    source = ToolSource.objects.create(
        kind="mcp", name="remote", owner=owner, url="https://mcp.example.test/mcp"
    )
    credentials_set(source, {"Authorization": "Bearer source-secret"})
    old_raw = ToolSource.objects.get(id=source.id).credentials_encrypted
    new_key = Fernet.generate_key().decode()

    with override_settings(STUDIO_ENCRYPTION_KEYS=[new_key, *settings.STUDIO_ENCRYPTION_KEYS]):
        credentials_rotate()
    with override_settings(STUDIO_ENCRYPTION_KEYS=[new_key]):
        rotated = ToolSource.objects.get(id=source.id)
        assert credentials_get(rotated) == {"Authorization": "Bearer source-secret"}
    assert rotated.credentials_encrypted != old_raw


def test_without_keys_the_error_says_what_to_configure(make_tool, owner):
    tool = make_tool(kind="http", owner=owner, config={"url": "https://x.test/"})

    with override_settings(STUDIO_ENCRYPTION_KEYS=[]), pytest.raises(ApplicationError) as caught:
        credentials_set(tool, {"token": "x"})

    assert "STUDIO_ENCRYPTION_KEYS" in caught.value.message


def test_a_token_from_a_removed_key_is_a_clear_error(make_tool, owner):
    tool = make_tool(kind="http", owner=owner, config={"url": "https://x.test/"})
    credentials_set(tool, {"token": "x"})

    with (
        override_settings(STUDIO_ENCRYPTION_KEYS=[Fernet.generate_key().decode()]),
        pytest.raises(ApplicationError, match="cannot be decrypted"),
    ):
        credentials_get(tool)


def test_credentials_never_appear_in_api_responses(api, owner):
    created = api.post(
        "/api/tools/",
        {
            "name": "secret_http",
            "kind": "http",
            "description": "calls an API",
            "input_schema": {"type": "object"},
            "config": {"url": "https://api.example.test/"},
            "credentials": {"token": "api-secret-token"},
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    tool = Tool.objects.get(name="secret_http")

    responses = [
        created,
        api.get("/api/tools/secret_http/"),
        api.get("/api/tools/"),
        api.post("/api/tools/secret_http/execute", {"input": {}}, format="json"),
        api.get("/api/tools/secret_http/runs/"),
        api.get("/api/tools/secret_http/schema"),
    ]

    assert "api-secret-token" not in _raw_column(tool)
    assert credentials_get(tool) == {"token": "api-secret-token"}
    for response in responses:
        assert response.status_code < 500
        assert b"api-secret-token" not in response.content
    assert api.get("/api/tools/secret_http/").json()["has_credentials"] is True
