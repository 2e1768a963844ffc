"""Host names: their canonical form, and the names the guard refuses before any lookup.

A host is read the way a resolver would end up reading it: NFKC first (full-width letters
become ASCII), then IDNA with the UTS #46 mapping (case folded, ideographic full stops
become dots, Unicode labels become punycode), then lower case without the final dot. The
name rules judge that canonical form, so no spelling of an internal name slips through.

Refused outright, whatever they would resolve to:
- `%` escapes (a resolver or a browser may decode them into another host), and digits
  other than ASCII 0-9 (NFKC turns some of them into an IPv4 address, some stay as
  look-alikes);
- characters IDNA does not allow in a host label (`_`, spaces, symbols, ...);
- single-label names (`db`, `redis`, `metadata`): they reach hosts of the local network
  through search domains or container DNS, never a public site;
- cloud metadata and cluster API names;
- suffixes that only name things inside a network (`.internal`, `.local`, `.svc`, ...).
"""

from __future__ import annotations

import re
import unicodedata

import idna

from tools_app.net.errors import BlockedURL

# Exact names of metadata and platform services, with what they are.
METADATA_NAMES = {
    "metadata": "a cloud metadata service name",
    "metadata.google.internal": "the Google Cloud metadata service",
    "metadata.goog": "the Google Cloud metadata service",
    "instance-data": "the Amazon EC2 metadata service",
    "instance-data.ec2.internal": "the Amazon EC2 metadata service",
    "metadata.tencentyun.com": "the Tencent Cloud metadata service",
    "metadata.platformequinix.com": "the Equinix Metal metadata service",
    "metadata.packet.net": "the Equinix Metal metadata service",
    "kubernetes": "the Kubernetes API server",
    "kubernetes.default": "the Kubernetes API server",
    "kubernetes.default.svc": "the Kubernetes API server",
    "kubernetes.default.svc.cluster.local": "the Kubernetes API server",
}

# Suffixes (a whole trailing part of the name) that only exist inside a network.
INTERNAL_SUFFIXES = {
    "internal": "private-use names (cloud and Docker internal DNS)",
    "intranet": "a private network suffix",
    "private": "a private network suffix",
    "corp": "a private network suffix",
    "home": "a private network suffix",
    "lan": "a private network suffix",
    "localdomain": "local host names",
    "localhost": "loopback names (RFC 6761)",
    "local": "multicast DNS names (RFC 6762)",
    "cluster.local": "Kubernetes cluster names",
    "svc": "Kubernetes service names",
    "consul": "Consul service discovery names",
    "home.arpa": "home network names (RFC 8375)",
    "in-addr.arpa": "reverse-lookup names (RFC 1035)",
    "ip6.arpa": "reverse-lookup names (RFC 3596)",
    "arpa": "DNS infrastructure names",
    "internal.cloudapp.net": "Azure internal DNS names",
    "oraclevcn.com": "Oracle Cloud internal DNS names",
    "test": "names reserved for testing (RFC 6761)",
    "example": "names reserved for documentation (RFC 6761)",
    "invalid": "names that never resolve (RFC 6761)",
    "onion": "Tor onion service names (RFC 7686)",
    "alt": "names outside the DNS (RFC 9476)",
}

_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")


def _char_name(char: str) -> str:
    return f"U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')})"


def _foreign_digit(text: str) -> str | None:
    for char in text:
        if not char.isascii() and unicodedata.category(char) == "Nd":
            return char
    return None


def host_canonical(raw: str) -> str:
    """The host as a resolver reads it (ASCII, punycode, lower case, no final dot).

    Raises BlockedURL, with the reason, for a host that cannot be a public DNS name.
    """
    if "%" in raw:
        raise BlockedURL(f"The host {raw!r} contains a % escape.")
    digit = _foreign_digit(raw)
    if digit:
        raise BlockedURL(f"The host {raw!r} contains a digit other than 0-9: {_char_name(digit)}.")
    folded = unicodedata.normalize("NFKC", raw)
    try:
        host = idna.encode(folded, uts46=True, transitional=False, std3_rules=True).decode()
    except idna.IDNAError as exc:
        raise BlockedURL(f"The host {raw!r} is not a valid host name: {exc}.") from None
    host = host.lower()
    if host.endswith("."):
        host = host[:-1]
    labels = host.split(".")
    for label in labels:
        if not _LABEL.match(label):
            raise BlockedURL(f"The host {raw!r} has a label that is not allowed: {label!r}.")
        if label.startswith("xn--"):
            digit = _foreign_digit(idna.decode(label))
            if digit:
                raise BlockedURL(
                    f"The host {raw!r} contains a digit other than 0-9: {_char_name(digit)}."
                )
    return host


def name_refusal(host: str) -> str | None:
    """Why the canonical name `host` is never looked up, or None."""
    if host in METADATA_NAMES:
        return f"{host} is {METADATA_NAMES[host]}"
    labels = host.split(".")
    if len(labels) == 1:
        return (
            f"{host} is a single-label name; such names reach hosts of the local network "
            "(search domains, container and compose service names)"
        )
    for start in range(len(labels)):
        suffix = ".".join(labels[start:])
        if suffix in INTERNAL_SUFFIXES:
            return f"{host} ends in .{suffix}: {INTERNAL_SUFFIXES[suffix]}"
    return None
