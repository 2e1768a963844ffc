"""The OpenAPI importer maps a spec's security schemes to tools_app.auth configs, and an
imported operation authenticates through them against the local OAuth server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tools_app.models import Tool
from tools_app.services.execute import tool_execute
from tools_app.sources.openapi_spec import spec_operations

IMPORT = "/api/sources/openapi/import"


def spec(schemes: dict[str, Any], security: list[dict[str, list[str]]], server: str) -> dict:
    return {
        "openapi": "3.1.0",
        "info": {"title": "Reports", "version": "1"},
        "servers": [{"url": server}],
        "components": {"securitySchemes": schemes},
        "security": security,
        "paths": {
            "/api/reports": {
                "get": {"operationId": "listReports", "responses": {"200": {"description": "ok"}}}
            }
        },
    }


def auth_of(document: dict) -> dict | None:
    return spec_operations(document)[0].config["auth"]


FLOWS = {
    "authorizationCode": {
        "authorizationUrl": "https://login.example.test/authorize",
        "tokenUrl": "https://login.example.test/token",
        "scopes": {"reports.read": "read", "reports.write": "write"},
    },
    # Relative: resolved against the server URL (RFC 3986), as OpenAPI 3.1 says.
    "clientCredentials": {"tokenUrl": "oauth/token", "scopes": {"reports.read": "read"}},
}


def test_authorization_code_is_preferred_with_the_required_scopes():
    document = spec(
        {"o": {"type": "oauth2", "flows": FLOWS}}, [{"o": ["reports.read"]}], "https://x.test/v1"
    )

    assert auth_of(document) == {
        "type": "oauth2_authorization_code",
        "authorization_url": "https://login.example.test/authorize",
        "token_url": "https://login.example.test/token",
        "scopes": ["reports.read"],
        "scheme": "o",
    }


def test_client_credentials_with_a_relative_token_url_gets_the_servers_address():
    flows = {"clientCredentials": FLOWS["clientCredentials"]}
    document = spec({"o": {"type": "oauth2", "flows": flows}}, [{"o": []}], "https://x.test/v1")

    assert auth_of(document) == {
        "type": "oauth2_client_credentials",
        "token_url": "https://x.test/v1/oauth/token",
        "scopes": ["reports.read"],
        "scheme": "o",
    }


def test_swagger_2_application_flow_is_client_credentials():
    document = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "host": "api.example.test",
        "securityDefinitions": {
            "o": {"type": "oauth2", "flow": "application", "tokenUrl": "https://a.test/t"}
        },
        "security": [{"o": ["x"]}],
        "paths": {"/r": {"get": {"responses": {"200": {"description": "ok"}}}}},
    }

    assert auth_of(document)["type"] == "oauth2_client_credentials"
    assert auth_of(document)["scopes"] == ["x"]


def test_mutual_tls_and_an_api_key_together():
    schemes = {
        "m": {"type": "mutualTLS"},
        "k": {"type": "apiKey", "in": "header", "name": "X-Key"},
    }

    auth = auth_of(spec(schemes, [{"m": [], "k": []}], "https://x.test"))

    assert auth == {
        "type": "api_key",
        "in": "header",
        "name": "X-Key",
        "scheme": "k",
        "mutual_tls": True,
    }


def test_an_implicit_only_requirement_is_skipped_for_the_next_one():
    schemes = {
        "i": {"type": "oauth2", "flows": {"implicit": {"authorizationUrl": "https://a/x"}}},
        "b": {"type": "http", "scheme": "bearer"},
    }

    assert auth_of(spec(schemes, [{"i": []}, {"b": []}], "https://x.test")) == {
        "type": "bearer",
        "scheme": "b",
    }


@pytest.fixture
def discovery(oauth_server, private_network):
    """The OAuth server's OpenID discovery document, served by a second local server."""
    from tests.tools_app.engine.conftest import LocalServer

    server = LocalServer()
    private_network(server.url)
    server.route(
        "/.well-known/openid-configuration",
        body={
            "issuer": oauth_server.url,
            "authorization_endpoint": f"{oauth_server.url}/authorize",
            "token_endpoint": f"{oauth_server.url}/token",
            "revocation_endpoint": f"{oauth_server.url}/revoke",
        },
    )
    yield f"{server.url}/.well-known/openid-configuration"
    server.stop()


def test_open_id_connect_is_completed_from_its_discovery_document(api, oauth_server, discovery):
    document = spec(
        {"oidc": {"type": "openIdConnect", "openIdConnectUrl": discovery}},
        [{"oidc": ["openid", "reports"]}],
        oauth_server.url,
    )
    picks = [{"key": "GET /api/reports", "name": "list_reports"}]

    response = api.post(IMPORT, {"text": json.dumps(document), "picks": picks}, format="json")

    assert response.status_code == 201, response.json()
    auth = Tool.objects.get(name="list_reports").config["auth"]
    assert auth["type"] == "oauth2_authorization_code"
    assert auth["authorization_url"] == f"{oauth_server.url}/authorize"
    assert auth["token_url"] == f"{oauth_server.url}/token"
    assert auth["revocation_url"] == f"{oauth_server.url}/revoke"
    assert auth["scopes"] == ["openid", "reports"]


def test_an_imported_operation_uses_client_credentials(api, oauth_server, owner):
    oauth_server.clients["importer"] = {"secret": "imp", "redirect_uris": []}
    flows = {
        "clientCredentials": {"tokenUrl": "/token", "scopes": {"reports": "r"}}
    }  # host-relative
    document = spec({"o": {"type": "oauth2", "flows": flows}}, [{"o": []}], oauth_server.url)
    body = {
        "text": json.dumps(document),
        "picks": [{"key": "GET /api/reports", "name": "cc_reports"}],
        "credentials": {"client_id": "importer", "client_secret": "imp"},
    }

    assert api.post(IMPORT, body, format="json").status_code == 201
    run = tool_execute(tool=Tool.objects.get(name="cc_reports"), input={}, user=owner)

    assert run.status == "completed", run.error
    assert run.output["body"]["sub"] == "client:importer"
    assert oauth_server.token_requests[0]["scope"] == "reports"


def test_import_refuses_credentials_that_do_not_fit_with_their_paths(api, oauth_server):
    schemes = {"m": {"type": "mutualTLS"}, "o": {"type": "oauth2", "flows": FLOWS}}
    document = spec(schemes, [{"m": [], "o": []}], oauth_server.url)
    body = {
        "text": json.dumps(document),
        "picks": [{"key": "GET /api/reports", "name": "tls_reports"}],
        "credentials": {"client_id": "x", "client_cert": "not a certificate"},
    }

    response = api.post(IMPORT, body, format="json")

    assert response.status_code == 400
    paths = {e["path"]: e["message"] for e in response.json()["errors"]}
    assert "PEM" in paths["$.credentials.client_cert"]
    assert "client_key" in paths["$.credentials.client_key"]
    assert not Tool.objects.filter(name="tls_reports").exists()
