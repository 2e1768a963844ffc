"""Bad auth configs and credentials are refused with 400 naming the JSON path, and
nothing is written."""

from __future__ import annotations

import pytest

from tools_app.models import Tool

pytestmark = pytest.mark.django_db


def create(api, auth, credentials=None):
    body = {"name": "guarded", "kind": "http", "config": {"url": "https://api.example.test/x"}}
    if auth is not None:
        body["config"]["auth"] = auth
    if credentials is not None:
        body["credentials"] = credentials
    return api.post("/api/tools/", body, format="json")


def messages(response) -> str:
    return str(response.json())


def test_client_credentials_without_a_token_url(api):
    response = create(api, {"type": "oauth2_client_credentials"})

    assert response.status_code == 400
    assert "config.auth.token_url" in messages(response)
    assert not Tool.objects.filter(name="guarded").exists()


def test_an_unknown_auth_type(api):
    response = create(api, {"type": "kerberos"})

    assert response.status_code == 400
    assert "config.auth.type" in messages(response)


def test_a_token_url_that_is_not_http(api):
    response = create(api, {"type": "oauth2_client_credentials", "token_url": "file:///etc"})

    assert response.status_code == 400
    assert "config.auth.token_url" in messages(response)


def test_missing_client_secret(api):
    auth = {"type": "oauth2_client_credentials", "token_url": "https://login.test/token"}

    response = create(api, auth, {"client_id": "a"})

    assert response.status_code == 400
    assert "credentials.client_secret" in messages(response)
    assert not Tool.objects.filter(name="guarded").exists()


def test_a_ca_bundle_that_is_not_pem(api):
    response = create(api, {"type": "none"}, {"ca_bundle": "hello"})

    assert response.status_code == 400
    assert "credentials.ca_bundle: ca_bundle must be PEM" in messages(response)


def test_a_broken_certificate(api, pki):
    broken = pki.client.cert.replace("A", "B", 20)

    response = create(api, None, {"client_cert": broken, "client_key": pki.client.key})

    assert response.status_code == 400
    assert "credentials.client_cert: client_cert is not a readable PEM" in messages(response)


def test_a_key_that_is_not_the_certificates(api, pki):
    response = create(api, None, {"client_cert": pki.client.cert, "client_key": pki.server.key})

    assert response.status_code == 400
    assert "client_key is not the key of client_cert" in messages(response)


def test_a_jwt_bearer_private_key_that_is_not_a_key(api):
    auth = {"type": "jwt_bearer", "token_url": "https://login.test/token", "issuer": "robot"}

    response = create(api, auth, {"private_key": "-----BEGIN PRIVATE KEY-----\nxx\n"})

    assert response.status_code == 400
    assert "credentials.private_key" in messages(response)


def test_good_tls_material_is_stored_and_never_returned(api, pki):
    credentials = {"client_cert": pki.client.cert, "client_key": pki.client.key}

    response = create(api, None, credentials)

    assert response.status_code == 201, response.json()
    assert response.json()["has_credentials"] is True
    detail = api.get("/api/tools/guarded/").json()
    assert "PRIVATE KEY" not in str(detail)


def test_credentials_update_changes_one_field_and_keeps_the_others(api, pki):
    auth = {"type": "oauth2_client_credentials", "token_url": "https://login.test/token"}
    assert create(api, auth, {"client_id": "a", "client_secret": "b"}).status_code == 201

    response = api.patch(
        "/api/tools/guarded/",
        {"credentials_update": {"ca_bundle": pki.ca.cert, "client_id": "a2"}},
        format="json",
    )

    assert response.status_code == 200, response.json()
    assert response.json()["credentials_set"] == ["ca_bundle", "client_id", "client_secret"]
    from tools_app.crypto import credentials_get

    stored = credentials_get(Tool.objects.get(name="guarded"))
    assert stored["client_id"] == "a2" and stored["client_secret"] == "b"


def test_credentials_update_checks_the_merged_result(api):
    auth = {"type": "oauth2_client_credentials", "token_url": "https://login.test/token"}
    assert create(api, auth, {"client_id": "a", "client_secret": "b"}).status_code == 201

    response = api.patch(
        "/api/tools/guarded/", {"credentials_update": {"client_secret": None}}, format="json"
    )

    assert response.status_code == 400
    assert "credentials.client_secret" in messages(response)
    from tools_app.crypto import credentials_get

    assert credentials_get(Tool.objects.get(name="guarded"))["client_secret"] == "b"


def test_an_unknown_credential_field_in_an_update(api):
    assert create(api, None).status_code == 201

    response = api.patch(
        "/api/tools/guarded/", {"credentials_update": {"pin": "1234"}}, format="json"
    )

    assert response.status_code == 400
    assert "Unknown credential field 'pin'" in messages(response)


def test_the_network_check_lists_the_token_endpoint(api):
    auth = {
        "type": "oauth2_client_credentials",
        "token_url": "http://127.0.0.1:9/token",
        "revocation_url": "https://api.example.test/x",
    }
    assert create(api, auth).status_code == 201

    urls = api.get("/api/tools/guarded/network").json()["urls"]

    assert [u["url"] for u in urls] == ["https://api.example.test/x", "http://127.0.0.1:9/token"]
    assert urls[1]["status"] == "refused"
