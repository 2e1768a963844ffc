"""The task list of a thread, kept by the task_* system tools."""

from __future__ import annotations

from django.db import models

from common.fields import NulFreeCharField, NulFreeTextField


class TaskStatus(models.TextChoices):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


class TaskItem(models.Model):
    thread = models.ForeignKey("agents_core.Thread", on_delete=models.CASCADE, related_name="tasks")
    # Written by the task tools from a model's arguments: a NUL is stored as U+FFFD.
    title = NulFreeCharField(max_length=300)
    notes = NulFreeTextField(blank=True)
    status = models.CharField(max_length=16, choices=TaskStatus.choices, default=TaskStatus.PENDING)
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["thread", "position", "id"]
        constraints = [
            # The rule the tools enforce, kept by the database too: one task in progress.
            models.UniqueConstraint(
                fields=["thread"],
                condition=models.Q(status="in_progress"),
                name="taskitem_one_in_progress_per_thread",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.title} ({self.status})"
