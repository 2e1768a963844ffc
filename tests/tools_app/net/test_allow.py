"""What lets a request through: the operator's allow-list (STUDIO_PRIVATE_NETWORKS, a CIDR
for every port or an exact host:port) and the `allow=(ip, port)` argument of one call,
whose later redirect hops are judged as usual."""

from __future__ import annotations

import ipaddress
import re

import pytest
from asgiref.sync import async_to_sync
from django.core.exceptions import ImproperlyConfigured

from tests.tools_app.engine.conftest import LocalServer
from tools_app import net
from tools_app.checks import private_networks_check
from tools_app.services.execute import tool_execute


@pytest.fixture
def other_server():
    server = LocalServer()
    yield server
    server.stop()


def fetch(url: str, **kwargs) -> net.FetchResult:
    return async_to_sync(net.fetch)(url, deadline_seconds=10, **kwargs)


# --- the test seam: allow=(ip, port) -----------------------------------------------------
def test_the_seam_lets_the_first_hop_through_and_refuses_a_redirect_to_another_port(
    local_server, other_server
):
    other_server.route("/landing", body="must not be reached")
    local_server.route("/go", status=302, Location=f"http://127.0.0.1:{other_server.port}/landing")

    with pytest.raises(net.BlockedURL, match=r"Refused: 127\.0\.0\.1 is in .*Loopback"):
        fetch(f"{local_server.url}/go", allow=("127.0.0.1", local_server.port))

    assert [r["path"] for r in local_server.requests] == ["/go"]
    assert other_server.requests == []


def test_the_seam_also_holds_for_a_redirect_back_to_the_same_port_by_name(local_server):
    local_server.route("/go", status=302, Location=f"http://localhost:{local_server.port}/again")

    with pytest.raises(net.BlockedURL, match="localhost is a single-label name"):
        fetch(f"{local_server.url}/go", allow=("127.0.0.1", local_server.port))

    assert [r["path"] for r in local_server.requests] == ["/go"]


def test_a_redirect_within_the_allowed_address_and_port_is_followed(local_server):
    local_server.route("/go", status=302, Location="/landing")
    local_server.route("/landing", body="here")

    result = fetch(f"{local_server.url}/go", allow=("127.0.0.1", local_server.port))

    assert result.body == b"here"
    assert result.redirects == [f"{local_server.url}/landing"]


def test_without_the_seam_the_first_hop_is_refused(local_server):
    with pytest.raises(net.BlockedURL):
        fetch(f"{local_server.url}/go")

    assert local_server.requests == []


def test_the_web_fetch_tool_has_no_way_to_pass_the_seam(system_tool, owner):
    run = tool_execute(
        tool=system_tool("web_fetch"),
        input={"url": "http://127.0.0.1:9/", "allow": ["127.0.0.1", 9]},
        user=owner,
    )

    assert run.status == "failed"
    assert "allow" in run.error


# --- the operator's allow-list ------------------------------------------------------------
def test_a_cidr_entry_allows_every_port_of_its_addresses(settings, local_server, other_server):
    settings.STUDIO_PRIVATE_NETWORKS = ["127.0.0.0/31"]
    local_server.route("/a", body="a")
    other_server.route("/b", body="b")

    assert fetch(f"{local_server.url}/a").body == b"a"
    assert fetch(f"{other_server.url}/b").body == b"b"
    with pytest.raises(net.BlockedURL, match=r"127\.0\.0\.2 is in"):
        fetch(f"http://127.0.0.2:{local_server.port}/a")


def test_a_host_port_entry_allows_that_port_only(settings, local_server, listener):
    settings.STUDIO_PRIVATE_NETWORKS = [f"127.0.0.1:{local_server.port}"]
    local_server.route("/a", body="a")

    assert fetch(f"{local_server.url}/a").body == b"a"
    assert fetch(f"http://[::ffff:127.0.0.1]:{local_server.port}/a").body == b"a"
    with pytest.raises(net.BlockedURL, match="Loopback"):
        fetch(f"http://127.0.0.1:{listener.port}/")
    assert listener.connections() == 0


def test_a_name_entry_lets_that_name_through_the_name_rules_on_its_port_only(
    settings, local_server, listener
):
    settings.STUDIO_PRIVATE_NETWORKS = [f"localhost:{local_server.port}"]
    local_server.route("/a", body="a")

    assert fetch(f"http://LOCALHOST.:{local_server.port}/a").body == b"a"
    with pytest.raises(net.BlockedURL, match="localhost is a single-label name"):
        fetch(f"http://localhost:{listener.port}/")
    # The name entry does not open the address to other spellings.
    with pytest.raises(net.BlockedURL, match="Loopback"):
        fetch(f"http://127.0.0.1:{local_server.port}/a")
    assert listener.connections() == 0


@pytest.mark.parametrize(
    ("entries", "url", "entry"),
    [
        (["10.1.0.0/16"], "http://10.1.2.3/", "10.1.0.0/16"),
        (["10.1.0.0/16"], "http://[::ffff:10.1.2.3]/", "10.1.0.0/16"),
        (["fd00:1::/64"], "http://[fd00:1::5]:8080/", "fd00:1::/64"),
        (["10.9.9.9"], "http://10.9.9.9:1234/", "10.9.9.9"),
        (["[fd00::5]:8443"], "https://[fd00::5]:8443/", "[fd00::5]:8443"),
        (["ollama:11434"], "http://ollama:11434/api", "ollama:11434"),
        (["api.internal:443"], "https://API.internal./v1", "api.internal:443"),
    ],
)
def test_the_verdict_names_the_operator_entry(settings, entries, url, entry):
    settings.STUDIO_PRIVATE_NETWORKS = entries

    verdict = net.url_verdict(url)

    assert (verdict.status, verdict.private_network) == ("allowed", entry)
    assert verdict.message == f"Private network access: allowed by the operator ({entry})."


@pytest.mark.parametrize(
    ("entries", "url"),
    [
        (["10.1.0.0/16"], "http://10.2.0.1/"),
        (["10.9.9.9:80"], "http://10.9.9.9:81/"),
        (["ollama:11434"], "http://ollama:80/"),
        (["[fd00::5]:8443"], "https://[fd00::6]:8443/"),
    ],
)
def test_what_the_entries_do_not_name_stays_refused(settings, entries, url):
    settings.STUDIO_PRIVATE_NETWORKS = entries

    assert net.url_verdict(url).status == "refused"


def test_a_public_address_in_an_entry_is_not_called_private(settings):
    settings.STUDIO_PRIVATE_NETWORKS = ["8.8.8.0/24"]

    verdict = net.url_verdict("http://8.8.8.8/")

    assert (verdict.status, verdict.private_network) == ("allowed", None)
    assert verdict.message == "Calls to this URL are allowed."


def test_the_port_of_an_entry_is_exact_for_the_address_check():
    networks = net.PrivateNetworks(endpoints={("10.0.0.5", 8080): "10.0.0.5:8080"})

    assert networks.entry_for_address(ipaddress.ip_address("10.0.0.5"), 8080) == "10.0.0.5:8080"
    assert networks.entry_for_address(ipaddress.ip_address("10.0.0.5"), 8081) is None
    assert networks.entry_for_address(ipaddress.ip_address("10.0.0.5"), None) is None


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("10.1.2.3/16", "has host bits set"),
        ("db", "neither a CIDR, an address nor host:port"),
        ("db:0", "no valid port"),
        ("db:99999", "no valid port"),
        ("db:http", "no valid port"),
        ("[::1]", "is not [IPv6 address]:port"),
        ("[nope]:80", "is not [IPv6 address]:port"),
        ("a_b:80", "is not a valid host name"),
    ],
)
def test_a_malformed_entry_is_a_configuration_error_naming_it(settings, entry, message):
    settings.STUDIO_PRIVATE_NETWORKS = ["10.0.0.0/8", entry]

    with pytest.raises(ImproperlyConfigured, match=re.escape(message)):
        net.private_networks()
    errors = private_networks_check(None)
    assert [e.id for e in errors] == ["tools_app.E001"]
    assert "STUDIO_PRIVATE_NETWORKS" in errors[0].msg


def test_a_well_formed_allow_list_passes_the_system_check(settings):
    settings.STUDIO_PRIVATE_NETWORKS = ["10.0.0.0/8", "fd00::/8", "[::1]:80", "ollama:11434"]

    assert private_networks_check(None) == []
