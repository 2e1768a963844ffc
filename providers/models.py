"""A key for a model provider: a user's own, or a site-wide one an admin sets (no owner)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from providers.catalog import PROVIDERS


class ProviderCredential(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="provider_credentials",
        help_text="Empty: a site-wide credential every user may use (set by an admin).",
    )
    provider = models.CharField(
        max_length=32, choices=[(p.id, p.label) for p in PROVIDERS.values()]
    )
    # A slug: an OpenAI-compatible server's models are written <name>/<model>.
    name = models.CharField(max_length=64)
    api_base = models.CharField(max_length=500, blank=True)
    # A Fernet token of {"api_key": ...} (tools_app/crypto.py); never sent to a browser.
    secret_encrypted = models.TextField(blank=True)
    # What a page may show of the key: "sk-…abcd".
    key_hint = models.CharField(max_length=16, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["provider", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "name"], name="provider_credential_owner_name"
            ),
            models.UniqueConstraint(
                fields=["name"],
                condition=models.Q(owner__isnull=True),
                name="provider_credential_site_name",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.provider})"

    @property
    def is_site(self) -> bool:
        return self.owner_id is None
