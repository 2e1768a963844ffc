"""Provider credentials through /api/providers/: stored encrypted, shown as a hint only,
the owner's alone (another user gets 404), site-wide ones an admin's."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from providers.models import ProviderCredential
from providers.services import credential_create, credential_key

pytestmark = pytest.mark.django_db

KEY = "sk-proj-abcdefghijklmnop1234"


def test_a_key_is_stored_encrypted_and_only_its_hint_comes_back(api, owner):
    response = api.post("/api/providers/", {"provider": "openai", "api_key": KEY}, format="json")

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["key_hint"] == "sk-…1234"
    assert body["name"] == "openai" and body["site"] is False
    assert KEY not in response.content.decode()
    row = ProviderCredential.objects.get(pk=body["id"])
    assert KEY not in row.secret_encrypted and row.owner == owner
    assert credential_key(row) == KEY
    listing = api.get("/api/providers/")
    assert KEY not in listing.content.decode()
    providers = {p["id"]: p for p in listing.json()["providers"]}
    assert providers["openai"]["usable"] is True and providers["openai"]["via"] == "own"


def test_another_users_credential_is_a_404(api, outsider_api, owner):
    credential = credential_create(owner=owner, provider="anthropic", api_key=KEY)

    for method, url in (
        ("get", f"/api/providers/{credential.pk}/"),
        ("patch", f"/api/providers/{credential.pk}/"),
        ("delete", f"/api/providers/{credential.pk}/"),
        ("post", f"/api/providers/{credential.pk}/test"),
    ):
        response = getattr(outsider_api, method)(url, {}, format="json")
        assert response.status_code == 404, (method, url, response.content)
    assert outsider_api.get("/api/providers/").json()["results"] == []
    assert ProviderCredential.objects.filter(pk=credential.pk).exists()


def test_a_base_off_the_operators_list_is_refused_with_its_path(api, settings):
    settings.STUDIO_MODEL_API_BASES = ["http://127.0.0.1:11434"]
    body = {"provider": "openai_compatible", "name": "box", "api_base": "http://10.0.0.5:8000/v1"}

    response = api.post("/api/providers/", body, format="json")

    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "$.api_base"
    assert "STUDIO_MODEL_API_BASES" in response.json()["detail"]
    assert not ProviderCredential.objects.exists()


def test_a_compatible_server_cannot_take_a_providers_name(api, settings):
    settings.STUDIO_MODEL_API_BASES = ["http://127.0.0.1:11434"]
    for name in ("openai", "google", "ollama"):
        body = {"provider": "openai_compatible", "name": name, "api_base": "http://127.0.0.1:11434"}
        response = api.post("/api/providers/", body, format="json")
        assert response.status_code == 400, name
        assert response.json()["errors"][0]["path"] == "$.name"


def test_only_an_admin_sets_a_site_wide_credential(api, admin_user, owner):
    body = {"provider": "groq", "api_key": KEY, "site": True}
    assert api.post("/api/providers/", body, format="json").status_code == 403
    admin = APIClient()
    admin.force_authenticate(admin_user)

    response = admin.post("/api/providers/", body, format="json")

    assert response.status_code == 201, response.content
    site = ProviderCredential.objects.get()
    assert site.owner is None
    # Every user sees it and may use it, but cannot change it.
    seen = api.get("/api/providers/").json()["results"]
    assert [(c["name"], c["site"], c["editable"]) for c in seen] == [("groq", True, False)]
    assert api.patch(f"/api/providers/{site.pk}/", {"name": "x"}, format="json").status_code == 403
    assert api.delete(f"/api/providers/{site.pk}/").status_code == 403


def test_a_patch_without_a_key_keeps_the_stored_one(api, owner):
    credential = credential_create(owner=owner, provider="mistral", api_key=KEY)

    response = api.patch(
        f"/api/providers/{credential.pk}/", {"name": "mistral-team"}, format="json"
    )

    assert response.status_code == 200, response.content
    credential.refresh_from_db()
    assert credential.name == "mistral-team" and credential_key(credential) == KEY
    response = api.patch(
        f"/api/providers/{credential.pk}/", {"api_key": "sk-new-key-0000009999"}, format="json"
    )
    assert response.json()["key_hint"] == "sk-…9999"
    assert api.delete(f"/api/providers/{credential.pk}/").status_code == 204
    assert not ProviderCredential.objects.exists()


def test_two_credentials_of_one_name_are_a_409(api, owner):
    credential_create(owner=owner, provider="openai", api_key=KEY)

    response = api.post("/api/providers/", {"provider": "openai", "api_key": KEY}, format="json")

    assert response.status_code == 409
    assert json.loads(response.content)["errors"][0]["path"] == "$.name"


def test_anonymous_callers_get_401(anon_client):
    assert anon_client.get("/api/providers/").status_code == 401
    assert anon_client.get("/api/models").status_code == 401
