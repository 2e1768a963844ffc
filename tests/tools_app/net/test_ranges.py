"""The guard's own tables of special-purpose ranges: every IANA registry entry (and the
ranges outside them that are never public) is refused at its first, last and one inner
address; the neighbours just outside a block are public where the table says so."""

from __future__ import annotations

import ipaddress

import pytest

from tools_app import net
from tools_app.net.ranges import ALL_RANGES

# (block, name as the registry writes it, one address inside, public neighbours?)
# The last column says whether the addresses just below and just above the block are public
# (True), or belong to another special block (False), per side.
IPV4 = [
    ("0.0.0.0/8", '"This network"', "0.1.2.3", (False, True)),
    ("0.0.0.0/32", '"This host on this network"', "0.0.0.0", (False, False)),
    ("10.0.0.0/8", "Private-Use", "10.20.30.40", (True, True)),
    ("100.64.0.0/10", "Shared Address Space", "100.100.100.200", (True, True)),
    ("127.0.0.0/8", "Loopback", "127.1.2.3", (True, True)),
    ("169.254.0.0/16", "Link Local", "169.254.169.254", (True, True)),
    ("172.16.0.0/12", "Private-Use", "172.20.1.1", (True, True)),
    ("192.0.0.0/24", "IETF Protocol Assignments", "192.0.0.100", (True, True)),
    ("192.0.0.0/29", "IPv4 Service Continuity Prefix", "192.0.0.3", (True, False)),
    ("192.0.0.8/32", "IPv4 dummy address", "192.0.0.8", (False, False)),
    ("192.0.0.9/32", "Port Control Protocol Anycast", "192.0.0.9", (False, False)),
    ("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "192.0.0.10", (False, False)),
    ("192.0.0.170/32", "NAT64/DNS64 Discovery", "192.0.0.170", (False, False)),
    ("192.0.0.171/32", "NAT64/DNS64 Discovery", "192.0.0.171", (False, False)),
    ("192.0.2.0/24", "Documentation (TEST-NET-1)", "192.0.2.55", (True, True)),
    ("192.31.196.0/24", "AS112-v4", "192.31.196.1", (True, True)),
    ("192.52.193.0/24", "AMT", "192.52.193.7", (True, True)),
    ("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "192.88.99.1", (True, True)),
    ("192.168.0.0/16", "Private-Use", "192.168.1.1", (True, True)),
    ("192.175.48.0/24", "Direct Delegation AS112 Service", "192.175.48.6", (True, True)),
    ("198.18.0.0/15", "Benchmarking", "198.19.1.1", (True, True)),
    ("198.51.100.0/24", "Documentation (TEST-NET-2)", "198.51.100.7", (True, True)),
    ("203.0.113.0/24", "Documentation (TEST-NET-3)", "203.0.113.9", (True, True)),
    ("240.0.0.0/4", "Reserved", "250.1.2.3", (False, False)),
    ("255.255.255.255/32", "Limited Broadcast", "255.255.255.255", (False, False)),
    ("224.0.0.0/4", "Multicast", "239.1.2.3", (True, False)),
    ("168.63.129.16/32", "Azure platform address (WireServer)", "168.63.129.16", (True, True)),
]
IPV6 = [
    ("::1/128", "Loopback Address", "::1", (False, False)),
    ("::/128", "Unspecified Address", "::", (False, False)),
    ("::ffff:0:0/96", "IPv4-mapped Address", "::ffff:10.1.2.3", (False, False)),
    ("64:ff9b::/96", "IPv4-IPv6 Translat.", "64:ff9b::808:808", (False, False)),
    ("64:ff9b:1::/48", "IPv4-IPv6 Translat.", "64:ff9b:1::1", (False, False)),
    ("100::/64", "Discard-Only Address Block", "100::1", (False, False)),
    ("2001::/23", "IETF Protocol Assignments", "2001:100::1", (True, True)),
    ("2001::/32", "TEREDO", "2001:0:4136:e378:8000:63bf:3fff:fdd2", (True, False)),
    ("2001:1::1/128", "Port Control Protocol Anycast", "2001:1::1", (False, False)),
    ("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "2001:1::2", (False, False)),
    ("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "2001:1::3", (False, False)),
    ("2001:2::/48", "Benchmarking", "2001:2::1", (False, False)),
    ("2001:3::/32", "AMT", "2001:3::1", (False, False)),
    ("2001:4:112::/48", "AS112-v6", "2001:4:112::1", (False, False)),
    ("2001:10::/28", "Deprecated (previously ORCHID)", "2001:10::1", (False, False)),
    ("2001:20::/28", "ORCHIDv2", "2001:20::1", (False, False)),
    (
        "2001:30::/28",
        "Drone Remote ID Protocol Entity Tags (DETs) Prefix",
        "2001:30::1",
        (False, False),
    ),
    ("2001:db8::/32", "Documentation", "2001:db8::1", (True, True)),
    ("2002::/16", "6to4", "2002:808:808::1", (True, True)),
    ("2620:4f:8000::/48", "Direct Delegation AS112 Service", "2620:4f:8000::1", (True, True)),
    ("3fff::/20", "Documentation", "3fff:fff::1", (False, True)),
    ("5f00::/16", "Segment Routing (SRv6) SIDs", "5f00::1", (False, False)),
    ("fc00::/7", "Unique-Local", "fd12:3456::1", (False, False)),
    ("fe80::/10", "Link-Local Unicast", "fe80::1", (False, False)),
    ("ff00::/8", "Multicast", "ff02::1", (False, False)),
    ("::/96", "Deprecated (IPv4-compatible IPv6 address)", "::8.8.8.8", (False, False)),
    ("fec0::/10", "Deprecated (site-local unicast)", "fec0::1", (False, False)),
    ("3ffe::/16", "Returned (6bone testing addresses)", "3ffe::1", (True, False)),
    ("::/3", "Reserved by IETF (outside Global Unicast 2000::/3)", "1234::1", (False, True)),
    ("4000::/2", "Reserved by IETF (outside Global Unicast 2000::/3)", "4000::1", (True, False)),
    ("8000::/1", "Reserved by IETF (outside Global Unicast 2000::/3)", "8000::1", (False, False)),
]
# Blocks whose inner address the guard judges by the IPv4 address it carries (mapped,
# translated): refused, with the embedded address's reason instead of the block's name.
EMBEDDING = {"::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "2001::/32", "2002::/16", "::/96"}
CASES = IPV4 + IPV6


def test_the_tables_hold_exactly_the_listed_blocks():
    assert sorted(str(r.network) for r in ALL_RANGES) == sorted(cidr for cidr, *_ in CASES)


@pytest.mark.parametrize(
    ("cidr", "name", "inside", "public_neighbours"), CASES, ids=[c[0] for c in CASES]
)
def test_each_block_is_refused_inside_and_at_its_edges(cidr, name, inside, public_neighbours):
    block = ipaddress.ip_network(cidr)
    reason = net.special_reason(ipaddress.ip_address(inside))
    assert reason, inside
    if cidr not in EMBEDDING:
        assert f"{name} ({cidr}," in reason
    for edge in (block.network_address, block.broadcast_address):
        assert net.special_reason(edge), edge


@pytest.mark.parametrize(
    ("cidr", "name", "inside", "public_neighbours"), CASES, ids=[c[0] for c in CASES]
)
def test_the_addresses_next_to_a_block_are_public_where_no_other_block_holds_them(
    cidr, name, inside, public_neighbours
):
    block = ipaddress.ip_network(cidr)
    first, last = int(block.network_address), int(block.broadcast_address)
    for number, public in zip((first - 1, last + 1), public_neighbours, strict=True):
        if not 0 <= number < 2**block.max_prefixlen:
            continue  # the block starts or ends the address space
        neighbour = (
            ipaddress.IPv6Address(number) if block.version == 6 else ipaddress.IPv4Address(number)
        )
        assert (net.special_reason(neighbour) is None) is public, neighbour


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "1.1.1.1",
        "93.184.215.14",
        "2606:4700:4700::1111",
        "2a00:1450::1",
        "::ffff:8.8.8.8",
    ],
)
def test_public_addresses_pass(address):
    assert net.special_reason(ipaddress.ip_address(address)) is None
    assert net.address_blocked_reason(ipaddress.ip_address(address), port=443) is None


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("::ffff:127.0.0.1", "Loopback (127.0.0.0/8"),
        ("::ffff:169.254.169.254", "Link Local (169.254.0.0/16"),
        ("64:ff9b::a00:1", "Private-Use (10.0.0.0/8"),
        ("2002:c0a8:101::1", "Private-Use (192.168.0.0/16"),
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "Loopback (127.0.0.0/8"),  # Teredo client
        ("::127.0.0.1", "Loopback (127.0.0.0/8"),  # IPv4-compatible
        ("64:ff9b::808:808", "embeds an IPv4 address"),  # NAT64 of a public address
        ("2002:808:808::1", "embeds an IPv4 address"),
    ],
)
def test_ipv6_forms_are_judged_by_the_ipv4_address_they_carry(address, expected):
    reason = net.special_reason(ipaddress.ip_address(address))
    assert expected in reason


def test_the_check_never_asks_python_whether_an_address_is_global(monkeypatch):
    def refuse(self):
        raise AssertionError("the guard asked ipaddress for its own classification")

    for cls in (ipaddress.IPv4Address, ipaddress.IPv6Address):
        for attribute in ("is_global", "is_private", "is_reserved", "is_loopback", "is_link_local"):
            monkeypatch.setattr(cls, attribute, property(refuse))

    for address in ("8.8.8.8", "10.0.0.1", "::1", "2606:4700::1", "::ffff:10.0.0.1", "fec0::1"):
        net.special_reason(ipaddress.ip_address(address))
