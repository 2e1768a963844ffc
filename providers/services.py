"""Writes: a provider credential created, changed or deleted. The key is stored
encrypted (tools_app/crypto.py) and only a hint of it ever leaves this module."""

from __future__ import annotations

import re
from typing import Any

from django.db import IntegrityError, transaction

from common.exceptions import ApplicationError
from providers.catalog import ALIASES, PROVIDERS
from providers.gate import base_problem
from providers.models import ProviderCredential
from providers.models_list import litellm_providers
from tools_app.crypto import decrypt, encrypt, key_hint

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
# Names an OpenAI-compatible server cannot take: they already mean a provider.
RESERVED = {"studio", *PROVIDERS, *ALIASES}


def invalid(path: str, message: str) -> ApplicationError:
    return ApplicationError(
        f"{path}: {message}", code="invalid", extra={"errors": [{"path": path, "message": message}]}
    )


def credential_check(provider: str, name: str, api_base: str) -> None:
    spec = PROVIDERS.get(provider)
    if spec is None:
        raise invalid("$.provider", f"must be one of {sorted(PROVIDERS)}")
    if not NAME.match(name):
        raise invalid("$.name", "use 1 to 64 lowercase letters, digits, - and _")
    if provider == "openai_compatible" and (name in RESERVED or name in litellm_providers()):
        raise invalid(
            "$.name",
            f"{name!r} already names a provider; an OpenAI-compatible server's models are "
            "written <name>/<model>, so pick another name",
        )
    if spec.needs_base and not api_base:
        raise invalid("$.api_base", "an OpenAI-compatible server needs its base URL")
    if api_base:
        problem = base_problem(api_base)
        if problem:
            raise invalid("$.api_base", problem)


def credential_store_key(credential: ProviderCredential, api_key: str) -> None:
    credential.secret_encrypted = encrypt({"api_key": api_key}) if api_key else ""
    credential.key_hint = key_hint(api_key) if api_key else ""


def credential_key(credential: ProviderCredential) -> str:
    if not credential.secret_encrypted:
        return ""
    return decrypt(credential.secret_encrypted).get("api_key", "")


def _save(credential: ProviderCredential) -> ProviderCredential:
    try:
        with transaction.atomic():
            credential.save()
    except IntegrityError:
        raise ApplicationError(
            f"$.name: a credential named {credential.name!r} exists already",
            code="name_taken",
            status_code=409,
            extra={"errors": [{"path": "$.name", "message": "already taken"}]},
        ) from None
    return credential


def credential_create(
    *, owner: Any, provider: str, name: str = "", api_key: str = "", api_base: str = ""
) -> ProviderCredential:
    """A user's credential, or a site-wide one with `owner=None` (admins only: the API
    and the admin check that)."""
    name = name or provider
    credential_check(provider, name, api_base)
    if not api_key and not PROVIDERS[provider].needs_base:
        raise invalid("$.api_key", "the provider's API key is required")
    credential = ProviderCredential(owner=owner, provider=provider, name=name, api_base=api_base)
    credential_store_key(credential, api_key)
    return _save(credential)


def credential_update(
    *, credential: ProviderCredential, data: dict[str, Any]
) -> ProviderCredential:
    """Change the name, base or key; a key left out keeps the stored one, an empty key
    clears it (OpenAI-compatible servers only: the others need one)."""
    name = data.get("name", credential.name)
    api_base = data.get("api_base", credential.api_base)
    credential_check(credential.provider, name, api_base)
    credential.name, credential.api_base = name, api_base
    if "api_key" in data:
        if not data["api_key"] and not PROVIDERS[credential.provider].needs_base:
            raise invalid("$.api_key", "the provider's API key is required")
        credential_store_key(credential, data["api_key"])
    return _save(credential)


def credential_delete(*, credential: ProviderCredential) -> None:
    credential.delete()
