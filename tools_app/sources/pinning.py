"""The MCP SDK's HTTP client (`httpx2`, on `httpcore2`) pinned to addresses checked by the
web_fetch address guard, the way tools_app.net pins its own httpx client: the host is
resolved and checked once by tools_app.net, and the connection goes to that address
with no second lookup (a rebinding DNS name cannot swap in a private address).
TLS still verifies the certificate against the host name."""

from __future__ import annotations

import ssl
from typing import Any

import httpcore2
import httpx2

from tools_app.net import parse_target, resolve_checked
from tools_app.net.fetch import default_ssl_context


class PinnedBackend(httpcore2.AsyncNetworkBackend):
    """Connects only to (host, port) pairs the guard checked, at the checked address."""

    def __init__(self, pins: dict[tuple[str, int], str]) -> None:
        self.pins = pins
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> Any:
        ip = self.pins.get((host.lower().strip("[]"), port))
        if ip is None:
            raise httpcore2.ConnectError(f"{host}:{port} was not checked by the address guard")
        return await self._inner.connect_tcp(
            ip, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
        raise httpcore2.ConnectError("Unix sockets are not allowed")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


async def checked_pins(url: str) -> dict[tuple[str, int], str]:
    """Raises tools_app.net.BlockedURL / FetchError when the URL may not be reached."""
    target = parse_target(url)
    return {(target.host, target.port): await resolve_checked(target)}


def pinned_httpx2_transport(
    pins: dict[tuple[str, int], str], ssl_context: ssl.SSLContext | None = None
) -> httpx2.AsyncHTTPTransport:
    """`ssl_context`: a private CA or a client certificate (tools_app.auth.pem)."""
    context = ssl_context or default_ssl_context()
    transport = httpx2.AsyncHTTPTransport(verify=context, trust_env=False)
    # httpx2 does not expose the network backend; its pool is built the same way.
    transport._pool = httpcore2.AsyncConnectionPool(
        ssl_context=context,
        network_backend=PinnedBackend(pins),
    )
    return transport


def pinned_httpx2_client(pins: dict[tuple[str, int], str], **kwargs: Any) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(
        transport=pinned_httpx2_transport(pins), trust_env=False, follow_redirects=False, **kwargs
    )
