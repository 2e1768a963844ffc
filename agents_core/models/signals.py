"""Signals sent to a thread and the notification inbox (docs/signals.md).

A Signal is what the model may see: a message or a tagged XML block, delivered into a
running run before its next model call, waking an idle thread, persisted into the
thread's memory, queued for the next turn, or discarded. A NotificationRecord is the
durable inbox row written before any delivery decision, so that nothing a source sent is
lost when a delivery fails; the digest job claims and groups the pending ones.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SignalType(models.TextChoices):
    MESSAGE = "message"
    USER = "user"
    STATE = "state"
    REACTIVE = "reactive"
    NOTIFICATION = "notification"


class SignalDecision(models.TextChoices):
    WAKE = "wake"
    DELIVER = "deliver"
    PERSIST = "persist"
    DISCARD = "discard"
    QUEUE = "queue"
    SKIP = "skip"


class SignalStatus(models.TextChoices):
    # Waiting for the run in `run` to drain it before its next model call.
    PENDING = "pending"
    DELIVERED = "delivered"
    PERSISTED = "persisted"
    DISCARDED = "discarded"
    # Waiting for the thread's active run to end; then it starts the next run.
    QUEUED = "queued"


class Signal(models.Model):
    thread = models.ForeignKey(
        "agents_core.Thread", on_delete=models.CASCADE, related_name="signals"
    )
    # The run that was active when the signal was sent (the one it targets when pending).
    run = models.ForeignKey(
        "agents_core.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    type = models.CharField(max_length=16, choices=SignalType.choices)
    tag_name = models.CharField(max_length=64)
    contents = models.TextField(blank=True)
    attributes = models.JSONField(default=dict, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    state_id = models.CharField(max_length=200, blank=True)
    state_mode = models.CharField(max_length=16, blank=True)
    state_cache_key = models.CharField(max_length=200, blank=True)
    notification = models.ForeignKey(
        "agents_core.NotificationRecord",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="signals",
    )
    decision = models.CharField(max_length=16, choices=SignalDecision.choices)
    status = models.CharField(max_length=16, choices=SignalStatus.choices, db_index=True)
    delivered_in_run = models.ForeignKey(
        "agents_core.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["thread", "status"], name="signal_thread_status"),
            models.Index(fields=["thread", "state_id", "id"], name="signal_thread_state"),
        ]

    def __str__(self) -> str:
        return f"<{self.tag_name}> #{self.pk} ({self.status})"


class NotificationPriority(models.TextChoices):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    URGENT = "urgent"


PRIORITY_RANK = {"low": 0, "medium": 1, "high": 2, "urgent": 3}


class NotificationStatus(models.TextChoices):
    # Waiting for the digest job (due_at).
    PENDING = "pending"
    DELIVERED = "delivered"
    # A short summary reached the model; the full notification waits for an idle thread.
    SUMMARIZED = "summarized"
    DIGESTED = "digested"
    FAILED = "failed"


class NotificationRecord(models.Model):
    thread = models.ForeignKey(
        "agents_core.Thread", on_delete=models.CASCADE, related_name="notifications"
    )
    source = models.CharField(max_length=100)
    kind = models.CharField(max_length=100, blank=True)
    summary = models.TextField()
    priority = models.CharField(max_length=8, choices=NotificationPriority.choices)
    payload = models.JSONField(default=dict, blank=True)
    attributes = models.JSONField(default=dict, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    dedupe_key = models.CharField(max_length=200, blank=True)
    coalesce_key = models.CharField(max_length=200, blank=True)
    # How many notifications this record stands for (coalesced ones add up).
    count = models.PositiveIntegerField(default=1)
    status = models.CharField(
        max_length=12,
        choices=NotificationStatus.choices,
        default=NotificationStatus.PENDING,
        db_index=True,
    )
    # What the policy decided when the record arrived: now, summary, digest, persist.
    action = models.CharField(max_length=12, blank=True)
    due_at = models.DateTimeField(null=True, blank=True)
    # The digest job that claimed (and delivered) the record.
    claimed_at = models.DateTimeField(null=True, blank=True)
    claim_token = models.CharField(max_length=64, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["status", "due_at"], name="notification_due"),
            models.Index(fields=["thread", "status"], name="notification_thread_status"),
        ]

    def __str__(self) -> str:
        return f"{self.source}: {self.summary[:40]} ({self.priority}, {self.status})"
