"""The address ranges the outbound guard refuses, written out as data.

The first two tables transcribe the IANA registries, entry by entry, with the registry's
own names and references, as the registries read in January 2025:
- "IANA IPv4 Special-Purpose Address Registry" (iana-ipv4-special-registry, RFC 6890);
- "IANA IPv6 Special-Purpose Address Registry" (iana-ipv6-special-registry, RFC 6890),
  including 3fff::/20 (RFC 9637) and 5f00::/16 (RFC 9602).
Every entry is refused, also the few the registries mark "globally reachable" (anycast
addresses of PCP, TURN, DNS-SD, AS112 and AMT, and the NAT64 prefix): none of them serves
web content, and a request to one is never what a tool means.

`NEVER_PUBLIC` adds what those registries leave out but is never a public web host:
multicast (its own registries), deprecated forms (IPv4-compatible IPv6, site-local
fec0::/10, the returned 6bone block), and the IPv6 space outside Global Unicast 2000::/3
("Reserved by IETF" in the IANA IPv6 Address Space registry).

`PLATFORM_ADDRESSES` are public-looking addresses that reach a cloud platform's own
services from inside it.

The guard reads these tables only; it never asks Python's `ipaddress` whether an address
is "global" or "private" (those answers change between Python releases).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class SpecialRange:
    network: IPNetwork
    name: str
    reference: str

    def describe(self) -> str:
        return f"{self.name} ({self.network}, {self.reference})"


def _table(rows: list[tuple[str, str, str]]) -> tuple[SpecialRange, ...]:
    return tuple(SpecialRange(ipaddress.ip_network(cidr), name, ref) for cidr, name, ref in rows)


IPV4_SPECIAL = _table(
    [
        ("0.0.0.0/8", '"This network"', "RFC 791, section 3.2"),
        ("0.0.0.0/32", '"This host on this network"', "RFC 1122, section 3.2.1.3"),
        ("10.0.0.0/8", "Private-Use", "RFC 1918"),
        ("100.64.0.0/10", "Shared Address Space", "RFC 6598"),
        ("127.0.0.0/8", "Loopback", "RFC 1122, section 3.2.1.3"),
        ("169.254.0.0/16", "Link Local", "RFC 3927"),
        ("172.16.0.0/12", "Private-Use", "RFC 1918"),
        ("192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890, section 2.1"),
        ("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335"),
        ("192.0.0.8/32", "IPv4 dummy address", "RFC 7600"),
        ("192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723"),
        ("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155"),
        ("192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050, section 2.2"),
        ("192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050, section 2.2"),
        ("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737"),
        ("192.31.196.0/24", "AS112-v4", "RFC 7535"),
        ("192.52.193.0/24", "AMT", "RFC 7450"),
        ("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526"),
        ("192.168.0.0/16", "Private-Use", "RFC 1918"),
        ("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534"),
        ("198.18.0.0/15", "Benchmarking", "RFC 2544"),
        ("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737"),
        ("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737"),
        ("240.0.0.0/4", "Reserved", "RFC 1112, section 4"),
        ("255.255.255.255/32", "Limited Broadcast", "RFC 8190, RFC 919, section 7"),
    ]
)

IPV6_SPECIAL = _table(
    [
        ("::1/128", "Loopback Address", "RFC 4291"),
        ("::/128", "Unspecified Address", "RFC 4291"),
        ("::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291"),
        ("64:ff9b::/96", "IPv4-IPv6 Translat.", "RFC 6052"),
        ("64:ff9b:1::/48", "IPv4-IPv6 Translat.", "RFC 8215"),
        ("100::/64", "Discard-Only Address Block", "RFC 6666"),
        ("2001::/23", "IETF Protocol Assignments", "RFC 2928"),
        ("2001::/32", "TEREDO", "RFC 4380, RFC 8190"),
        ("2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723"),
        ("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155"),
        ("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665"),
        ("2001:2::/48", "Benchmarking", "RFC 5180, RFC Errata 1752"),
        ("2001:3::/32", "AMT", "RFC 7450"),
        ("2001:4:112::/48", "AS112-v6", "RFC 7535"),
        ("2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843"),
        ("2001:20::/28", "ORCHIDv2", "RFC 7343"),
        ("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374"),
        ("2001:db8::/32", "Documentation", "RFC 3849"),
        ("2002::/16", "6to4", "RFC 3056"),
        ("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534"),
        ("3fff::/20", "Documentation", "RFC 9637"),
        ("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602"),
        ("fc00::/7", "Unique-Local", "RFC 4193, RFC 8190"),
        ("fe80::/10", "Link-Local Unicast", "RFC 4291"),
    ]
)

NEVER_PUBLIC = _table(
    [
        ("224.0.0.0/4", "Multicast", "RFC 5771"),
        ("ff00::/8", "Multicast", "RFC 4291, section 2.7"),
        ("::/96", "Deprecated (IPv4-compatible IPv6 address)", "RFC 4291, section 2.5.5.1"),
        ("fec0::/10", "Deprecated (site-local unicast)", "RFC 3879"),
        ("3ffe::/16", "Returned (6bone testing addresses)", "RFC 3701"),
        ("::/3", "Reserved by IETF (outside Global Unicast 2000::/3)", "RFC 4291"),
        ("4000::/2", "Reserved by IETF (outside Global Unicast 2000::/3)", "RFC 4291"),
        ("8000::/1", "Reserved by IETF (outside Global Unicast 2000::/3)", "RFC 4291"),
    ]
)

PLATFORM_ADDRESSES = _table(
    [
        ("168.63.129.16/32", "Azure platform address (WireServer)", "Azure virtual networks"),
    ]
)

ALL_RANGES = IPV4_SPECIAL + IPV6_SPECIAL + NEVER_PUBLIC + PLATFORM_ADDRESSES


def special_range(ip: IPAddress) -> SpecialRange | None:
    """The most specific refused range that holds `ip`, or None."""
    best: SpecialRange | None = None
    for entry in ALL_RANGES:
        if entry.network.version != ip.version or ip not in entry.network:
            continue
        if best is None or entry.network.prefixlen > best.network.prefixlen:
            best = entry
    return best
