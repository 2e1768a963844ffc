"""Mutual TLS and private CAs: a local HTTPS server whose certificate comes from a CA the
test made, and which asks every client for a certificate of that CA."""

from __future__ import annotations

import pytest

from tools_app.services.execute import tool_execute


@pytest.fixture
def tls_tool(mtls_server, auth_tool):
    def make(credentials, auth=None, path="/api/public"):
        return auth_tool(f"{mtls_server.url}{path}", auth, credentials)

    return make


def test_with_the_ca_and_a_client_certificate_the_call_succeeds(tls_tool, pki, owner):
    tool = tls_tool(
        {"ca_bundle": pki.ca.cert, "client_cert": pki.client.cert, "client_key": pki.client.key}
    )

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "completed", run.error
    assert run.output["body"] == {"public": True}


def test_without_a_client_certificate_the_error_says_the_server_wants_one(tls_tool, pki, owner):
    run = tool_execute(tool=tls_tool({"ca_bundle": pki.ca.cert}), input={}, user=owner)

    assert run.status == "failed"
    assert "asks for a client certificate" in run.error
    assert "client_cert and client_key" in run.error


def test_without_the_private_ca_the_server_is_not_trusted(tls_tool, pki, owner):
    tool = tls_tool({"client_cert": pki.client.cert, "client_key": pki.client.key})

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert "CERTIFICATE_VERIFY_FAILED" in run.error
    assert "not trusted" in run.error and "ca_bundle" in run.error


def test_another_ca_does_not_make_the_server_trusted(tls_tool, pki, owner):
    tool = tls_tool(
        {
            "ca_bundle": pki.other_ca.cert,
            "client_cert": pki.client.cert,
            "client_key": pki.client.key,
        }
    )

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert "not trusted" in run.error


def test_the_token_endpoint_uses_the_same_tls_material(tls_tool, mtls_server, pki, owner):
    mtls_server.clients["studio"] = {"secret": "s3cret", "redirect_uris": []}
    tool = tls_tool(
        {
            "client_id": "studio",
            "client_secret": "s3cret",
            "ca_bundle": pki.ca.cert,
            "client_cert": pki.client.cert,
            "client_key": pki.client.key,
        },
        auth={"type": "oauth2_client_credentials", "token_url": f"{mtls_server.url}/token"},
        path="/api/reports",
    )

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "completed", run.error
    assert run.output["body"]["sub"] == "client:studio"
    assert len(mtls_server.token_requests) == 1


def test_a_token_endpoint_without_the_ca_is_a_clear_error(tls_tool, mtls_server, pki, owner):
    mtls_server.clients["studio"] = {"secret": "s3cret", "redirect_uris": []}
    tool = tls_tool(
        {"client_id": "studio", "client_secret": "s3cret"},
        auth={"type": "oauth2_client_credentials", "token_url": f"{mtls_server.url}/token"},
        path="/api/reports",
    )

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert "The client credentials grant failed" in run.error
    assert "not trusted" in run.error


def _spec(server) -> bytes:
    import json

    ok = {"responses": {"200": {"description": "ok"}}}
    return json.dumps(
        {
            "openapi": "3.1.0",
            "info": {"title": "Private", "version": "1"},
            "servers": [{"url": server.url}],
            "paths": {"/api/public": {"get": {"operationId": "publicInfo", **ok}}},
        }
    ).encode()


def test_a_spec_behind_mutual_tls_is_previewed_imported_and_reimported(
    api, mtls_server, pki, owner
):
    from tools_app.models import Tool, ToolSource

    mtls_server.documents["/openapi.json"] = _spec(mtls_server)
    url = f"{mtls_server.url}/openapi.json"
    tls = {"ca_bundle": pki.ca.cert, "client_cert": pki.client.cert, "client_key": pki.client.key}

    refused = api.post("/api/sources/openapi/preview", {"url": url}, format="json")
    preview = api.post(
        "/api/sources/openapi/preview", {"url": url, "credentials": tls}, format="json"
    )
    imported = api.post(
        "/api/sources/openapi/import",
        {"url": url, "credentials": tls, "picks": [{"key": "GET /api/public"}]},
        format="json",
    )

    assert refused.status_code == 400
    assert "not trusted" in refused.json()["detail"]
    assert preview.status_code == 200, preview.json()
    assert imported.status_code == 201, imported.json()
    source = ToolSource.objects.get(pk=imported.json()["id"])
    assert "PRIVATE KEY" not in source.credentials_encrypted
    run = tool_execute(tool=Tool.objects.get(name="public_info"), input={}, user=owner)
    assert run.status == "completed", run.error
    diff = api.post(f"/api/sources/{source.pk}/openapi/diff", {}, format="json")
    assert diff.status_code == 200, diff.json()  # re-fetched with the stored TLS material


def test_bad_tls_material_for_a_spec_url_is_refused_at_its_path(api, mtls_server):
    response = api.post(
        "/api/sources/openapi/preview",
        {"url": f"{mtls_server.url}/openapi.json", "credentials": {"ca_bundle": "nope"}},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "$.credentials.ca_bundle"
