"""Which search a user's web_search uses, and the writes of their setting.

A user's own setting (tools_app.models_websearch) comes first, then the server's
(settings.STUDIO_WEB_SEARCH_*), else nothing: web_search then says how to configure one.
The API key is stored encrypted; reads give only `key_set` and a hint of it.
"""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings

from common.exceptions import ApplicationError
from providers.gate import model_refusal
from tools_app.crypto import decrypt, encrypt, key_hint
from tools_app.models_websearch import WebSearchProvider, WebSearchSetting
from tools_app.websearch.backends import DEFAULT_BASES, SearchConfig

NEEDS_KEY = {"brave", "tavily"}
MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$")


def invalid(path: str, message: str) -> ApplicationError:
    return ApplicationError(
        f"{path}: {message}", code="invalid", extra={"errors": [{"path": path, "message": message}]}
    )


def _server_config() -> SearchConfig | None:
    provider = settings.STUDIO_WEB_SEARCH_PROVIDER
    if not provider:
        return None
    return SearchConfig(
        provider=provider,
        base_url=settings.STUDIO_WEB_SEARCH_URL,
        api_key=settings.STUDIO_WEB_SEARCH_API_KEY,
        model=settings.STUDIO_WEB_SEARCH_MODEL,
        origin="server",
    )


def search_config_for(user: Any) -> SearchConfig | None:
    """The search the user's web_search calls: theirs, else the server's, else None."""
    row = (
        WebSearchSetting.objects.filter(owner=user).first()
        if user is not None and getattr(user, "pk", None)
        else None
    )
    if row is None:
        return _server_config()
    api_key = decrypt(row.secret_encrypted).get("api_key", "") if row.secret_encrypted else ""
    return SearchConfig(
        provider=row.provider, base_url=row.base_url, api_key=api_key, model=row.model
    )


def _check(provider: Any, base_url: Any, model: Any) -> None:
    if provider not in WebSearchProvider.values:
        raise invalid("$.provider", f"must be one of {', '.join(WebSearchProvider.values)}")
    if not isinstance(base_url, str) or len(base_url) > 500:
        raise invalid("$.base_url", "must be a URL of at most 500 characters")
    if base_url and not re.match(r"^https?://[^\s/?#]+", base_url, re.IGNORECASE):
        raise invalid("$.base_url", "must start with http:// or https:// and name a host")
    if provider == "searxng" and not base_url:
        raise invalid(
            "$.base_url", "a SearXNG instance needs its URL, e.g. https://searx.example.org"
        )
    if provider == "native" and base_url:
        raise invalid("$.base_url", "the model provider's search has no URL; leave it empty")
    if not isinstance(model, str) or (model and not MODEL.match(model)):
        raise invalid("$.model", "must be a model string such as openai/gpt-4o-search-preview")
    if model and provider != "native":
        raise invalid("$.model", "only the model provider's search (native) takes a model")
    if model and (refusal := model_refusal(model)):
        raise invalid("$.model", refusal)


def web_search_save(*, owner: Any, data: dict[str, Any]) -> WebSearchSetting:
    """Create or replace the user's setting. `api_key` left out keeps the stored key (for
    the same provider); an empty one clears it."""
    row = WebSearchSetting.objects.filter(owner=owner).first()
    provider = data.get("provider")
    base_url = data.get("base_url", "")
    model = data.get("model", "")
    _check(provider, base_url, model)
    if "api_key" in data and not isinstance(data["api_key"], str):
        raise invalid("$.api_key", "must be a string")
    same_provider = row is not None and row.provider == provider
    if "api_key" in data:
        api_key = data["api_key"].strip()
    elif same_provider and row is not None and row.secret_encrypted:
        api_key = decrypt(row.secret_encrypted).get("api_key", "")
    else:
        api_key = ""
    if len(api_key) > 1000:
        raise invalid("$.api_key", "must be at most 1000 characters")
    if provider in NEEDS_KEY and not api_key:
        raise invalid("$.api_key", f"{WebSearchProvider(provider).label} needs an API key")
    if row is None:
        row = WebSearchSetting(owner=owner)
    row.provider, row.base_url, row.model = provider, base_url, model
    row.secret_encrypted = encrypt({"api_key": api_key}) if api_key else ""
    row.key_hint = key_hint(api_key) if api_key else ""
    row.save()
    return row


def web_search_delete(*, owner: Any) -> None:
    WebSearchSetting.objects.filter(owner=owner).delete()


def web_search_view(*, user: Any) -> dict[str, Any]:
    """What the settings page and API show: the user's setting (never the key), and
    whether the server has one of its own."""
    row = WebSearchSetting.objects.filter(owner=user).first()
    server = _server_config()
    return {
        "setting": None
        if row is None
        else {
            "provider": row.provider,
            "base_url": row.base_url,
            "model": row.model,
            "key_set": bool(row.secret_encrypted),
            "key_hint": row.key_hint,
            "updated_at": row.updated_at.isoformat(),
        },
        "server": None if server is None else {"provider": server.provider},
        "providers": [
            {
                "id": choice.value,
                "label": choice.label,
                "needs_key": choice.value in NEEDS_KEY,
                "needs_url": choice.value == "searxng",
                "default_url": DEFAULT_BASES.get(choice.value, ""),
            }
            for choice in WebSearchProvider
        ],
    }
