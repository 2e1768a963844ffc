"""Fixtures of the auth tests: certificates made for the session, the local OAuth server
(plain HTTP, or HTTPS requiring a client certificate), and HTTP tools that call it."""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.tools_app.auth.pki import Pki, make_pki, server_tls
from tests.tools_app.auth.servers import OAuthServer
from tools_app.crypto import credentials_set
from tools_app.models import Source, Tool


@pytest.fixture(scope="session")
def pki() -> Pki:
    return make_pki()


@pytest.fixture
def oauth_server(private_network) -> Iterator[OAuthServer]:
    server = OAuthServer()
    private_network(server.url)
    yield server
    server.stop()


@pytest.fixture
def mtls_server(private_network, pki) -> Iterator[OAuthServer]:
    """The same server over HTTPS, asking every client for a certificate of the test CA."""
    server = OAuthServer(tls=server_tls(pki, ssl.CERT_REQUIRED))
    private_network(server.url)
    yield server
    server.stop()


@pytest.fixture
def auth_tool(db, owner) -> Callable[..., Tool]:
    """An HTTP tool calling `url` with config.auth `auth` and these credentials."""
    counter = iter(range(1, 10_000))

    def make(url: str, auth: dict[str, Any] | None, credentials: dict[str, Any], **fields):
        fields.setdefault("name", f"auth_tool_{next(counter)}")
        fields.setdefault("owner", owner)
        tool = Tool.objects.create(
            kind="http",
            source=Source.STUDIO,
            input_schema={"type": "object"},
            config={"url": url, **({"auth": auth} if auth else {})},
            timeout_seconds=10,
            **fields,
        )
        if credentials:
            credentials_set(tool, credentials)
        return tool

    return make
