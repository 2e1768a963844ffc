"""Outbound HTTP to user-given URLs: the address guard of web_fetch (DESIGN.md section 8).

Every request to a URL a user or a model chose goes through `fetch`:
- only http and https; no userinfo, no whitespace or control characters, no backslashes
  (urllib silently deletes tabs and newlines, browsers treat `\\` as `/`);
- the host is normalised the way resolvers read it: IPv4 in decimal, octal, hex or short
  forms (what `inet_aton` and glibc `getaddrinfo` accept), trailing dots, IDNA names;
- localhost names and every non-public address are refused: loopback, private,
  link-local (cloud metadata), shared (100.64/10), reserved, multicast, unspecified,
  and IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo);
- the name is resolved once, EVERY address is checked, and the connection goes to the
  checked address (`_PinnedBackend`: no second lookup, so DNS rebinding cannot swap it);
  TLS still verifies the certificate against the host name (SNI and Host stay the name);
- every redirect hop is checked the same way, at most `max_redirects` of them, all
  within one deadline.

`settings.STUDIO_ALLOW_LOOPBACK_FETCH` (tests only) lets loopback addresses through, so
tests can run against servers on 127.0.0.1; everything else stays refused.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import ssl
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx
from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

LOCALHOST_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}
SHARED = ipaddress.ip_network("100.64.0.0/10")
NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
TEREDO = ipaddress.ip_network("2001::/32")
SIXTOFOUR = ipaddress.ip_network("2002::/16")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
REDIRECT_STATUSES = {301, 302, 303, 307, 308}
_FORBIDDEN_CHARS = re.compile(r"[\x00-\x20\x7f\\]")
# A label that a resolver would read as a number (decimal, octal or hex).
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")


class BlockedURL(ValueError):
    """The URL or one of its addresses is not allowed; the message says why."""


class FetchError(Exception):
    """The request could not complete (connection, TLS, deadline, redirects)."""


@dataclass
class Target:
    url: str
    scheme: str
    host: str  # normalised name or canonical IP text
    port: int
    is_ip: bool


def address_blocked_reason(ip: IPAddress, *, allow_loopback: bool = False) -> str | None:
    """Why `ip` may not be contacted, or None when it is a public address."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            return "IPv6 zone ids are not allowed"
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            reason = address_blocked_reason(embedded, allow_loopback=allow_loopback)
            if reason:
                return f"{reason} (embedded in the IPv6 address {ip})"
            if ip in TEREDO or ip.ipv4_mapped is None:
                # Translated forms (NAT64, 6to4, Teredo, compatible) reach IPv4 hosts through
                # relays we cannot reason about; a public site has a native address.
                return f"IPv6 address {ip} embeds an IPv4 address"
            return None
    if ip.is_loopback:
        return None if allow_loopback else f"{ip} is a loopback address"
    checks = [
        (ip.is_unspecified, "an unspecified address"),
        (ip.is_link_local, "a link-local address"),
        (ip.version == 4 and ip in SHARED, "a shared (carrier-grade NAT) address"),
        (ip.is_multicast, "a multicast address"),
        (ip.is_private, "a private address"),
        (ip.is_reserved, "a reserved address"),
        (not ip.is_global, "not a public address"),
    ]
    for hit, what in checks:
        if hit:
            return f"{ip} is {what}"
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in TEREDO:
        return ip.teredo[1] if ip.teredo else ipaddress.IPv4Address(0)
    if ip in SIXTOFOUR:
        return ip.sixtofour
    if any(ip in net for net in NAT64) or (ip in IPV4_COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _loopback_allowed() -> bool:
    return bool(getattr(settings, "STUDIO_ALLOW_LOOPBACK_FETCH", False))


def parse_target(url: str) -> Target:
    """Check the URL's shape and host spelling; raise BlockedURL with the reason."""
    if not isinstance(url, str) or not url:
        raise BlockedURL("The URL is empty.")
    if _FORBIDDEN_CHARS.search(url):
        raise BlockedURL("The URL contains whitespace, control characters or a backslash.")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - urlsplit checks lazily; make it check now
    except ValueError as exc:
        raise BlockedURL(f"The URL is malformed: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise BlockedURL(f"Only http and https URLs are allowed, not {scheme or 'none'!r}.")
    if "@" in parts.netloc:
        raise BlockedURL("URLs with a user name or password (user@host) are not allowed.")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError as exc:
        raise BlockedURL(f"Invalid port: {exc}") from None
    raw_host = parts.hostname or ""
    if not raw_host:
        raise BlockedURL("The URL has no host.")
    if parts.netloc.split(":")[0].startswith("[") or ":" in raw_host:
        ip = _parse_ipv6(raw_host)
        return Target(url, scheme, str(ip), port, True)
    try:
        # IDNA first: it maps full-width digits and ideographic dots to ASCII, which a
        # resolver would then read as an IPv4 address.
        host = raw_host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise BlockedURL(f"The host {raw_host!r} is not a valid domain name.") from None
    host = host.rstrip(".")
    if not host or ".." in host:
        raise BlockedURL("The URL's host is malformed.")
    ipv4 = _parse_ipv4_forms(host)
    if ipv4 is not None:
        return Target(url, scheme, str(ipv4), port, True)
    if host in LOCALHOST_NAMES or host.endswith(".localhost"):
        if not _loopback_allowed():
            raise BlockedURL(f"{host} is a localhost name.")
    return Target(url, scheme, host, port, False)


def _parse_ipv6(text: str) -> ipaddress.IPv6Address:
    if "%" in text:
        raise BlockedURL("IPv6 zone ids are not allowed.")
    try:
        return ipaddress.IPv6Address(text)
    except ValueError:
        raise BlockedURL(f"{text!r} is not a valid IPv6 address.") from None


def _parse_ipv4_forms(host: str) -> ipaddress.IPv4Address | None:
    """An IPv4 address however a resolver would read it, or None for a domain name.

    A host whose last label is numeric is an address (WHATWG URL rules); if inet_aton
    cannot read it either, it is refused rather than guessed at.
    """
    labels = host.split(".")
    if not _NUMERIC_LABEL.match(labels[-1]):
        return None
    try:
        packed = socket.inet_aton(host)
    except OSError:
        raise BlockedURL(f"{host!r} is not a valid IPv4 address.") from None
    return ipaddress.IPv4Address(packed)


def check_ip(ip: IPAddress) -> None:
    reason = address_blocked_reason(ip, allow_loopback=_loopback_allowed())
    if reason:
        raise BlockedURL(f"Refused: {reason}.")


async def resolve_checked(target: Target) -> str:
    """The address to connect to: every address the host has must pass the guard."""
    if target.is_ip:
        ip = ipaddress.ip_address(target.host)
        check_ip(ip)
        return str(ip)
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchError(f"Could not resolve {target.host}: {exc.strerror}") from None
    addresses = []
    for info in infos:
        ip = ipaddress.ip_address(info[4][0].split("%")[0])
        reason = address_blocked_reason(ip, allow_loopback=_loopback_allowed())
        if reason:
            raise BlockedURL(f"Refused: {target.host} resolves to {ip}; {reason}.")
        addresses.append(str(ip))
    if not addresses:
        raise FetchError(f"{target.host} has no address.")
    return addresses[0]


class _PinnedBackend(httpcore.AsyncNetworkBackend):
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


class _PinnedTransport(httpx.AsyncHTTPTransport):
    def __init__(self, backend: _PinnedBackend) -> None:
        super().__init__(trust_env=False)
        # httpx does not expose the network backend; its pool is built the same way, with
        # the certificate checked against the URL's host name (SNI), not the pinned IP.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl.create_default_context(), network_backend=backend, max_connections=4
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
) -> FetchResult:
    """One guarded request, following redirects; raises BlockedURL or FetchError."""
    try:
        return await asyncio.wait_for(
            _fetch(url, method, dict(headers or {}), content, max_redirects, max_bytes),
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
) -> FetchResult:
    backend = _PinnedBackend()
    redirects: list[str] = []
    async with httpx.AsyncClient(
        transport=_PinnedTransport(backend),
        follow_redirects=False,
        trust_env=False,
        timeout=None,  # noqa: S113 - one deadline
    ) as client:
        while True:
            target = parse_target(url)
            backend.pins[(target.host, target.port)] = await resolve_checked(target)
            # Send to the host as the guard read it (canonical IP, punycode, no trailing
            # dot), so the connection, Host and SNI all name what was checked.
            checked_url = httpx.URL(url).copy_with(host=target.host)
            request = client.build_request(method, checked_url, headers=headers, content=content)
            try:
                response = await client.send(request, stream=True)
            except httpx.HTTPError as exc:
                raise FetchError(f"Request to {target.host} failed: {exc}") from None
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
            except httpx.HTTPError as exc:
                raise FetchError(f"Reading the response failed: {exc}") from None
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
