"""Guarded HTTP requests: httpx pinned to the addresses the guard checked.

`fetch` checks the URL (tools_app.net.guard), resolves the name once, and connects to the
checked address (`PinnedBackend`: the connection never resolves the name again, so a
rebinding DNS answer cannot swap in another address). TLS still verifies the certificate
against the host name (SNI and Host stay the name). Every redirect hop is checked the
same way, at most `max_redirects` of them, all within one deadline.
"""

from __future__ import annotations

import asyncio
import functools
import re
import ssl
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx

from tools_app.net.errors import FetchError
from tools_app.net.guard import Allow, parse_target, resolve_checked

REDIRECT_STATUSES = {301, 302, 303, 307, 308}


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects only to addresses the guard checked; never resolves a name itself."""

    def __init__(self) -> None:
        self.pins: dict[tuple[str, int], str] = {}
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        ip = self.pins.get((host.lower().strip("[]").rstrip("."), port))
        if ip is None:
            raise httpcore.ConnectError(f"{host}:{port} was not checked by the address guard")
        return await self._inner.connect_tcp(
            ip, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("Unix sockets are not allowed")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """The system's CAs, loaded once per process: building a default context reads the
    whole CA store (tens of milliseconds), which every request used to pay, twice."""
    return ssl.create_default_context()


class PinnedTransport(httpx.AsyncHTTPTransport):
    def __init__(self, backend: PinnedBackend, ssl_context: ssl.SSLContext | None = None) -> None:
        # `ssl_context`: a tool's own CA bundle or client certificate (tools_app.auth.pem).
        context = ssl_context or default_ssl_context()
        super().__init__(verify=context, trust_env=False)
        # httpx does not expose the network backend; its pool is built the same way, with
        # the certificate checked against the URL's host name (SNI), not the pinned IP.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=context,
            network_backend=backend,
            max_connections=4,
        )


@dataclass
class FetchResult:
    status: int
    reason: str
    headers: dict[str, str]
    url: str
    body: bytes
    truncated: bool
    redirects: list[str] = field(default_factory=list)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    def text(self, max_chars: int | None = None) -> tuple[str, bool]:
        charset = "utf-8"
        match = re.search(r"charset=([\w-]+)", self.content_type, re.IGNORECASE)
        if match:
            charset = match.group(1)
        try:
            text = self.body.decode(charset, errors="replace")
        except LookupError:
            text = self.body.decode("utf-8", errors="replace")
        truncated = self.truncated
        if max_chars is not None and len(text) > max_chars:
            text, truncated = text[:max_chars], True
        return text, truncated


async def fetch(
    url: str,
    *,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    content: bytes | None = None,
    deadline_seconds: float = 15.0,
    max_redirects: int = 5,
    max_bytes: int = 10_000_000,
    allow: Allow | None = None,
    ssl_context: ssl.SSLContext | None = None,
) -> FetchResult:
    """One guarded request, following redirects; raises BlockedURL or FetchError.

    `ssl_context` replaces the default TLS context (a private CA, a client certificate).

    `allow=(ip, port)` lets that one address and port through the guard for this call,
    on any hop (tests reach their local servers with it); a redirect to any other address
    or port is judged as usual.
    """
    try:
        return await asyncio.wait_for(
            _fetch(
                url,
                method,
                dict(headers or {}),
                content,
                max_redirects,
                max_bytes,
                allow,
                ssl_context,
            ),
            timeout=deadline_seconds,
        )
    except TimeoutError:
        raise FetchError(f"No complete response within {deadline_seconds:g} s.") from None


async def _fetch(
    url: str,
    method: str,
    headers: dict[str, str],
    content: bytes | None,
    max_redirects: int,
    max_bytes: int,
    allow: Allow | None,
    ssl_context: ssl.SSLContext | None,
) -> FetchResult:
    backend = PinnedBackend()
    redirects: list[str] = []
    async with httpx.AsyncClient(
        transport=PinnedTransport(backend, ssl_context),
        follow_redirects=False,
        trust_env=False,
        timeout=None,  # noqa: S113 - one deadline
    ) as client:
        while True:
            target = parse_target(url)
            backend.pins[(target.host, target.port)] = await resolve_checked(target, allow=allow)
            # Send to the host as the guard read it (canonical IP, punycode, no trailing
            # dot), so the connection, Host and SNI all name what was checked.
            checked_url = httpx.URL(url).copy_with(host=target.host)
            request = client.build_request(method, checked_url, headers=headers, content=content)
            try:
                response = await client.send(request, stream=True)
            except (httpx.HTTPError, ssl.SSLError) as exc:
                message = f"Request to {target.host} failed: {exc}{_tls_hint(exc)}"
                raise FetchError(message) from None
            try:
                location = response.headers.get("location")
                if response.status_code in REDIRECT_STATUSES and location:
                    if len(redirects) >= max_redirects:
                        raise FetchError(f"Too many redirects (more than {max_redirects}).")
                    next_url = urljoin(url, location)
                    redirects.append(next_url)
                    method, content, headers = _redirected_request(
                        response.status_code, method, content, headers, url, next_url
                    )
                    url = next_url
                    continue
                body, truncated = await _read_bounded(response, max_bytes)
            except (httpx.HTTPError, ssl.SSLError) as exc:
                raise FetchError(f"Reading the response failed: {exc}{_tls_hint(exc)}") from None
            finally:
                await response.aclose()
            return FetchResult(
                status=response.status_code,
                reason=response.reason_phrase,
                headers={k.lower(): v for k, v in response.headers.items()},
                url=url,
                body=body,
                truncated=truncated,
                redirects=redirects,
            )


def _tls_hint(exc: Exception) -> str:
    """What to do about a TLS failure, in the tool's terms."""
    text = str(exc)
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return (
            " (the server's certificate is not trusted: for a private CA, set the tool's "
            "ca_bundle credential)"
        )
    if "CERTIFICATE_REQUIRED" in text.upper() or "HANDSHAKE_FAILURE" in text.upper():
        return (
            " (the server asks for a client certificate: set the tool's client_cert and "
            "client_key credentials)"
        )
    return ""


def _redirected_request(
    status: int, method: str, content: bytes | None, headers: dict[str, str], old: str, new: str
) -> tuple[str, bytes | None, dict[str, str]]:
    if status == 303 or (status in (301, 302) and method == "POST"):
        method, content = ("HEAD" if method == "HEAD" else "GET"), None
        headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
    old_parts, new_parts = urlsplit(old), urlsplit(new)
    if (old_parts.scheme, old_parts.netloc) != (new_parts.scheme, new_parts.netloc):
        # Never carry credentials to another origin.
        secret = {"authorization", "cookie", "proxy-authorization"}
        headers = {k: v for k, v in headers.items() if k.lower() not in secret}
    return method, content, headers


async def _read_bounded(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False
