"""Where external tools come from: an OpenAPI spec, an MCP server or an A2A agent.

A ToolSource keeps what was imported (the spec, the server's tool list, the agent card)
so that a re-import can be compared with it; the tools made from it point back with
`Tool.config["source_id"]`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SourceKind(models.TextChoices):
    OPENAPI = "openapi", "OpenAPI spec"
    MCP = "mcp", "MCP server"
    A2A = "a2a", "A2A agent"


class ToolSource(models.Model):
    kind = models.CharField(max_length=16, choices=SourceKind.choices)
    name = models.CharField(max_length=200)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tool_sources"
    )
    # The spec's URL, the MCP endpoint or the agent card URL; blank for a pasted spec.
    url = models.URLField(max_length=2000, blank=True)
    # OpenAPI: the document as imported; MCP: {"tools": [...]} as last listed;
    # A2A: the agent card.
    document = models.JSONField(default=dict, blank=True)
    # Non-secret settings: OpenAPI base URL and auth scheme, MCP transport...
    config = models.JSONField(default=dict, blank=True)
    # Fernet token of a JSON object (MCP headers, API keys); see tools_app.crypto.
    credentials_encrypted = models.TextField(blank=True, editable=False)
    imported_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.name}"


def _register_source_types() -> None:
    # The source kinds register themselves with the tool type registry here because this
    # module is imported with the models, before anything executes a tool.
    from tools_app.types import register

    for kind in (SourceKind.OPENAPI, SourceKind.MCP, SourceKind.A2A):
        register(str(kind), f"tools_app.types.{kind}")


_register_source_types()
