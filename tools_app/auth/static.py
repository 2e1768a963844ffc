"""The schemes that need no exchange: API key (header, query or cookie), bearer token and
basic auth, applied to a request dict {method, url, headers, content}."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from tools_app.auth.grants import AuthError
from tools_app.redaction import basic_credentials, secrets_add


def _missing(what: str, fields: str) -> AuthError:
    return AuthError(
        f"This tool needs {what}: set the tool's credentials ({fields}).", code="no_credentials"
    )


def apply_static(request: dict[str, Any], auth: dict[str, Any], secrets: dict[str, Any]) -> None:
    kind = auth.get("type")
    headers = request["headers"]
    # What the request carries is the call's secret, whoever decrypted it, and so is what
    # is built from it here (tools_app.redaction takes both out of what the call returns).
    secrets_add(secrets.get("api_key"), secrets.get("token"))
    if kind == "api_key":
        key = secrets.get("api_key")
        if not key:
            raise _missing("an API key", "api_key")
        name = auth.get("name") or auth.get("header_name") or "X-API-Key"
        if auth.get("in") == "query":
            separator = "&" if "?" in request["url"] else "?"
            request["url"] += separator + urlencode({name: key}, quote_via=quote)
        elif auth.get("in") == "cookie":
            cookie = f"{name}={quote(key, safe='')}"
            old = headers.get("Cookie")
            headers["Cookie"] = f"{old}; {cookie}" if old else cookie
        else:
            headers[name] = key
    elif kind == "bearer":
        if not secrets.get("token"):
            raise _missing("a bearer token", "token")
        headers["Authorization"] = f"Bearer {secrets['token']}"
    elif kind == "basic":
        if not secrets.get("username"):
            raise _missing("a user name and password", "username, password")
        pair = basic_credentials(secrets["username"], secrets.get("password", ""))
        headers["Authorization"] = "Basic " + pair
