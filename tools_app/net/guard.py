"""The address guard: may a request go to this URL, and to which address?

Two stages, each with its reason when it refuses:
1. `parse_target`, before any lookup: only http and https; no userinfo, whitespace,
   control characters or backslashes (urllib deletes tabs and newlines, browsers read `\\`
   as `/`); the host in canonical form (tools_app.net.names), IPv4 however a resolver
   spells it (decimal, octal, hex, short forms), and the name rules.
2. `resolve_checked`, after the lookup: EVERY address the name has must be outside the
   refused ranges (tools_app.net.ranges), and IPv6 forms that carry an IPv4 address
   (mapped, compatible, NAT64, 6to4, Teredo) are judged by that address. The caller then
   connects to the checked address only.

What lets a request through anyway:
- the operator's allow-list, settings.STUDIO_PRIVATE_NETWORKS (tools_app.net.allow);
- `allow=(ip, port)`, a keyword argument that only Python callers can pass (tests): that
  one address and port, for the request it is given to. Nothing a run, a tool's config or
  a user sends can set it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from tools_app.net.allow import private_networks
from tools_app.net.errors import BlockedURL, FetchError
from tools_app.net.names import host_canonical, name_refusal
from tools_app.net.ranges import IPAddress, special_range

Allow = tuple[str, int]

NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
TEREDO = ipaddress.ip_network("2001::/32")
SIXTOFOUR = ipaddress.ip_network("2002::/16")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_FORBIDDEN_CHARS = re.compile(r"[\x00-\x20\x7f\\]")
# A label that a resolver would read as a number (decimal, octal or hex).
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")


@dataclass
class Target:
    url: str
    scheme: str
    host: str  # canonical name or canonical IP text
    port: int
    is_ip: bool
    allowed_by: str | None = None  # the operator's host:port entry that names this host


def _seam_allows(ip: IPAddress, port: int | None, allow: Allow | None) -> bool:
    if allow is None or port != allow[1]:
        return False
    allowed = ipaddress.ip_address(allow[0])
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return allowed in (ip, mapped)


def address_blocked_reason(
    ip: IPAddress, *, port: int | None = None, allow: Allow | None = None
) -> str | None:
    """Why `ip` (on `port`) may not be contacted, or None when it may."""
    if _seam_allows(ip, port, allow) or private_networks().entry_for_address(ip, port):
        return None
    return special_reason(ip)


def special_reason(ip: IPAddress) -> str | None:
    """Why `ip` is never a public web host (the guard's own tables), or None."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            return "IPv6 zone ids are not allowed"
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            reason = special_reason(embedded)
            if reason:
                return f"{reason} (embedded in the IPv6 address {ip})"
            if ip.ipv4_mapped is None:
                # Translated forms (NAT64, 6to4, Teredo, compatible) reach IPv4 hosts through
                # relays the guard cannot judge; a public site has a native address.
                return f"the IPv6 address {ip} embeds an IPv4 address"
            return None
    found = special_range(ip)
    return f"{ip} is in a special-purpose range: {found.describe()}" if found else None


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


def parse_target(url: str) -> Target:
    """Check the URL's shape, host spelling and name; raise BlockedURL with the reason."""
    if not isinstance(url, str) or not url:
        raise BlockedURL("The URL is empty.")
    if _FORBIDDEN_CHARS.search(url):
        raise BlockedURL("The URL contains whitespace, control characters or a backslash.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise BlockedURL(f"The URL is malformed: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise BlockedURL(f"Only http and https URLs are allowed, not {scheme or 'none'!r}.")
    if "@" in parts.netloc:
        raise BlockedURL("URLs with a user name or password (user@host) are not allowed.")
    port = port or (443 if scheme == "https" else 80)
    raw_host = parts.hostname or ""
    if not raw_host:
        raise BlockedURL("The URL has no host.")
    if parts.netloc.split(":")[0].startswith("[") or ":" in raw_host:
        return Target(url, scheme, str(_parse_ipv6(raw_host)), port, True)
    host = host_canonical(raw_host)
    ipv4 = _parse_ipv4_forms(host)
    if ipv4 is not None:
        return Target(url, scheme, str(ipv4), port, True)
    entry = private_networks().entry_for_name(host, port)
    if entry is None:
        reason = name_refusal(host)
        if reason:
            raise BlockedURL(f"Refused: {reason}.")
    return Target(url, scheme, host, port, False, allowed_by=entry)


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
    if not _NUMERIC_LABEL.match(host.split(".")[-1]):
        return None
    try:
        packed = socket.inet_aton(host)
    except OSError:
        raise BlockedURL(f"{host!r} is not a valid IPv4 address.") from None
    return ipaddress.IPv4Address(packed)


def addresses_checked(target: Target, addresses: list[str], *, allow: Allow | None) -> str:
    """The address to connect to; raises BlockedURL unless every address passes."""
    checked = []
    for text in addresses:
        ip = ipaddress.ip_address(text.split("%")[0])
        reason = None
        if not target.allowed_by:
            reason = address_blocked_reason(ip, port=target.port, allow=allow)
        if reason and target.is_ip:
            raise BlockedURL(f"Refused: {reason}.")
        if reason:
            raise BlockedURL(f"Refused: {target.host} resolves to {ip}; {reason}.")
        checked.append(str(ip))
    if not checked:
        raise FetchError(f"{target.host} has no address.")
    return checked[0]


async def resolve_checked(target: Target, *, allow: Allow | None = None) -> str:
    """Resolve the target once (no lookup for an address) and check every address."""
    if target.is_ip:
        return addresses_checked(target, [target.host], allow=allow)
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchError(f"Could not resolve {target.host}: {exc.strerror}") from None
    return addresses_checked(target, [str(info[4][0]) for info in infos], allow=allow)


def resolve_checked_sync(target: Target) -> str:
    """`resolve_checked` for synchronous callers (the URL check of the forms)."""
    if target.is_ip:
        return addresses_checked(target, [target.host], allow=None)
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchError(f"Could not resolve {target.host}: {exc.strerror}") from None
    return addresses_checked(target, [str(info[4][0]) for info in infos], allow=None)
