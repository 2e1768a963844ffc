"""Spans: what a run did, as a tree per trace (the root run and its sub-agent runs), and
the one span of a tool run from the test console."""

from __future__ import annotations

from django.db import models

from common.fields import NulFreeJSONEncoder, NulFreeTextField


class SpanKind(models.TextChoices):
    RUN = "run"
    MODEL = "model"
    TOOL = "tool"
    HOOK = "hook"
    SUSPENSION = "suspension"
    SIGNAL = "signal"
    SUBAGENT = "subagent"


class Span(models.Model):
    # 16 hex digits (8 bytes), as OpenTelemetry's span ids; the trace is the root run's id
    # (16 bytes), so both go out over OTLP as they are.
    span_id = models.CharField(max_length=16, unique=True)
    trace_id = models.UUIDField()
    parent_id = models.CharField(max_length=16, blank=True, default="")
    # The agent run the span belongs to; a tool run from the test console has no agent run,
    # and its one span is keyed by the tool run instead (its trace id is the tool run's).
    run = models.ForeignKey(
        "agents_core.Run", null=True, blank=True, on_delete=models.CASCADE, related_name="spans"
    )
    tool_run = models.ForeignKey(
        "tools_app.ToolRun",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="spans",
    )
    kind = models.CharField(max_length=16, choices=SpanKind.choices)
    name = models.CharField(max_length=200)
    start = models.DateTimeField()
    # None while the span is open (a suspension waiting, a pending async tool).
    end = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, default="ok")
    error = NulFreeTextField(blank=True)
    # Model output and tool values may hold a NUL: stored as U+FFFD (common.fields).
    attributes = models.JSONField(default=dict, blank=True, encoder=NulFreeJSONEncoder)
    exported_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["start", "id"]
        indexes = [
            models.Index(fields=["trace_id", "start"], name="span_trace_start"),
            models.Index(fields=["start"], name="span_start"),
            models.Index(
                fields=["id"], condition=models.Q(exported_at__isnull=True), name="span_unexported"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"

    @property
    def duration_ms(self) -> float | None:
        if self.end is None:
            return None
        return (self.end - self.start).total_seconds() * 1000
