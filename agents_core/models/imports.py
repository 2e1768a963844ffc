"""Large agent imports, run by a Celery worker (agents_core/services/import_jobs.py)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class ImportJobStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


class ImportJob(models.Model):
    """One import of an export document: what was sent, how far it got, how it ended.

    The import itself is one transaction (all or nothing); `done` / `total` count the
    agents and tools created so far, written from a connection of their own so that they
    are visible while that transaction is open.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="import_jobs"
    )
    status = models.CharField(
        max_length=16, choices=ImportJobStatus.choices, default=ImportJobStatus.PENDING
    )
    # What was posted ({"document", "renames", "dry_run"}); emptied once the job ends.
    request = models.JSONField(default=dict, blank=True)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    # On success: what the synchronous import answers (the plan). On failure: its error
    # body ({"detail", "code", "errors" | "clashes"}) and the HTTP status it would have had.
    result = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    error_status = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"import {self.id} ({self.status} {self.done}/{self.total})"
