"""The operator's allow-list of private networks (settings.STUDIO_PRIVATE_NETWORKS).

Entries, comma-separated in the environment:
- a CIDR or a single address (`10.1.0.0/16`, `fd00:1::/64`, `10.2.3.4`): every port of
  those addresses, whether a URL names them literally or a name resolves to them;
- `host:port` (`127.0.0.1:8123`, `[fd00::5]:443`, `ollama:11434`): that one port only.
  An address entry allows the address; a name entry lets that exact name through the
  name rules (a single-label compose service, a `.internal` name) and allows whatever
  addresses it resolves to, on that port.

A malformed entry raises ImproperlyConfigured naming it (at start-up through the system
check of tools_app.checks, and at the first outbound request otherwise).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from tools_app.net.errors import BlockedURL
from tools_app.net.names import host_canonical
from tools_app.net.ranges import IPAddress, IPNetwork


@dataclass(frozen=True)
class PrivateNetworks:
    networks: tuple[tuple[IPNetwork, str], ...] = ()
    # (canonical name or address text, port) -> the entry as the operator wrote it
    endpoints: dict[tuple[str, int], str] = field(default_factory=dict)

    def entry_for_address(self, ip: IPAddress, port: int | None) -> str | None:
        """The entry that allows `ip` (on `port`), or None."""
        candidates = [ip]
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            candidates.append(ip.ipv4_mapped)
        for address in candidates:
            entry = self.endpoints.get((str(address), port)) if port is not None else None
            if entry:
                return entry
            for network, text in self.networks:
                if address.version == network.version and address in network:
                    return text
        return None

    def entry_for_name(self, host: str, port: int) -> str | None:
        return self.endpoints.get((host, port))


def _port(text: str, entry: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ImproperlyConfigured(
            f"STUDIO_PRIVATE_NETWORKS: {entry!r} has no valid port (1-65535) after the colon."
        )
    return int(text)


def _parse(entries: tuple[str, ...]) -> PrivateNetworks:
    networks: list[tuple[IPNetwork, str]] = []
    endpoints: dict[tuple[str, int], str] = {}
    for entry in entries:
        if entry.startswith("["):
            address, _, port = entry[1:].partition("]:")
            try:
                ip = ipaddress.IPv6Address(address)
            except ValueError:
                raise ImproperlyConfigured(
                    f"STUDIO_PRIVATE_NETWORKS: {entry!r} is not [IPv6 address]:port."
                ) from None
            endpoints[(str(ip), _port(port, entry))] = entry
        elif "/" in entry or entry.count(":") != 1:
            try:
                networks.append((ipaddress.ip_network(entry), entry))
            except ValueError as exc:
                raise ImproperlyConfigured(
                    f"STUDIO_PRIVATE_NETWORKS: {entry!r} is neither a CIDR, an address nor "
                    f"host:port ({exc})."
                ) from None
        else:
            host, _, port = entry.partition(":")
            try:
                key = str(ipaddress.IPv4Address(host))
            except ValueError:
                try:
                    key = host_canonical(host)
                except BlockedURL as exc:
                    raise ImproperlyConfigured(f"STUDIO_PRIVATE_NETWORKS: {exc}") from None
            endpoints[(key, _port(port, entry))] = entry
    return PrivateNetworks(tuple(networks), endpoints)


@lru_cache(maxsize=8)
def _parsed(entries: tuple[str, ...]) -> PrivateNetworks:
    return _parse(entries)


def private_networks() -> PrivateNetworks:
    """The allow-list as the settings hold it now (parsed once per distinct value)."""
    return _parsed(tuple(settings.STUDIO_PRIVATE_NETWORKS))
