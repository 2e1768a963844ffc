"""Where tokens are kept: OAuthToken rows, encrypted with the credentials' keys
(tools_app.crypto). Synchronous (ORM); the resolver calls them through sync_to_async.

The holder of a token is the tool, or the OpenAPI source the tool was imported from (one
connection serves every operation of that API).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from tools_app.crypto import decrypt, encrypt
from tools_app.models import OAuthToken, Tool, ToolSource


@dataclass(frozen=True)
class Holder:
    tool: Tool | None
    source: ToolSource | None
    user_id: int | None  # None: the holder's service token

    @property
    def key(self) -> str:
        if self.source is not None:
            base = f"source:{self.source.pk}"
        else:
            assert self.tool is not None  # holder_for sets one of the two
            base = f"tool:{self.tool.pk}"
        return f"{base}:{self.user_id or 'service'}"


def holder_for(tool: Tool, user_id: int | None) -> Holder:
    source_id = (tool.config or {}).get("source_id")
    source = None
    if source_id:
        source = ToolSource.objects.filter(pk=source_id, owner_id=tool.owner_id).first()
    return Holder(tool=None if source else tool, source=source, user_id=user_id)


def digest(auth: dict[str, Any], credentials_encrypted: str = "") -> str:
    """What a cached token depends on: the auth config, and for service tokens the stored
    credentials (their ciphertext changes whenever they are set again)."""
    text = json.dumps(auth, sort_keys=True) + "\n" + credentials_encrypted
    return hashlib.sha256(text.encode()).hexdigest()


def token_get(holder: Holder, expected_digest: str) -> dict[str, Any] | None:
    row = OAuthToken.objects.filter(key=holder.key).first()
    if row is None or row.digest != expected_digest:
        return None
    return decrypt(row.token_encrypted)


def token_put(holder: Holder, token_digest: str, token: dict[str, Any]) -> None:
    expires_at = None
    if token.get("expires_at"):
        expires_at = dt.datetime.fromtimestamp(int(token["expires_at"]), tz=dt.UTC)
    OAuthToken.objects.update_or_create(
        key=holder.key,
        defaults={
            "tool": holder.tool,
            "source": holder.source,
            "user_id": holder.user_id,
            "digest": token_digest,
            "token_encrypted": encrypt(token),
            "expires_at": expires_at,
        },
    )


def token_delete(holder: Holder) -> dict[str, Any] | None:
    """Remove the holder's token; returns it (decrypted) for revocation, or None."""
    row = OAuthToken.objects.filter(key=holder.key).first()
    if row is None:
        return None
    token = decrypt(row.token_encrypted)
    row.delete()
    return token


def connection_status(holder: Holder, expected_digest: str) -> dict[str, Any]:
    """{connected, expires_at, scope} for the tool page; never the token itself."""
    row = OAuthToken.objects.filter(key=holder.key, digest=expected_digest).first()
    if row is None:
        return {"connected": False}
    token = decrypt(row.token_encrypted)
    return {
        "connected": True,
        "connected_at": row.created_at.isoformat(),
        "expires_at": row.expires_at.isoformat() if row.expires_at else None,
        "refreshable": bool(token.get("refresh_token")),
        "scope": token.get("scope", ""),
        "expired": bool(row.expires_at and row.expires_at <= timezone.now()),
    }
