"""The authorization code flow with PKCE, per user: connect (send the browser to the
authorization server with a state and an S256 challenge bound to the user's session),
the callback (check the state, exchange the code), the status and disconnect (revoke at
the server when the config names a revocation endpoint, then forget the token).
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

from asgiref.sync import async_to_sync

from common.exceptions import ApplicationError, NotFound
from tools_app.auth import grants, store
from tools_app.auth.grants import AuthError
from tools_app.auth.schema import auth_type
from tools_app.crypto import credentials_get, decrypt
from tools_app.models import Tool, ToolSource
from tools_app.selectors import tool_get

SESSION_KEY = "studio_oauth_pending"
PENDING_SECONDS = 600
MAX_PENDING = 10
SOURCES_PAGE = "/sources/"


def source_auth(source: ToolSource) -> dict[str, Any]:
    """The auth config of a source that signs in with the server's own OAuth (found by
    discovery when the source was added: tools_app.sources.mcp_oauth)."""
    auth = (source.config or {}).get("auth") or {}
    if auth_type(auth) != "oauth2_authorization_code":
        raise ApplicationError(
            f"The source {source.name!r} does not sign in with OAuth: there is nothing to connect.",
            code="not_connectable",
        )
    return auth


def source_client(source: ToolSource) -> dict[str, Any]:
    """The source's OAuth client (client_id, client_secret), without its other secrets."""
    stored = decrypt(source.credentials_encrypted) if source.credentials_encrypted else {}
    return {k: stored[k] for k in ("client_id", "client_secret") if stored.get(k)}


def _auth(tool: Tool) -> dict[str, Any]:
    auth = (tool.config or {}).get("auth") or {}
    if auth_type(auth) != "oauth2_authorization_code":
        raise ApplicationError(
            f"The tool {tool.name!r} does not use the authorization code flow "
            "(config.auth.type is not oauth2_authorization_code): there is nothing to connect.",
            code="not_connectable",
        )
    return auth


def connect_start(*, session: Any, tool: Tool, redirect_uri: str, return_to: str = "") -> str:
    """The authorization URL to redirect the browser to; the state and the PKCE verifier
    stay in the server-side session, with the studio page to come back to (`return_to`,
    a path the view checked; the tool's page when empty)."""
    entry = {"tool": tool.name, "return_to": return_to}
    return _start(session, _auth(tool), credentials_get(tool), redirect_uri, entry)


def source_connect_start(
    *, session: Any, source: ToolSource, redirect_uri: str, return_to: str = ""
) -> str:
    """The same for a source that signs in with its own OAuth (an MCP server): one
    connection per user serves every tool of the source and the listing of its tools."""
    entry = {"source": source.pk, "return_to": return_to}
    return _start(session, source_auth(source), source_client(source), redirect_uri, entry)


def _start(
    session: Any,
    auth: dict[str, Any],
    secrets: dict[str, Any],
    redirect_uri: str,
    entry: dict[str, Any],
) -> str:
    if not secrets.get("client_id"):
        raise ApplicationError(
            "Set the tool's client_id credential before connecting.", code="no_credentials"
        )
    url, state, verifier = grants.authorization_url(auth, secrets, redirect_uri)
    now = time.time()
    pending = {
        key: entry
        for key, entry in (session.get(SESSION_KEY) or {}).items()
        if entry["at"] > now - PENDING_SECONDS
    }
    pending[state] = {**entry, "verifier": verifier, "redirect": redirect_uri, "at": now}
    session[SESSION_KEY] = dict(list(pending.items())[-MAX_PENDING:])
    return url


def connect_finish(*, session: Any, user: Any, params: dict[str, str]) -> tuple[str, str]:
    """Check the callback's state against the session, exchange the code, store the token.
    Returns the page of the tool or source, and the page the connection was started from
    ("" for the former)."""
    pending = dict(session.get(SESSION_KEY) or {})
    entry = pending.pop(params.get("state") or "", None)
    session[SESSION_KEY] = pending
    if entry is None or entry["at"] < time.time() - PENDING_SECONDS:
        raise ApplicationError(
            "This authorization answer does not belong to a connection started in this "
            "session (unknown or expired state): press Connect again.",
            code="oauth_state",
        )
    holder, auth, secrets, page = _target(user, entry)
    if params.get("error"):
        detail = params["error"] + (
            f": {params['error_description']}" if params.get("error_description") else ""
        )
        raise ApplicationError(
            f"The authorization server did not grant access ({detail}).",
            code="oauth_denied",
        )
    if not params.get("code"):
        raise ApplicationError("The authorization answer has no code.", code="oauth_no_code")
    try:
        token = async_to_sync(grants.exchange_code)(
            auth,
            secrets,
            code=params["code"],
            redirect_uri=entry["redirect"],
            code_verifier=entry["verifier"],
        )
    except AuthError as exc:
        raise ApplicationError(exc.message, status_code=502, code="oauth_exchange") from None
    store.token_put(holder, store.digest(auth), token)
    return page, entry.get("return_to") or ""


def _target(user: Any, entry: dict[str, Any]) -> tuple[store.Holder, dict, dict, str]:
    """(token holder, auth config, secrets, page) of a pending connection's tool or source,
    looked up again for the user who comes back."""
    if "source" in entry:
        source = ToolSource.objects.filter(pk=entry["source"], owner=user).first()
        if source is None:
            raise NotFound(f"No source {entry['source']}.", code="not_found")
        holder = store.Holder(tool=None, source=source, user_id=user.pk)
        return holder, source_auth(source), source_client(source), SOURCES_PAGE
    tool = tool_get(user=user, name=entry["tool"])
    if tool is None:
        raise NotFound(f"No tool named {entry['tool']!r}.", code="not_found")
    page = f"/tools/{quote(tool.name)}/"
    return store.holder_for(tool, user.pk), _auth(tool), credentials_get(tool), page


def connection_get(*, user: Any, tool: Tool) -> dict[str, Any]:
    if auth_type((tool.config or {}).get("auth")) != "oauth2_authorization_code":
        return {"connectable": False, "connected": False}
    holder = store.holder_for(tool, user.pk)
    status = store.connection_status(holder, store.digest(_auth(tool)))
    return {"connectable": True, **status, "connect_url": f"/oauth/tools/{tool.name}/connect"}


def connection_delete(*, user: Any, tool: Tool) -> dict[str, Any]:
    """Forget the user's token; revoke it first when the config has a revocation URL. The
    token is forgotten even if the server cannot be reached (`revoked` says so)."""
    auth = _auth(tool)
    return _forget(store.holder_for(tool, user.pk), auth, credentials_get(tool))


def source_connection_get(*, user: Any, source: ToolSource) -> dict[str, Any]:
    if auth_type((source.config or {}).get("auth")) != "oauth2_authorization_code":
        return {"connectable": False, "connected": False}
    holder = store.Holder(tool=None, source=source, user_id=user.pk)
    status = store.connection_status(holder, store.digest(source_auth(source)))
    return {"connectable": True, **status, "connect_url": f"/oauth/sources/{source.pk}/connect"}


def source_connection_delete(*, user: Any, source: ToolSource) -> dict[str, Any]:
    holder = store.Holder(tool=None, source=source, user_id=user.pk)
    return _forget(holder, source_auth(source), source_client(source))


def _forget(holder: store.Holder, auth: dict[str, Any], secrets: dict[str, Any]) -> dict:
    token = store.token_delete(holder)
    if token is None:
        return {"connected": False, "revoked": False, "detail": "There was no connection."}
    if not auth.get("revocation_url"):
        return {"connected": False, "revoked": False, "detail": "No revocation endpoint."}
    try:
        async_to_sync(grants.revoke)(auth, secrets, token)
    except AuthError as exc:
        return {"connected": False, "revoked": False, "detail": exc.message}
    return {"connected": False, "revoked": True, "detail": "Revoked at the server."}
