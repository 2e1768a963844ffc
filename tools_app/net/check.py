"""A verdict on a URL without requesting it: what the forms and the tool page show.

The same guard as every request (name rules, the literal address, or the addresses the
name resolves to now), and no connection. A name that does not resolve, or a host that
comes from a tool's input (`https://{host}/`), cannot be judged in advance: every call is
still checked when it is made.
"""

from __future__ import annotations

import ipaddress
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

from tools_app.net.allow import private_networks
from tools_app.net.errors import BlockedURL, FetchError
from tools_app.net.guard import parse_target, resolve_checked_sync, special_reason

ALLOWED, REFUSED, UNKNOWN = "allowed", "refused", "unknown"


@dataclass(frozen=True)
class UrlVerdict:
    url: str
    status: str  # ALLOWED | REFUSED | UNKNOWN
    message: str
    reason: str = ""  # why it is refused, or why it cannot be judged
    private_network: str | None = None  # the operator's entry that allows a private address

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def url_verdict(url: str) -> UrlVerdict:
    if "{" in _netloc(url):
        reason = "the host comes from the tool's input"
        return UrlVerdict(url, UNKNOWN, f"Not checked now: {reason}; each call is checked.", reason)
    try:
        target = parse_target(url)
        if target.allowed_by:
            return _private(url, target.allowed_by)
        address = resolve_checked_sync(target)
    except BlockedURL as exc:
        reason = str(exc).removeprefix("Refused: ")
        return UrlVerdict(url, REFUSED, f"Calls to this URL will be refused: {reason}", reason)
    except FetchError as exc:
        reason = str(exc)
        return UrlVerdict(url, UNKNOWN, f"Not checked now: {reason}; each call is checked.", reason)
    ip = ipaddress.ip_address(address)
    if special_reason(ip):
        entry = private_networks().entry_for_address(ip, target.port)
        if entry:
            return _private(url, entry)
    return UrlVerdict(url, ALLOWED, "Calls to this URL are allowed.")


def _private(url: str, entry: str) -> UrlVerdict:
    message = f"Private network access: allowed by the operator ({entry})."
    return UrlVerdict(url, ALLOWED, message, private_network=entry)


def _netloc(url: str) -> str:
    try:
        return urlsplit(url).netloc
    except ValueError:
        return ""
