"""Reads: which credentials a user sees and which one a model call of theirs uses."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from providers.models import ProviderCredential


def credential_list(*, user: Any) -> QuerySet[ProviderCredential]:
    """The user's own credentials and the site-wide ones."""
    return ProviderCredential.objects.filter(Q(owner=user) | Q(owner__isnull=True))


def credential_get(*, user: Any, credential_id: int) -> ProviderCredential | None:
    """One the user may see (their own, or a site-wide one); None otherwise."""
    return credential_list(user=user).filter(pk=credential_id).first()


def credential_for(*, user: Any, provider: str) -> ProviderCredential | None:
    """The credential a call of `provider` (catalog id, or an OpenAI-compatible server's
    name) uses: the user's own before a site-wide one; by name within each."""
    matches = Q(provider=provider) & ~Q(provider="openai_compatible") | Q(
        provider="openai_compatible", name=provider
    )
    rows = ProviderCredential.objects.filter(matches)
    own = rows.filter(owner=user).order_by("name").first() if user is not None else None
    return own or rows.filter(owner__isnull=True).order_by("name").first()


def usable_providers(*, user: Any) -> dict[str, dict[str, Any]]:
    """Per catalog provider: can the user call it, and with whose key ("own", "site",
    "server": the environment), and the offline model, always ("offline"). An
    OpenAI-compatible server is listed by its name under "servers"."""
    from providers.catalog import PROVIDERS, server_key_configured
    from providers.models_list import OFFLINE_PROVIDER

    rows = list(credential_list(user=user).order_by("owner_id", "name"))
    out: dict[str, dict[str, Any]] = {}
    for provider in PROVIDERS.values():
        mine = [r for r in rows if r.provider == provider.id]
        via = (
            "own"
            if any(not r.is_site for r in mine)
            else "site"
            if mine
            else "server"
            if server_key_configured(provider)
            else ""
        )
        out[provider.id] = {"usable": bool(via), "via": via}
    out[OFFLINE_PROVIDER] = {"usable": True, "via": "offline"}
    out["openai_compatible"]["servers"] = sorted(
        {r.name for r in rows if r.provider == "openai_compatible"}
    )
    return out
