"""Fixtures of the auth tests: certificates made for the session, the local OAuth server
(plain HTTP, or HTTPS requiring a client certificate), and HTTP tools that call it."""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.tools_app.auth.pki import Pki, make_pki
from tests.tools_app.auth.servers import OAuthServer
from tools_app.crypto import credentials_set
from tools_app.models import Source, Tool


@pytest.fixture(scope="session")
def pki() -> Pki:
    return make_pki()


def server_tls(pki: Pki, *, require_client_cert: bool) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory() as folder:
        cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
        with open(cert, "w") as handle:
            handle.write(pki.server.cert)
        with open(key, "w") as handle:
            handle.write(pki.server.key)
        context.load_cert_chain(cert, key)
    if require_client_cert:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cadata=pki.ca.cert)
    return context


@pytest.fixture
def oauth_server(private_network) -> Iterator[OAuthServer]:
    server = OAuthServer()
    private_network(server.url)
    yield server
    server.stop()


@pytest.fixture
def mtls_server(private_network, pki) -> Iterator[OAuthServer]:
    """The same server over HTTPS, asking every client for a certificate of the test CA."""
    server = OAuthServer(tls=server_tls(pki, require_client_cert=True))
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
