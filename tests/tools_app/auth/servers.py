"""A local OAuth 2.0 authorization server and protected API on 127.0.0.1, speaking
RFC 6749 (token endpoint: client_credentials, authorization_code, refresh_token), RFC 7636
(PKCE S256, checked), RFC 7523 (JWT bearer: the assertion's signature is verified with the
registered public key through joserfc), RFC 7009 (revocation) and RFC 6750 (bearer
tokens at /api/me, 401 with WWW-Authenticate when a token is unknown, expired or revoked),
RFC 8414 (its metadata, once `publish_metadata` is called), RFC 7591 (Dynamic Client
Registration at /register) and RFC 8707 (a `resource` given at /authorize is bound to the
code and its tokens, and must be given again at the token endpoint).

Optionally served over TLS with a context that may require a client certificate.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import secrets
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
from joserfc import jwk, jwt


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


class TLSServer(ThreadingHTTPServer):
    """Handshakes in the request's thread; when the handshake fails (no client
    certificate), reads what the client already sent before closing, so the client gets
    the TLS alert rather than a connection reset (as a production server's close does)."""

    def finish_request(self, request, client_address) -> None:  # noqa: ANN001
        try:
            request.do_handshake()
        except (ssl.SSLError, OSError):
            self._drain(request)
            return
        super().finish_request(request, client_address)

    @staticmethod
    def _drain(request) -> None:  # noqa: ANN001
        raw = socket.socket(fileno=os.dup(request.fileno()))
        raw.settimeout(0.5)
        try:
            while raw.recv(65536):
                pass
        except OSError:
            pass
        finally:
            raw.close()


class OAuthServer:
    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        # client_id -> {"secret": str | None, "redirect_uris": [...]}
        self.clients: dict[str, dict[str, Any]] = {}
        self.jwt_issuers: dict[str, str] = {}  # issuer -> public key PEM
        self.codes: dict[str, dict[str, Any]] = {}
        self.access: dict[str, dict[str, Any]] = {}
        self.refresh: dict[str, dict[str, Any]] = {}
        self.expires_in = 3600
        self.issue_refresh = True
        self.token_requests: list[dict[str, str]] = []
        self.api_requests: list[dict[str, str]] = []
        self.revocations: list[dict[str, str]] = []
        self.documents: dict[str, bytes] = {}  # path -> JSON served as is (specs)
        self.registrations: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                if parts.path in server.documents:
                    headers = {"Content-Type": "application/json"}
                    self._send(200, headers, server.documents[parts.path])
                elif parts.path == "/authorize":
                    self._send(*server.authorize_page(query))
                elif parts.path.startswith("/api/"):
                    self._send(*server.api(parts.path, self.headers.get("Authorization", "")))
                else:
                    self._send(404, {}, b"no route")

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode()
                form = {k: v[0] for k, v in parse_qs(raw).items()}
                path = urlsplit(self.path).path
                auth = self.headers.get("Authorization", "")
                if path == "/token":
                    self._send(*server.token(form, auth))
                elif path == "/authorize":
                    self._send(*server.approve(form))
                elif path == "/revoke":
                    self._send(*server.revoke(form, auth))
                elif path == "/register":
                    self._send(*server.register(raw))
                else:
                    self._send(404, {}, b"no route")

            def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = (TLSServer if tls else ThreadingHTTPServer)(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(
                self.httpd.socket, server_side=True, do_handshake_on_connect=False
            )
        self.port = self.httpd.server_address[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- helpers ------------------------------------------------------------------------
    @staticmethod
    def _json(status: int, body: dict[str, Any], **headers: str) -> tuple:
        fixed = {"Content-Type": "application/json", "Cache-Control": "no-store"}
        fixed.update({k.replace("_", "-"): v for k, v in headers.items()})
        return status, fixed, json.dumps(body).encode()

    def _error(self, error: str, description: str = "", status: int = 400) -> tuple:
        return self._json(status, {"error": error, "error_description": description})

    def _client(self, form: dict[str, str], auth: str) -> tuple[str | None, str | None]:
        if auth.startswith("Basic "):
            client_id, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
            return client_id, secret
        return form.get("client_id"), form.get("client_secret")

    def _issue(
        self, sub: str, scope: str, client_id: str, refresh: bool, resource: str = ""
    ) -> tuple:
        access = secrets.token_urlsafe(24)
        self.access[access] = {
            "sub": sub,
            "scope": scope,
            "exp": time.time() + self.expires_in,
            "revoked": False,
            "resource": resource,
        }
        body: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
            "scope": scope,
        }
        if refresh and self.issue_refresh:
            token = secrets.token_urlsafe(24)
            self.refresh[token] = {
                "sub": sub,
                "scope": scope,
                "client_id": client_id,
                "resource": resource,
            }
            body["refresh_token"] = token
        return self._json(200, body)

    # --- endpoints ----------------------------------------------------------------------
    def token(self, form: dict[str, str], auth: str) -> tuple:
        with self.lock:
            self.token_requests.append(dict(form))
            grant = form.get("grant_type")
            if grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
                return self._jwt_bearer(form)
            client_id, secret = self._client(form, auth)
            client = self.clients.get(client_id or "")
            if client is None or (client["secret"] is not None and client["secret"] != secret):
                return self._error("invalid_client", "unknown client or wrong secret", 401)
            if grant == "client_credentials":
                return self._issue(f"client:{client_id}", form.get("scope", ""), client_id, False)
            if grant == "authorization_code":
                return self._code(form, client_id)
            if grant == "refresh_token":
                entry = self.refresh.get(form.get("refresh_token", ""))
                if entry is None or entry["client_id"] != client_id:
                    return self._error("invalid_grant", "the refresh token is not valid")
                if entry["resource"] != form.get("resource", ""):
                    return self._error("invalid_target", "resource differs from the grant's")
                return self._issue(
                    entry["sub"], entry["scope"], client_id, False, entry["resource"]
                )
            return self._error("unsupported_grant_type", grant or "")

    def _code(self, form: dict[str, str], client_id: str) -> tuple:
        entry = self.codes.pop(form.get("code", ""), None)
        if entry is None or entry["client_id"] != client_id:
            return self._error("invalid_grant", "unknown or used code")
        if entry["redirect_uri"] != form.get("redirect_uri"):
            return self._error("invalid_grant", "redirect_uri does not match")
        if s256(form.get("code_verifier", "")) != entry["challenge"]:
            return self._error("invalid_grant", "PKCE verification failed")
        if entry["resource"] != form.get("resource", ""):
            return self._error("invalid_target", "resource differs from the authorization's")
        return self._issue(entry["sub"], entry["scope"], client_id, True, entry["resource"])

    def _jwt_bearer(self, form: dict[str, str]) -> tuple:
        assertion = form.get("assertion", "")
        try:
            unverified = json.loads(base64.urlsafe_b64decode(assertion.split(".")[1] + "=="))
            key = jwk.RSAKey.import_key(self.jwt_issuers[unverified["iss"]])
            claims = jwt.decode(assertion, key, algorithms=["RS256", "ES256"]).claims
        except Exception as exc:  # noqa: BLE001 - any failure is the client's
            return self._error("invalid_grant", f"bad assertion: {exc}")
        if claims.get("aud") != f"{self.url}/token":
            return self._error("invalid_grant", f"aud is {claims.get('aud')}")
        if not claims.get("exp") or claims["exp"] < time.time():
            return self._error("invalid_grant", "assertion expired")
        sub = claims.get("sub") or claims["iss"]
        return self._issue(sub, form.get("scope", claims.get("scope", "")), claims["iss"], False)

    def authorize_page(self, query: dict[str, str]) -> tuple:
        client = self.clients.get(query.get("client_id", ""))
        if client is None or query.get("redirect_uri") not in client["redirect_uris"]:
            return 400, {"Content-Type": "text/plain"}, b"unknown client or redirect_uri"
        if query.get("response_type") != "code" or query.get("code_challenge_method") != "S256":
            return 400, {"Content-Type": "text/plain"}, b"needs response_type=code and S256"
        fields = "".join(
            f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
            for k, v in query.items()
        )
        page = (
            "<!doctype html><title>Authorize</title><h1>Local OAuth server</h1>"
            f'<form method="post" action="/authorize">{fields}'
            '<label>User <input name="user" value="alice"></label>'
            '<button id="approve" type="submit">Approve</button></form>'
        )
        return 200, {"Content-Type": "text/html; charset=utf-8"}, page.encode()

    def approve(self, form: dict[str, str]) -> tuple:
        code = secrets.token_urlsafe(16)
        with self.lock:
            self.codes[code] = {
                "client_id": form["client_id"],
                "redirect_uri": form["redirect_uri"],
                "challenge": form["code_challenge"],
                "scope": form.get("scope", ""),
                "sub": form.get("user", "alice"),
                "resource": form.get("resource", ""),
            }
        query = urlencode({"code": code, "state": form.get("state", "")})
        return 302, {"Location": f"{form['redirect_uri']}?{query}"}, b""

    def revoke(self, form: dict[str, str], auth: str) -> tuple:
        with self.lock:
            self.revocations.append(dict(form))
            token = form.get("token", "")
            entry = self.refresh.pop(token, None)
            if entry is not None:  # revoking a refresh token ends its access tokens
                for access in self.access.values():
                    if access["sub"] == entry["sub"]:
                        access["revoked"] = True
            if token in self.access:
                self.access[token]["revoked"] = True
        return 200, {}, b""

    def publish_metadata(self, *, registration: bool = True, path: str = "") -> None:
        """Serve RFC 8414 metadata (at the well-known path for the issuer URL + `path`)."""
        metadata: dict[str, Any] = {
            "issuer": self.url + path,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "revocation_endpoint": f"{self.url}/revoke",
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
        }
        if registration:
            metadata["registration_endpoint"] = f"{self.url}/register"
        well_known = f"/.well-known/oauth-authorization-server{path}"
        self.documents[well_known] = json.dumps(metadata).encode()

    def register(self, raw: str) -> tuple:
        """RFC 7591: a new client for the redirect URIs asked for."""
        try:
            asked = json.loads(raw)
            redirect_uris = list(asked["redirect_uris"])
        except (ValueError, KeyError, TypeError):
            return self._error("invalid_client_metadata", "redirect_uris is required")
        method = asked.get("token_endpoint_auth_method", "client_secret_basic")
        client_id = f"dyn-{secrets.token_hex(6)}"
        secret = None if method == "none" else secrets.token_urlsafe(16)
        with self.lock:
            self.registrations.append(asked)
            self.clients[client_id] = {"secret": secret, "redirect_uris": redirect_uris}
        answer = {**asked, "client_id": client_id, "token_endpoint_auth_method": method}
        if secret:
            answer["client_secret"] = secret
        return self._json(201, answer)

    def revoke_everything(self) -> None:
        """What an administrator revoking the grant on the server side does."""
        with self.lock:
            self.refresh.clear()
            for access in self.access.values():
                access["revoked"] = True

    def api(self, path: str, authorization: str) -> tuple:
        if path == "/api/public":  # no token needed: what the TLS tests call
            return self._json(200, {"public": True})
        token = authorization[7:] if authorization.startswith("Bearer ") else ""
        with self.lock:
            self.api_requests.append({"path": path, "token": token})
            entry = self.access.get(token)
            if entry is None or entry["revoked"] or entry["exp"] < time.time():
                return self._json(
                    401,
                    {"error": "invalid_token"},
                    WWW_Authenticate='Bearer error="invalid_token"',
                )
        return self._json(200, {"sub": entry["sub"], "scope": entry["scope"], "path": path})


def approve(client: Any, start_url: str, user_name: str = "alice") -> tuple[dict[str, str], str]:
    """The browser's part of a connection: open the studio's connect URL with the Django
    test `client`, approve as `user_name` at the local server; returns the authorization
    request's query and the callback URL the server sends the browser back to."""
    start = client.get(start_url)
    assert start.status_code == 302, start.content
    query = {k: v[0] for k, v in parse_qs(urlsplit(start["Location"]).query).items()}
    approved = httpx.post(
        start["Location"].split("?")[0], data={**query, "user": user_name}, follow_redirects=False
    )
    assert approved.status_code == 302, approved.text
    return query, approved.headers["location"]
