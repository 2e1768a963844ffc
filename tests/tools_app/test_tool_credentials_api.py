"""Tool credentials through the API: write-only, stored encrypted, only has_credentials shown."""

from __future__ import annotations

import pytest

from tests.tools_app.factories import ToolFactory
from tools_app.crypto import credentials_get, credentials_set
from tools_app.models import Tool

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("tool_types")]

SECRET = "s3cr3t-token-value"


def create(api, **extra):
    body = {"name": "private_api", "kind": "test_echo", **extra}
    return api.post("/api/tools/", body, format="json")


def test_credentials_are_stored_encrypted_and_never_returned(api):
    response = create(api, credentials={"token": SECRET})

    assert response.status_code == 201, response.json()
    assert response.json()["has_credentials"] is True
    assert "credentials" not in response.json()
    assert SECRET not in response.content.decode()
    tool = Tool.objects.get(name="private_api")
    assert SECRET not in tool.credentials_encrypted
    assert credentials_get(tool) == {"token": SECRET}


def test_reads_show_only_whether_credentials_are_set(api, owner):
    tool = ToolFactory(name="private_api", owner=owner)
    credentials_set(tool, {"token": SECRET})

    detail = api.get("/api/tools/private_api/")
    listed = api.get("/api/tools/?source=studio")

    assert detail.json()["has_credentials"] is True
    assert "credentials" not in detail.json()
    assert SECRET not in detail.content.decode() + listed.content.decode()


def test_a_put_without_credentials_keeps_the_stored_ones(api, owner):
    tool = ToolFactory(name="private_api", owner=owner)
    credentials_set(tool, {"token": SECRET})

    response = api.put(
        "/api/tools/private_api/",
        {"name": "private_api", "kind": "test_echo", "description": "Renamed."},
        format="json",
    )

    assert response.status_code == 200, response.json()
    assert credentials_get(Tool.objects.get(name="private_api")) == {"token": SECRET}


def test_a_patch_replaces_or_clears_the_credentials(api, owner):
    ToolFactory(name="private_api", owner=owner)

    replaced = api.patch(
        "/api/tools/private_api/", {"credentials": {"token": "new"}}, format="json"
    )
    assert replaced.json()["has_credentials"] is True
    assert credentials_get(Tool.objects.get(name="private_api")) == {"token": "new"}

    cleared = api.patch("/api/tools/private_api/", {"credentials": None}, format="json")
    assert cleared.json()["has_credentials"] is False
    assert Tool.objects.get(name="private_api").credentials_encrypted == ""


def test_an_unknown_credential_field_is_refused_and_names_the_known_ones(api):
    response = create(api, credentials={"password": SECRET})

    assert response.status_code == 400
    assert response.json() == {
        "credentials": [
            "Unknown credential field 'password'; tools of type 'test_echo' take: token."
        ]
    }
    assert not Tool.objects.filter(name="private_api").exists()


def test_credentials_for_a_type_that_takes_none_are_refused(api, owner):
    ToolFactory(name="private_api", owner=owner, kind="test_builtin")

    response = api.patch("/api/tools/private_api/", {"credentials": {"token": "x"}}, format="json")

    assert response.status_code == 400
    assert response.json()["credentials"] == ["Tools of type 'test_builtin' take no credentials."]


def test_a_tool_whose_credentials_cannot_be_stored_is_not_created_at_all(api, settings):
    # Without encryption keys the credentials cannot be stored: the tool row written just
    # before must not stay behind.
    settings.STUDIO_ENCRYPTION_KEYS = []
    count = Tool.objects.count()

    response = create(api, credentials={"token": SECRET})

    assert response.status_code == 503
    assert response.json()["code"] == "encryption_keys_missing"
    assert Tool.objects.count() == count
