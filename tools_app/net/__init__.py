"""Every outbound request to a URL a user, a spec or a model chose goes through here.

- `fetch`: one guarded HTTP request with its redirects (tools_app.net.fetch);
- `parse_target` / `resolve_checked`: the guard itself, for clients that connect on their
  own (the MCP and A2A SDKs, pinned to the checked address: tools_app.sources);
- `url_verdict`: the guard's answer for a URL without requesting it (forms, tool page);
- the refused ranges and names are data (tools_app.net.ranges, tools_app.net.names), the
  operator's allow-list is settings.STUDIO_PRIVATE_NETWORKS (tools_app.net.allow).
"""

from __future__ import annotations

from tools_app.net.allow import PrivateNetworks, private_networks
from tools_app.net.check import UrlVerdict, url_verdict
from tools_app.net.errors import BlockedURL, FetchError
from tools_app.net.fetch import FetchResult, PinnedBackend, PinnedTransport, fetch
from tools_app.net.guard import (
    Allow,
    Target,
    address_blocked_reason,
    parse_target,
    resolve_checked,
    special_reason,
)

__all__ = [
    "Allow",
    "BlockedURL",
    "FetchError",
    "FetchResult",
    "PinnedBackend",
    "PinnedTransport",
    "PrivateNetworks",
    "Target",
    "UrlVerdict",
    "address_blocked_reason",
    "fetch",
    "parse_target",
    "private_networks",
    "resolve_checked",
    "special_reason",
    "url_verdict",
]
