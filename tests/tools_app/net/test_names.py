"""Name rules: judged on the canonical host (NFKC, IDNA/UTS-46, lower case, no final dot),
before any lookup, each refusal with its reason."""

from __future__ import annotations

import socket

import pytest
from asgiref.sync import async_to_sync

from tools_app import net


def refusal(url: str) -> str:
    with pytest.raises(net.BlockedURL) as caught:
        net.parse_target(url)
    return str(caught.value)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://db/", "db is a single-label name"),
        ("http://redis:6379/", "redis is a single-label name"),
        ("http://celery-worker./", "celery-worker is a single-label name"),
        ("http://WEB/", "web is a single-label name"),
    ],
)
def test_single_label_names_are_refused(url, reason):
    assert reason in refusal(url)


@pytest.mark.parametrize(
    ("host", "what"),
    [
        ("metadata", "a cloud metadata service name"),
        ("metadata.google.internal", "the Google Cloud metadata service"),
        ("metadata.goog", "the Google Cloud metadata service"),
        ("instance-data", "the Amazon EC2 metadata service"),
        ("instance-data.ec2.internal", "the Amazon EC2 metadata service"),
        ("metadata.tencentyun.com", "the Tencent Cloud metadata service"),
        ("metadata.platformequinix.com", "the Equinix Metal metadata service"),
        ("metadata.packet.net", "the Equinix Metal metadata service"),
        ("kubernetes.default", "the Kubernetes API server"),
        ("kubernetes.default.svc", "the Kubernetes API server"),
        ("kubernetes.default.svc.cluster.local", "the Kubernetes API server"),
    ],
)
def test_metadata_and_cluster_api_names_are_refused(host, what):
    assert refusal(f"http://{host}/latest/") == f"Refused: {host} is {what}."


@pytest.mark.parametrize(
    ("host", "suffix"),
    [
        ("api.internal", "internal"),
        ("host.docker.internal", "internal"),
        ("wiki.intranet", "intranet"),
        ("db.private", "private"),
        ("git.corp", "corp"),
        ("nas.home", "home"),
        ("printer.lan", "lan"),
        ("box.localdomain", "localdomain"),
        ("api.localhost", "localhost"),
        ("printer.local", "local"),
        ("web.default.svc.cluster.local", "cluster.local"),
        ("web.default.svc", "svc"),
        ("vault.service.consul", "consul"),
        ("router.home.arpa", "home.arpa"),
        ("1.0.0.10.in-addr.arpa", "in-addr.arpa"),
        ("1.0.0.0.ip6.arpa", "ip6.arpa"),
        ("resolver.arpa", "arpa"),
        ("vm1.abc.internal.cloudapp.net", "internal.cloudapp.net"),
        ("db.sub.vcn.oraclevcn.com", "oraclevcn.com"),
        ("server.test", "test"),
        ("site.example", "example"),
        ("nothing.invalid", "invalid"),
        ("abcdefghijklmnop.onion", "onion"),
        ("name.alt", "alt"),
    ],
)
def test_internal_suffixes_are_refused_naming_the_suffix(host, suffix):
    assert refusal(f"https://{host}/").startswith(f"Refused: {host} ends in .{suffix}: ")


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127%2E0%2E0%2E1/", "contains a % escape"),
        ("http://exa%6dple.com/", "contains a % escape"),
        ("http://１２７.０.０.１/", "a digit other than 0-9: U+FF11 (FULLWIDTH DIGIT ONE)"),
        ("http://١٢٧.0.0.1/", "a digit other than 0-9: U+0661 (ARABIC-INDIC DIGIT ONE)"),
        ("http://𝟏𝟐𝟕.0.0.1/", "a digit other than 0-9: U+1D7CF (MATHEMATICAL BOLD DIGIT ONE)"),
        # punycode of a label with an Arabic-Indic digit
        ("http://xn--mgbh0fb7l.com/", "a digit other than 0-9: U+0661 (ARABIC-INDIC DIGIT ONE)"),
        ("http://a_b.example.com/", "is not a valid host name"),
        ("http://exa$mple.com/", "is not a valid host name"),
        ("http://-lead.example.com/", "is not a valid host name"),
        ("http://a..b.example.com/", "is not a valid host name"),
        ("http://☃.example.com/", "is not a valid host name"),
        ("http://xn--abc.example.com/", "is not a valid host name"),
        ("http://" + "a" * 64 + ".example.com/", "is not a valid host name"),
    ],
)
def test_escapes_foreign_digits_and_bad_characters_are_refused(url, reason):
    assert reason in refusal(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://ｍｅｔａｄａｔａ.google.internal/",  # full-width letters
        "http://metadata。google。internal/",  # ideographic full stops
        "http://metadata．google｡internal/",  # full-width and halfwidth full stops
        "http://MetaData.Google.INTERNAL/",  # mixed case
        "http://metadata.google.internal./",  # trailing dot
        "http://METADATA.GOOGLE.INTERNAL./",
    ],
)
def test_spellings_of_a_metadata_name_are_read_as_the_name(url):
    assert refusal(url) == "Refused: metadata.google.internal is the Google Cloud metadata service."


def test_a_unicode_label_is_judged_in_its_punycode_form():
    assert refusal("http://bücher.internal/").startswith("Refused: xn--bcher-kva.internal ends in")
    assert refusal("http://xn--bcher-kva.internal/").startswith(
        "Refused: xn--bcher-kva.internal ends in"
    )


@pytest.mark.parametrize(
    ("url", "host", "is_ip"),
    [
        ("http://Bücher.Example.ORG./x", "xn--bcher-kva.example.org", False),
        ("http://ｅｘａｍｐｌｅ。ｏｒｇ/", "example.org", False),
        ("http://EXAMPLE.org./", "example.org", False),
        ("http://127。0。0。1/", "127.0.0.1", True),
        ("http://0x7f.1/", "127.0.0.1", True),
        ("http://[::FFFF:7F00:1]/", "::ffff:7f00:1", True),
    ],
)
def test_hosts_are_canonicalised(url, host, is_ip):
    target = net.parse_target(url)
    assert (target.host, target.is_ip) == (host, is_ip)


def test_names_are_refused_before_any_lookup(monkeypatch):
    looked_up = []
    real = socket.getaddrinfo

    def recording(host, *args, **kwargs):
        looked_up.append(host)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", recording)
    for url in ("http://db/", "http://api.internal/", "http://metadata.google.internal/"):
        with pytest.raises(net.BlockedURL):
            async_to_sync(net.fetch)(url)
        assert net.url_verdict(url).status == "refused"

    assert looked_up == []
