"""Settings → Web search over REST: each user's own setting, the key write-only and
encrypted, bad input refused with its JSON path and nothing half-written."""

from __future__ import annotations

import pytest

from tools_app.models import WebSearchSetting

pytestmark = pytest.mark.django_db
URL = "/api/settings/web-search/"


def test_anonymous_requests_are_refused(anon_client):
    assert anon_client.get(URL).status_code in (401, 403)
    assert anon_client.put(
        URL, {"provider": "brave", "api_key": "k"}, format="json"
    ).status_code in (401, 403)


def test_a_user_starts_with_no_setting_and_sees_the_choices(api):
    body = api.get(URL).json()

    assert body["setting"] is None and body["server"] is None
    assert [p["id"] for p in body["providers"]] == ["searxng", "brave", "tavily", "native"]


def test_the_key_is_stored_encrypted_and_never_echoed(api, owner):
    response = api.put(URL, {"provider": "brave", "api_key": "BSAsecret-12345678"}, format="json")

    assert response.status_code == 200, response.content
    assert "BSAsecret-12345678" not in response.content.decode()
    setting = response.json()["setting"]
    assert setting["key_set"] is True and setting["key_hint"] == "BSA…5678"
    row = WebSearchSetting.objects.get(owner=owner)
    assert "BSAsecret" not in row.secret_encrypted
    assert "BSAsecret-12345678" not in api.get(URL).content.decode()


def test_a_save_without_the_key_keeps_it_and_an_empty_one_is_refused(api, owner):
    api.put(URL, {"provider": "tavily", "api_key": "tvly-123456789012"}, format="json")

    kept = api.put(
        URL, {"provider": "tavily", "base_url": "https://proxy.example.com"}, format="json"
    )
    cleared = api.put(URL, {"provider": "tavily", "api_key": ""}, format="json")

    assert kept.status_code == 200 and kept.json()["setting"]["key_set"] is True
    assert cleared.status_code == 400
    assert cleared.json()["errors"] == [{"path": "$.api_key", "message": "Tavily needs an API key"}]
    assert WebSearchSetting.objects.get(owner=owner).base_url == "https://proxy.example.com"


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"provider": "google"}, "$.provider"),
        ({}, "$.provider"),
        ({"provider": "searxng"}, "$.base_url"),
        ({"provider": "searxng", "base_url": "ftp://searx.example.org"}, "$.base_url"),
        ({"provider": "searxng", "base_url": 12}, "$.base_url"),
        ({"provider": "brave"}, "$.api_key"),
        ({"provider": "brave", "api_key": 5}, "$.api_key"),
        ({"provider": "native", "base_url": "https://x.example"}, "$.base_url"),
        ({"provider": "native", "model": "no spaces allowed"}, "$.model"),
        ({"provider": "brave", "api_key": "k", "model": "openai/x"}, "$.model"),
        ({"provider": "brave", "api_key": "k", "colour": "red"}, "$.colour"),
    ],
)
def test_bad_input_names_its_path_and_writes_nothing(api, owner, body, path):
    response = api.put(URL, body, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["path"] == path
    assert not WebSearchSetting.objects.filter(owner=owner).exists()


def test_a_body_that_is_not_an_object_is_refused(api):
    response = api.put(URL, ["searxng"], format="json")

    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "$"


def test_each_user_sees_only_their_own(api, outsider_api):
    api.put(URL, {"provider": "searxng", "base_url": "https://searx.example.org"}, format="json")

    assert outsider_api.get(URL).json()["setting"] is None
    assert outsider_api.delete(URL).status_code == 204
    assert api.get(URL).json()["setting"]["base_url"] == "https://searx.example.org"


def test_delete_falls_back_to_the_servers_setting(api, settings):
    settings.STUDIO_WEB_SEARCH_PROVIDER = "brave"
    api.put(URL, {"provider": "searxng", "base_url": "https://searx.example.org"}, format="json")

    assert api.delete(URL).status_code == 204
    body = api.get(URL).json()
    assert body["setting"] is None and body["server"] == {"provider": "brave"}


def test_the_test_endpoint_searches_with_the_users_setting(api, local_server_url):
    api.put(URL, {"provider": "searxng", "base_url": local_server_url}, format="json")

    response = api.post(f"{URL[:-1]}/test", {"query": "django"}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["results"][0] == {
        "title": "Django",
        "url": "https://www.djangoproject.com/",
        "snippet": "The web framework",
    }


def test_the_test_endpoint_reports_a_missing_setting_and_bad_queries(api):
    missing = api.post(f"{URL[:-1]}/test", {"query": "django"}, format="json")
    empty = api.post(f"{URL[:-1]}/test", {"query": " "}, format="json")

    assert missing.status_code == 502
    assert missing.json()["detail"] == "No web search configured: add one in Settings → Web search"
    assert empty.status_code == 400 and empty.json()["errors"][0]["path"] == "$.query"
