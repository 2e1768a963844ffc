"""What tools_app.auth adds to one request of an HTTP tool, side by side in one run.

    python -m bench.auth_tokens            (needs the database of the environment)

Against the tests' local OAuth server on 127.0.0.1 (tests/tools_app/auth/servers.py),
median per call of `auth_fetch` for: no auth (the guarded fetch alone; and loading the
system's CA store on every call, as net.fetch did before it kept one), a static bearer
token, OAuth 2.0 client credentials with the token cached (an encrypted row read per
call), and with a new token each call (what a cache miss costs); then over HTTPS with a
private CA, with and without a client certificate (mutual TLS). Ratios to the first row
of each table. The bench user and its tools are deleted at the end.
"""

from __future__ import annotations

import os
import ssl
from typing import Any

from bench.tool_overhead import median_seconds, table

REPEAT = int(os.environ.get("BENCH_REPEAT", "200"))


def _rows(servers: dict[str, Any], tool: Any) -> tuple[list[tuple[str, float]], list]:
    from asgiref.sync import async_to_sync

    from tools_app.auth.resolver import auth_fetch
    from tools_app.execution import ExecutionContext
    from tools_app.net.fetch import default_ssl_context

    plain, tls, pki = servers["plain"], servers["tls"], servers["pki"]
    plain.clients["bench"] = {"secret": "s", "redirect_uris": []}
    context = ExecutionContext()

    def call(url: str, auth: dict | None, credentials: dict, before=lambda: None) -> float:
        row = tool(url, auth, credentials)
        request = {"method": "GET", "url": url, "headers": {}, "content": None}

        def once() -> None:
            before()
            async_to_sync(auth_fetch)(row, request, context)

        return median_seconds(once, REPEAT)

    cc = {"type": "oauth2_client_credentials", "token_url": f"{plain.url}/token"}
    secret = {"client_id": "bench", "client_secret": "s"}
    http = [
        ("no auth (guarded fetch)", call(f"{plain.url}/api/public", None, {})),
        # What every request paid before the default TLS context was kept per process
        # (it then built two per request).
        (
            "no auth, system CA store loaded per call",
            call(f"{plain.url}/api/public", None, {}, default_ssl_context.cache_clear),
        ),
        (
            "static bearer token",
            call(f"{plain.url}/api/public", {"type": "bearer"}, {"token": "t"}),
        ),
        ("client credentials, cached token", call(f"{plain.url}/api/me", cc, secret)),
    ]
    plain.expires_in = 30  # inside the one-minute margin: every call fetches a new token
    http.append(("client credentials, new token per call", call(f"{plain.url}/api/me", cc, secret)))
    ca = {"ca_bundle": pki.ca.cert}
    client = {**ca, "client_cert": pki.client.cert, "client_key": pki.client.key}
    https = [
        ("HTTPS, private CA", call(f"{tls.url}/api/public", None, ca)),
        ("HTTPS, private CA + client certificate", call(f"{tls.url}/api/public", None, client)),
    ]
    return http, https


def main() -> None:
    from bench import setup_django

    setup_django()
    import logging

    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from tests.tools_app.auth.pki import make_pki, server_tls
    from tests.tools_app.auth.servers import OAuthServer
    from tools_app.crypto import credentials_set
    from tools_app.models import Source, Tool

    call_command("migrate", verbosity=0, interactive=False)
    for name in ("httpx", "httpx2"):  # one INFO line per request otherwise
        logging.getLogger(name).setLevel(logging.WARNING)
    pki = make_pki()
    servers = {
        "plain": OAuthServer(),
        "tls": OAuthServer(tls=server_tls(pki, ssl.CERT_OPTIONAL)),
        "pki": pki,
    }
    settings.STUDIO_PRIVATE_NETWORKS = [
        *settings.STUDIO_PRIVATE_NETWORKS,
        *(s.url.split("//")[1] for s in (servers["plain"], servers["tls"])),
    ]
    user, _ = get_user_model().objects.get_or_create(username="bench-auth-tokens")
    counter = iter(range(1, 1000))

    def tool(url: str, auth: dict | None, credentials: dict) -> Tool:
        row = Tool.objects.create(
            name=f"bench_auth_{next(counter)}",
            kind="http",
            owner=user,
            source=Source.STUDIO,
            config={"url": url, **({"auth": auth} if auth else {})},
        )
        if credentials:
            credentials_set(row, credentials)
        return row

    try:
        http, https = _rows(servers, tool)
    finally:
        Tool.objects.filter(owner=user).delete()
        user.delete()
        servers["plain"].stop()
        servers["tls"].stop()
    table(f"One request through auth_fetch, HTTP (median of {REPEAT})", http, http[0][1])
    table(f"One request through auth_fetch, HTTPS (median of {REPEAT})", https, https[0][1])
    print(f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
