"""Helpers every source shares: guarded fetches, tool-name checks, credentials."""

from __future__ import annotations

import re
from typing import Any

from common.exceptions import ApplicationError
from tools_app.models import Tool
from tools_app.names import RESERVED_MESSAGE, RESERVED_TOOL_NAMES

TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


async def fetch_text(
    url: str,
    *,
    max_bytes: int,
    timeout: float = 15.0,
    headers: dict[str, str] | None = None,
    ssl_context: Any = None,
) -> str:
    """GET a user-given URL through the web_fetch address guard (tools_app.net);
    `ssl_context`: a private CA or a client certificate (tools_app.auth.pem)."""
    from tools_app.net import BlockedURL, FetchError, fetch

    try:
        result = await fetch(
            url,
            headers=headers,
            deadline_seconds=timeout,
            max_bytes=max_bytes,
            ssl_context=ssl_context,
        )
    except BlockedURL as exc:
        raise ApplicationError(
            f"This URL is not allowed: {exc}",
            code="blocked_url",
            extra={"errors": [{"path": "$.url", "message": str(exc)}]},
        ) from None
    except FetchError as exc:
        raise ApplicationError(
            f"Could not fetch {url}: {exc}",
            code="fetch_failed",
            extra={"errors": [{"path": "$.url", "message": str(exc)}]},
        ) from None
    if not 200 <= result.status < 300:
        message = f"{url} answered HTTP {result.status} {result.reason}"
        raise ApplicationError(
            message, code="fetch_failed", extra={"errors": [{"path": "$.url", "message": message}]}
        )
    if result.truncated:
        raise ApplicationError(
            f"The document at {url} is larger than {max_bytes} bytes.", code="fetch_failed"
        )
    return result.text()[0]


async def pinned_client(urls: list[str], **kwargs: Any) -> Any:
    """An httpx client that can reach only the hosts of `urls`, each at the address the
    guard checked (tools_app.net's pinned transport: no second DNS lookup, so a rebinding
    name cannot swap in a private address after the check)."""
    import httpx

    from tools_app.net import PinnedBackend, PinnedTransport, parse_target, resolve_checked

    backend = PinnedBackend()
    for url in urls:
        target = parse_target(url)
        backend.pins[(target.host, target.port)] = await resolve_checked(target)
    return httpx.AsyncClient(
        transport=PinnedTransport(backend), trust_env=False, follow_redirects=False, **kwargs
    )


def names_taken(names: list[str], *, owner: Any) -> set[str]:
    """Which of `names` the owner's new tools may not have: their own tools' and the
    shared ones' (never another user's, which would tell them that it exists)."""
    tools = Tool.objects.namespace_of(owner).filter(name__in=names)
    return set(tools.values_list("name", flat=True))


def names_check(names: list[str], *, owner: Any, path: str) -> list[dict[str, str]]:
    """Errors for tool names that are malformed, repeated, or already taken."""
    errors = []
    taken = names_taken(names, owner=owner)
    seen: set[str] = set()
    for index, name in enumerate(names):
        where = path.format(i=index)
        if not name or not TOOL_NAME.match(name) or len(name) > 64:
            errors.append(
                {
                    "path": where,
                    "message": f"{name!r} is not a valid tool name: use "
                    "snake_case (a-z, 0-9, _), starting with a letter, at most 64 chars",
                }
            )
        elif name in RESERVED_TOOL_NAMES:
            errors.append({"path": where, "message": RESERVED_MESSAGE.format(name=name)})
        elif name in taken:
            errors.append({"path": where, "message": f"a tool named {name!r} already exists"})
        elif name in seen:
            errors.append({"path": where, "message": f"{name!r} is picked twice"})
        seen.add(name)
    return errors


def unique_name(base: str, taken: set[str], *, owner: Any) -> str:
    name = base[:64]
    counter = 2
    while name in taken or name in RESERVED_TOOL_NAMES or names_taken([name], owner=owner):
        suffix = f"_{counter}"
        name = base[: 64 - len(suffix)] + suffix
        counter += 1
    taken.add(name)
    return name


def set_credentials(obj: Any, values: dict[str, Any]) -> None:
    """Encrypt `values` into obj.credentials_encrypted (a Tool or a ToolSource)."""
    from tools_app.crypto import credentials_set

    credentials_set(obj, {k: v for k, v in values.items() if v not in (None, "")})


def get_credentials(obj: Any) -> dict[str, Any]:
    from tools_app.crypto import credentials_get

    return credentials_get(obj) if obj.credentials_encrypted else {}


def headers_check(headers: Any) -> dict[str, str]:
    if headers in (None, ""):
        return {}
    if not isinstance(headers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        raise ApplicationError(
            "headers must be an object of strings.",
            code="invalid",
            extra={"errors": [{"path": "$.headers", "message": "an object of strings"}]},
        )
    return headers
