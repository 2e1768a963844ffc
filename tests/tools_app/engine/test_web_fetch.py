"""web_fetch and the address guard (tools_app.net), against servers on 127.0.0.1 only:
the operator's allow-list (the `private_network` fixture: one exact 127.0.0.1:port) lets
tests reach them; without it every internal spelling is refused before any connection."""

from __future__ import annotations

import asyncio
import socket

import httpcore
import pytest
from asgiref.sync import async_to_sync

from tools_app import net
from tools_app.services.execute import tool_execute
from tools_app.types.system.web_fetch import web_fetch


@pytest.fixture
def server(local_server, private_network):
    """The local HTTP server, on the operator's allow-list by its exact 127.0.0.1:port."""
    private_network(local_server.url)
    return local_server


def fetch(url: str) -> dict:
    return async_to_sync(web_fetch)({"url": url})


SPELLINGS = [
    "http://127.0.0.1:{port}/",
    "http://localhost:{port}/",
    "http://LOCALHOST.:{port}/",
    "http://api.localhost:{port}/",
    "http://2130706433:{port}/",  # decimal
    "http://0177.0.0.1:{port}/",  # octal
    "http://0x7f.0.0.1:{port}/",  # hex
    "http://0x7f000001:{port}/",  # one hex number
    "http://127.1:{port}/",  # short form
    "http://0x7f.1:{port}/",  # short hex form
    "http://127.0.0.1.:{port}/",  # trailing dot
    "http://１２７.０.０.１:{port}/",  # full-width digits (IDNA maps them to ASCII)
    "http://127。0。0。1:{port}/",  # ideographic full stops
    "http://0.0.0.0:{port}/",
    "http://0:{port}/",
    "http://[::1]:{port}/",
    "http://[::]:{port}/",
    "http://[::ffff:127.0.0.1]:{port}/",  # IPv4-mapped
    "http://[::ffff:7f00:1]:{port}/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]:{port}/",
    "http://[::127.0.0.1]:{port}/",  # IPv4-compatible
    "http://[64:ff9b::127.0.0.1]:{port}/",  # NAT64
    "http://[2002:7f00:1::]:{port}/",  # 6to4
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]:{port}/",  # Teredo, client 127.0.0.1
    "http://[fe80::1%25eth0]:{port}/",  # zone id
    "http://10.0.0.1:{port}/",
    "http://172.16.5.4:{port}/",
    "http://192.168.1.1:{port}/",
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata (link-local)
    "http://100.64.0.1:{port}/",  # shared address space
    "http://[fc00::1]:{port}/",
    "http://[fe80::1]:{port}/",
    "http://224.0.0.1:{port}/",  # multicast
    "http://240.0.0.1:{port}/",  # reserved
    "http://255.255.255.255:{port}/",
    "http://198.18.0.1:{port}/",  # benchmarking
    "http://1.2.3.4.5:{port}/",  # not an address a resolver agrees on
    "http://256.0.0.1:{port}/",
    "http://example.com@127.0.0.1:{port}/",  # userinfo tricks
    "http://127.0.0.1:{port}@example.com/",
    "http://example.com\\@127.0.0.1:{port}/",  # backslash
    "http://127.0.0.1\t:{port}/",  # tab (urllib would delete it)
    "http://127.0.0.\n1:{port}/",  # newline
    " http://127.0.0.1:{port}/",
    "file:///etc/passwd",
    "ftp://127.0.0.1:{port}/",
    "gopher://127.0.0.1:{port}/_",
    "//127.0.0.1:{port}/",
    "javascript:alert(1)",
    "http://[::1:{port}/",  # malformed brackets
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_internal_addresses_are_refused_however_spelled(spelling, listener):
    result = fetch(spelling.format(port=listener.port))

    assert result["isError"] is True
    assert result["error"]
    assert listener.connections() == 0


@pytest.fixture
def hostile_dns(monkeypatch):
    """Answers for names under .example.org as a hostile DNS server would (tests never
    leave 127.0.0.1, so the resolver's answer is the one part played here)."""
    answers: dict[str, list[str]] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host in answers:
            return [
                (
                    socket.AF_INET6 if ":" in a else socket.AF_INET,
                    socket.SOCK_STREAM,
                    6,
                    "",
                    (a, port),
                )
                for a in answers[host]
            ]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers


@pytest.mark.parametrize(
    "addresses",
    [["127.0.0.1"], ["93.184.215.14", "10.0.0.7"], ["2606:4700::1", "::1"], ["169.254.169.254"]],
)
def test_a_name_is_refused_when_any_of_its_addresses_is_special(listener, hostile_dns, addresses):
    hostile_dns["rebind.example.org"] = addresses

    result = fetch(f"http://rebind.example.org:{listener.port}/")

    assert result["isError"] is True
    assert "rebind.example.org resolves to " in result["error"]
    assert "special-purpose range" in result["error"]
    assert listener.connections() == 0


def test_the_pinned_backend_never_connects_to_an_unchecked_host():
    backend = net.PinnedBackend()

    with pytest.raises(httpcore.ConnectError):
        async_to_sync(backend.connect_tcp)("example.com", 80)


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]
)
def test_public_addresses_pass_the_guard(address):
    import ipaddress

    assert net.address_blocked_reason(ipaddress.ip_address(address)) is None


def test_a_page_is_fetched_with_the_documented_result_shape(server):
    server.route("/page", body="<h1>Hello</h1>", Content_Type="text/html; charset=utf-8")

    result = fetch(f"{server.url}/page")

    assert result == {
        "content": "<h1>Hello</h1>",
        "truncated": False,
        "status": 200,
        "statusText": "OK",
        "contentType": "text/html; charset=utf-8",
        "url": f"{server.url}/page",
        "ok": True,
    }


def test_a_non_2xx_answer_is_a_result_with_ok_false(server):
    server.route("/missing", status=404, body="nope")

    result = fetch(f"{server.url}/missing")

    assert result["status"] == 404 and result["ok"] is False and result["content"] == "nope"


def test_the_text_is_cut_at_100000_characters(server):
    server.route("/big", body="é" * 150_000)

    result = fetch(f"{server.url}/big")

    assert result["truncated"] is True
    assert len(result["content"]) == 100_000
    assert set(result["content"]) == {"é"}


def test_redirects_are_followed_up_to_five(server):
    for hop in range(1, 6):
        server.route(f"/r{hop}", status=302, Location=f"/r{hop + 1}")
    server.route("/r6", body="arrived")

    result = fetch(f"{server.url}/r1")

    assert result["content"] == "arrived"
    assert result["url"] == f"{server.url}/r6"


def test_a_sixth_redirect_is_refused(server):
    for hop in range(1, 7):
        server.route(f"/r{hop}", status=302, Location=f"/r{hop + 1}")
    server.route("/r7", body="too far")

    result = fetch(f"{server.url}/r1")

    assert result["isError"] is True
    assert "Too many redirects" in result["error"]
    assert "/r7" not in [r["path"] for r in server.requests]


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://[::ffff:192.168.0.1]/",
        "file:///etc/passwd",
    ],
)
def test_a_redirect_to_an_internal_address_is_refused(server, target):
    server.route("/go", status=301, Location=target)

    result = fetch(f"{server.url}/go")

    assert result["isError"] is True
    assert result["error"]


def test_the_allow_list_entry_covers_its_exact_port_only(server, listener):
    result = fetch(f"http://127.0.0.1:{listener.port}/")

    assert result["isError"] is True and "Loopback" in result["error"]
    assert listener.connections() == 0


def test_a_server_slower_than_the_deadline_is_an_error(listener):
    # The listener accepts nothing, so no response ever comes.
    with pytest.raises(net.FetchError, match="No complete response within 0.5 s"):
        async_to_sync(net.fetch)(
            f"http://127.0.0.1:{listener.port}/",
            deadline_seconds=0.5,
            allow=("127.0.0.1", listener.port),
        )


def test_the_web_fetch_tool_records_an_iserror_result_as_a_failed_run(system_tool, owner):
    tool = system_tool("web_fetch")

    run = tool_execute(tool=tool, input={"url": "http://0x7f.1/"}, user=owner)

    assert run.status == "failed"
    reason = (
        "Refused: 127.0.0.1 is in a special-purpose range: "
        "Loopback (127.0.0.0/8, RFC 1122, section 3.2.1.3)."
    )
    assert run.output == {"isError": True, "error": reason}
    assert run.error == reason


def test_the_web_fetch_tool_completes_through_the_pipeline(system_tool, owner, server):
    server.route("/data", body={"a": 1})

    run = tool_execute(
        tool=system_tool("web_fetch"), input={"url": f"{server.url}/data"}, user=owner
    )

    assert run.status == "completed"
    assert run.output["content"] == '{"a": 1}'
    assert run.output["contentType"] == "application/json"


def test_web_search_without_a_configured_search_says_where_to_add_one(system_tool, owner):
    run = tool_execute(tool=system_tool("web_search"), input={"query": "django"}, user=owner)

    assert run.status == "failed"
    assert "Settings → Web search" in run.error


def test_asyncio_is_not_left_with_pending_tasks_after_a_refusal():
    async def scenario():
        await web_fetch({"url": "http://127.0.0.1/"})
        return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    assert async_to_sync(scenario)() == []


@pytest.fixture
def tls_server(tmp_path):
    """An HTTPS server on 127.0.0.1 whose certificate (for "localhost") no CA vouches for."""
    import datetime
    import ssl
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def test_https_certificates_are_verified(tls_server, private_network):
    # "localhost" passes the name rules only because its exact host:port is listed.
    result = fetch(private_network(f"https://localhost:{tls_server}/"))

    assert result["isError"] is True
    assert "CERTIFICATE_VERIFY_FAILED" in result["error"]


@pytest.mark.parametrize(
    "spelling",
    [
        "http://0x7f.1:{port}/p",
        "http://2130706433:{port}/p",
        "http://127.0.0.1.:{port}/p",
        "http://[::ffff:7f00:1]:{port}/p",
    ],
)
def test_odd_spellings_of_an_allowed_address_reach_it_as_checked(server, spelling):
    server.route("/p", body="reached")

    result = fetch(spelling.format(port=server.port))

    assert result.get("content") == "reached", result
    host = server.requests[-1]["headers"]["host"]
    assert host.split(":")[0] in ("127.0.0.1", "[") and "0x" not in host
