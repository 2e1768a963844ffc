"""Tools and the record of every tool run."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from common.constraints import unique_per_owner
from common.fields import NulFreeJSONEncoder, NulFreeTextField


class Source(models.TextChoices):
    """Where a tool or an agent comes from: code (synced, read-only in the studio) or the
    studio (made by a user, who owns it)."""

    CODE = "code", "Code"
    STUDIO = "studio", "Studio"


class ToolKind(models.TextChoices):
    CODE = "code", "Defined in Python code"
    PYTHON = "python", "Python code (sandboxed)"
    HTTP = "http", "HTTP request"
    OPENAPI = "openapi", "OpenAPI operation"
    MCP = "mcp", "MCP server tool"
    A2A = "a2a", "A2A agent"
    AGENT = "agent", "Agent as tool"
    CLIENT = "client", "Client function (runs in the browser)"
    SYSTEM = "system", "Built-in system tool"
    WIDGET = "widget", "Widget shown in the chat"


class ExecutionMode(models.TextChoices):
    SYNC = "sync", "Sync (the caller waits)"
    ASYNC = "async", "Async (a Celery worker runs it)"


class ToolQuerySet(models.QuerySet["Tool"]):
    def live(self) -> ToolQuerySet:
        return self.filter(gone_at__isnull=True)

    def visible_to(self, user) -> ToolQuerySet:
        """Code and built-in tools are shared; studio tools belong to their owner."""
        return self.filter(models.Q(source=Source.CODE) | models.Q(owner=user))

    def namespace_of(self, owner) -> ToolQuerySet:
        """The tools whose names a new tool of `owner` may not repeat: the owner's own and
        the shared ones (no owner: code and built-in tools). Another user's names are no
        concern of theirs, so a clash never tells anyone that someone else has a name."""
        return self.filter(models.Q(owner__isnull=True) | models.Q(owner=owner))


class Tool(models.Model):
    # Unique per owner, and among the shared (code, built-in) tools: see Meta.constraints.
    name = models.CharField(max_length=64, help_text="snake_case, unique per owner.")
    description = models.TextField(blank=True)
    kind = models.CharField(max_length=16, choices=ToolKind.choices)
    input_schema = models.JSONField(default=dict, blank=True)
    output_schema = models.JSONField(null=True, blank=True)
    execution_mode = models.CharField(
        max_length=8, choices=ExecutionMode.choices, default=ExecutionMode.SYNC
    )
    timeout_seconds = models.FloatField(default=30.0)
    # Type-specific configuration (URL template, code body, server id, system tool name...).
    config = models.JSONField(default=dict, blank=True)
    # Fernet token of a JSON object; see tools_app.crypto. Never serialized.
    credentials_encrypted = models.TextField(blank=True, editable=False)
    # to_model_output / transform settings for tools configured in the studio.
    model_output = models.JSONField(default=dict, blank=True)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.STUDIO)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="tools",
    )
    code_hash = models.CharField(max_length=64, blank=True)
    gone_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ToolQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = unique_per_owner("name", prefix="tool", what="tool")

    def __str__(self) -> str:
        return self.name


class ToolRunStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


class ToolRun(models.Model):
    """One execution of a tool from the test console, the API, the CLI or a run."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(
        max_length=16, choices=ToolRunStatus.choices, default=ToolRunStatus.PENDING, db_index=True
    )
    mode = models.CharField(max_length=8, choices=ExecutionMode.choices)
    # What the tool produced may hold a NUL, which PostgreSQL cannot store: U+FFFD instead.
    input = models.JSONField(null=True, blank=True, encoder=NulFreeJSONEncoder)
    output = models.JSONField(null=True, blank=True, encoder=NulFreeJSONEncoder)
    model_output = models.JSONField(null=True, blank=True, encoder=NulFreeJSONEncoder)
    error = NulFreeTextField(blank=True)
    # [{"path": "$.city", "message": ...}] for input/output validation failures.
    errors = models.JSONField(default=list, blank=True, encoder=NulFreeJSONEncoder)
    logs = NulFreeTextField(blank=True)
    duration_ms = models.FloatField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # An async run being executed: the process that holds it (`host:pid`) and until when
    # its lease runs; the process renews the lease while the tool runs, and any Celery
    # worker puts a run whose lease expired back in the queue (tools_app/services/leases.py).
    worker = models.CharField(max_length=200, blank=True, default="")
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # When the run was last handed to the broker (pending runs nobody claimed are
    # handed again after a while: a lost message).
    enqueued_at = models.DateTimeField(null=True, blank=True)
    # The agent run's tool call this execution serves, when it came from a chat.
    tool_call = models.ForeignKey(
        "agents_core.ToolCall",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="tool_runs",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.tool.name} {self.status}"


# External tool sources (OpenAPI, MCP, A2A) live in their own module.
# OAuth tokens of tools and sources (tools_app.auth).
from tools_app.models_auth import OAuthToken  # noqa: E402,F401
from tools_app.models_sources import SourceKind, ToolSource  # noqa: E402,F401

# Each user's web search setting (the web_search system tool).
from tools_app.models_websearch import WebSearchProvider, WebSearchSetting  # noqa: E402,F401
