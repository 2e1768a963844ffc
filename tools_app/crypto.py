"""Tool credentials at rest: a Fernet token of a JSON object, with keys kept apart from
SECRET_KEY (settings.STUDIO_ENCRYPTION_KEYS: the first key encrypts, all decrypt).
Rotation: put a new key first, then `credentials_rotate()` re-encrypts every row."""

from __future__ import annotations

import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.db import transaction

from common.exceptions import ApplicationError
from tools_app.models import Tool
from tools_app.redaction import secrets_add


class CredentialsUnavailable(ApplicationError):
    status_code = 503


def _fernet() -> MultiFernet:
    keys = list(settings.STUDIO_ENCRYPTION_KEYS)
    if not keys:
        raise CredentialsUnavailable(
            "Tool credentials cannot be stored or read: STUDIO_ENCRYPTION_KEYS is not set "
            '(comma-separated Fernet keys; generate one with `python -c "from '
            'cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"`).',
            code="encryption_keys_missing",
        )
    try:
        return MultiFernet([Fernet(key) for key in keys])
    except ValueError as exc:
        raise CredentialsUnavailable(
            f"STUDIO_ENCRYPTION_KEYS holds an invalid Fernet key: {exc}",
            code="encryption_keys_invalid",
        ) from None


def encrypt(data: dict[str, Any]) -> str:
    return _fernet().encrypt(json.dumps(data).encode()).decode()


def decrypt(token: str) -> dict[str, Any]:
    """The stored object; its values are recorded as secrets in use by the current run or
    call (tools_app.redaction), so that nothing it writes down or sends carries them."""
    try:
        data = json.loads(_fernet().decrypt(token.encode()))
    except InvalidToken:
        raise CredentialsUnavailable(
            "The tool's credentials cannot be decrypted with the configured keys "
            "(was a key removed from STUDIO_ENCRYPTION_KEYS?).",
            code="credentials_undecryptable",
        ) from None
    secrets_add(data)
    return data  # type: ignore[no-any-return]


def key_hint(api_key: str) -> str:
    """What a page may show of a stored key: its first three and last four characters,
    and only the last two of a short one."""
    if len(api_key) >= 12:
        return f"{api_key[:3]}…{api_key[-4:]}"
    return f"…{api_key[-2:]}" if len(api_key) >= 6 else "…"


def credentials_get(tool: Tool) -> dict[str, Any]:
    if not tool.credentials_encrypted:
        return {}
    return decrypt(tool.credentials_encrypted)


def credentials_names(tool: Tool) -> list[str]:
    """The stored fields' names, sorted (what a page may show: "set")."""
    if not tool.credentials_encrypted:
        return []
    try:
        return sorted(decrypt(tool.credentials_encrypted))
    except CredentialsUnavailable:
        return []


def credentials_merged(tool: Tool | None, update: dict[str, Any]) -> dict[str, Any]:
    """The stored credentials with `update` applied: a value replaces its field, None
    removes it."""
    merged = credentials_get(tool) if tool is not None else {}
    for key, value in update.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def credentials_set(tool: Tool, data: dict[str, Any] | None) -> Tool:
    """Store (or clear, with an empty dict/None) the tool's credentials, encrypted."""
    tool.credentials_encrypted = encrypt(data) if data else ""
    tool.save(update_fields=["credentials_encrypted", "updated_at"])
    return tool


@transaction.atomic
def credentials_rotate() -> int:
    """Re-encrypt every stored credential (tools', and tool sources': MCP and A2A headers,
    OpenAPI keys) and every OAuth token of tools with the first key; returns how many rows."""
    from tools_app.models import OAuthToken, ToolSource

    fernet = _fernet()
    count = 0
    fields = ((Tool, "credentials_encrypted"), (ToolSource, "credentials_encrypted"))
    for model, name in (*fields, (OAuthToken, "token_encrypted")):
        for row in model.objects.select_for_update().exclude(**{name: ""}):
            setattr(row, name, fernet.rotate(getattr(row, name).encode()).decode())
            row.save(update_fields=[name])
            count += 1
    return count
