"""OAuth 2.0 tokens the studio obtained for a tool or a source, encrypted at rest.

A service token (client credentials, JWT bearer) has no user: it is the tool's cache,
keyed by a digest of the auth config and of the stored credentials, so changing either
fetches a new one. A user token (authorization code) belongs to the user who connected
their account; a run uses the token of the user it runs for.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class OAuthToken(models.Model):
    # "tool:<id>:<user id or service>" or "source:<id>:<...>": one row per holder.
    key = models.CharField(max_length=100, unique=True)
    tool = models.ForeignKey(
        "tools_app.Tool", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    source = models.ForeignKey(
        "tools_app.ToolSource", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="oauth_tokens",
    )
    # sha256 of what the token was obtained with (see the module docstring).
    digest = models.CharField(max_length=64)
    # Fernet token of the token response (access_token, refresh_token, scope...).
    token_encrypted = models.TextField()
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(tool__isnull=False) | models.Q(source__isnull=False),
                name="oauth_token_has_holder",
            )
        ]

    def __str__(self) -> str:
        return self.key
