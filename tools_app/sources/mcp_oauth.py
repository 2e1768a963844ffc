"""How an MCP server that answers 401 is signed in to: the MCP authorization spec's
discovery, done once when the source is added (or refreshed and found to need it).

1. the 401's `WWW-Authenticate: Bearer resource_metadata="..."` names the server's
   Protected Resource Metadata (RFC 9728); without it, the well-known
   `/.well-known/oauth-protected-resource` on the server's origin (with the server's path,
   then at the root);
2. the metadata's first authorization server gives its own metadata (RFC 8414
   `/.well-known/oauth-authorization-server`, else OpenID discovery);
3. the client: the client_id (and secret) the user gives, or one registered at the
   server's `registration_endpoint` (RFC 7591 Dynamic Client Registration), with the
   studio's /oauth/callback as its redirect URI.

The result is an ordinary `oauth2_authorization_code` auth config (tools_app.auth.schema)
with `resource` = the MCP server's URL (RFC 8707): the connect flow, the token store and
the refresh of tools_app.auth serve it as they serve an HTTP tool. Every fetch goes
through the address guard (tools_app.net). A problem is an ApplicationError naming the
document and the field, at the JSON path of the input it comes from (`$.url`, or
`$.oauth.client_id` when the server cannot register a client).
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from common.exceptions import ApplicationError

METADATA_MAX_BYTES = 1_000_000
TIMEOUT_SECONDS = 15.0
CLIENT_NAME = "Agent Studio"
_PARAM = re.compile(r'([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


def _error(message: str, *, path: str = "$.url", code: str = "oauth_discovery") -> ApplicationError:
    return ApplicationError(
        message, code=code, extra={"errors": [{"path": path, "message": message}]}
    )


def bearer_challenge(header: str) -> dict[str, str]:
    """The parameters of a `Bearer` challenge ({} when the header has none)."""
    match = re.search(r"\bbearer\b", header or "", re.IGNORECASE)
    if match is None:
        return {}
    return {m[1].lower(): m[2] if m[2] is not None else m[3] for m in _PARAM.finditer(header)}


def _well_known(url: str, name: str) -> list[str]:
    """`name` under the URL's origin: with its path inserted (RFC 8414/9728), then at the
    root."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    paths = [f"/.well-known/{name}{path}", f"/.well-known/{name}"] if path else []
    paths = paths or [f"/.well-known/{name}"]
    return [urlunsplit((parts.scheme, parts.netloc, p, "", "")) for p in paths]


async def _get_json(url: str, what: str) -> dict[str, Any] | None:
    """The JSON object at `url`; None when the server has no such document (404)."""
    from tools_app.net import BlockedURL, FetchError, fetch

    try:
        result = await fetch(
            url,
            headers={"Accept": "application/json"},
            deadline_seconds=TIMEOUT_SECONDS,
            max_bytes=METADATA_MAX_BYTES,
        )
    except BlockedURL as exc:
        raise _error(f"The {what} at {url} is not allowed: {exc}", code="blocked_url") from None
    except FetchError as exc:
        raise _error(f"The {what} at {url} could not be fetched: {exc}") from None
    if result.status in (404, 405):
        return None
    if result.status != 200:
        raise _error(f"The {what} at {url} answered HTTP {result.status} {result.reason}.")
    try:
        document = json.loads(result.body)
    except ValueError:
        raise _error(f"The {what} at {url} is not JSON.") from None
    if not isinstance(document, dict):
        raise _error(f"The {what} at {url} is not a JSON object.")
    return document


async def _first_document(urls: list[str], what: str) -> tuple[str, dict[str, Any]]:
    for url in urls:
        document = await _get_json(url, what)
        if document is not None:
            return url, document
    raise _error(f"The server publishes no {what} (tried {', '.join(urls)}).")


def _url_field(document: dict[str, Any], key: str, where: str, *, required: bool) -> str:
    value = document.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not re.match(r"^https?://", value):
        raise _error(f"The {where} has no usable {key} ($.{key} is {value!r}).")
    return value


def _covers(resource: str, url: str) -> bool:
    """RFC 9728: the metadata's `resource` is the server's URL or a parent of it (same
    origin, a path prefix at a segment boundary), never another server's."""
    have, want = urlsplit(resource), urlsplit(url)
    if (have.scheme, have.netloc) != (want.scheme, want.netloc):
        return False
    prefix = have.path.rstrip("/")
    return want.path.rstrip("/") == prefix or want.path.startswith(prefix + "/")


async def resource_metadata(url: str, challenge: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """(where it was found, RFC 9728 metadata) of the MCP server at `url`."""
    what = "protected resource metadata"
    named = challenge.get("resource_metadata")
    urls = [named] if named else _well_known(url, "oauth-protected-resource")
    found, document = await _first_document(urls, what)
    resource = document.get("resource")
    if resource is not None and not _covers(str(resource), url):
        raise _error(f"The {what} at {found} describes {resource!r}, not this server ($.resource).")
    servers = document.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise _error(
            f"The {what} at {found} names no authorization server ($.authorization_servers)."
        )
    return found, document


async def server_metadata(issuer: str) -> tuple[str, dict[str, Any]]:
    """(where it was found, RFC 8414 metadata) of the authorization server `issuer`."""
    if not re.match(r"^https?://", issuer):
        raise _error(f"The authorization server {issuer!r} is not an http(s) URL.")
    urls = _well_known(issuer, "oauth-authorization-server") + _well_known(
        issuer, "openid-configuration"
    )
    if urlsplit(issuer).path.strip("/"):  # OpenID's own form: the path first
        urls.append(issuer.rstrip("/") + "/.well-known/openid-configuration")
    found, document = await _first_document(
        list(dict.fromkeys(urls)), "authorization server metadata"
    )
    where = f"authorization server metadata at {found}"
    for key in ("authorization_endpoint", "token_endpoint"):
        _url_field(document, key, where, required=True)
    methods = document.get("code_challenge_methods_supported")
    if isinstance(methods, list) and "S256" not in methods:
        raise _error(f"The {where} does not offer PKCE S256 ($.code_challenge_methods_supported).")
    return found, document


async def register_client(metadata: dict[str, Any], redirect_uri: str) -> dict[str, str]:
    """RFC 7591: a client for the studio's callback; a public client (PKCE only) when the
    server accepts one, else one with a secret."""
    from tools_app.net import BlockedURL, FetchError, fetch

    endpoint = metadata.get("registration_endpoint")
    if not endpoint:
        raise _error(
            "The authorization server offers no Dynamic Client Registration: give the "
            "client_id (and client_secret) registered for this studio, with the redirect "
            f"URI {redirect_uri}.",
            path="$.oauth.client_id",
            code="oauth_client_needed",
        )
    endpoint = _url_field(
        metadata, "registration_endpoint", "authorization server metadata", required=True
    )
    methods = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    method = "none" if "none" in methods else methods[0]
    body = {
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
    }
    try:
        result = await fetch(
            endpoint,
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            content=json.dumps(body).encode(),
            deadline_seconds=TIMEOUT_SECONDS,
            max_bytes=METADATA_MAX_BYTES,
            max_redirects=0,
        )
    except (BlockedURL, FetchError) as exc:
        raise _error(f"Client registration at {endpoint} failed: {exc}") from None
    try:
        answer = json.loads(result.body)
    except ValueError:
        answer = None
    if result.status not in (200, 201) or not isinstance(answer, dict):
        detail = ""
        if isinstance(answer, dict) and answer.get("error"):
            detail = f" ({answer['error']}: {answer.get('error_description', '')})"
        message = f"Client registration at {endpoint} was refused: HTTP {result.status}{detail}"
        raise _error(message)
    if not isinstance(answer.get("client_id"), str) or not answer["client_id"]:
        raise _error(f"Client registration at {endpoint} answered without a client_id.")
    client = {"client_id": answer["client_id"]}
    if isinstance(answer.get("client_secret"), str) and answer["client_secret"]:
        client["client_secret"] = answer["client_secret"]
    client["client_auth"] = answer.get("token_endpoint_auth_method") or method
    return client


def _scopes(challenge: dict[str, str], prm: dict[str, Any]) -> list[str]:
    """The 401's scope first (what this server asks for), else the resource's own list."""
    if challenge.get("scope"):
        return challenge["scope"].split()
    listed = prm.get("scopes_supported")
    return [s for s in listed if isinstance(s, str) and s] if isinstance(listed, list) else []


async def discover(
    *, url: str, challenge_header: str, redirect_uri: str, client: dict[str, str] | None
) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    """(auth config, client secrets, what was found) for the MCP server at `url`."""
    challenge = bearer_challenge(challenge_header)
    prm_url, prm = await resource_metadata(url, challenge)
    issuer = prm["authorization_servers"][0]
    as_url, metadata = await server_metadata(issuer)
    given = {k: v for k, v in (client or {}).items() if v}
    registered = given if given.get("client_id") else await register_client(metadata, redirect_uri)
    auth: dict[str, Any] = {
        "type": "oauth2_authorization_code",
        "authorization_url": metadata["authorization_endpoint"],
        "token_url": metadata["token_endpoint"],
        "scopes": _scopes(challenge, prm),
        "resource": url,
    }
    if revocation := _url_field(metadata, "revocation_endpoint", as_url, required=False):
        auth["revocation_url"] = revocation
    client_auth = registered.pop("client_auth", "")
    if client_auth in ("client_secret_basic", "client_secret_post"):
        auth["client_auth"] = client_auth
    found = {
        "resource_metadata": prm_url,
        "issuer": metadata.get("issuer") or issuer,
        "server_metadata": as_url,
        "registration": "given" if given.get("client_id") else "dynamic",
    }
    return auth, registered, found
