"""A user's web search setting: which search API the `web_search` tool calls for them.

One row per user. The API key is a Fernet token (tools_app/crypto.py) and only a hint of
it ever leaves the server. Without a row, the server's settings (STUDIO_WEB_SEARCH_*)
apply; without either, web_search answers a clear error (tools_app.websearch).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class WebSearchProvider(models.TextChoices):
    SEARXNG = "searxng", "SearXNG instance"
    BRAVE = "brave", "Brave Search API"
    TAVILY = "tavily", "Tavily"
    NATIVE = "native", "The model provider's own search (litellm web_search_options)"


class WebSearchSetting(models.Model):
    owner = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="web_search_setting"
    )
    provider = models.CharField(max_length=16, choices=WebSearchProvider.choices)
    # The service's root URL (SearXNG: required; Brave, Tavily: blank for the official one).
    # For "native": the model string that searches (blank: the agent's own model).
    base_url = models.CharField(max_length=500, blank=True)
    model = models.CharField(max_length=200, blank=True)
    secret_encrypted = models.TextField(blank=True)
    key_hint = models.CharField(max_length=16, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.owner_id}: {self.provider}"
