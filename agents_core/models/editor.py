"""Editor overrides, their revisions, and edit locks (docs/editor-locks.md).

An override is stored apart from the code definition so that a re-sync of the code never
touches it, and the run applies it through agents_core.overrides under the agent's
editor policy. Studio agents have no code definition: their editor saves write the agent
row itself, and get the same revisions and locks.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class EditorOverride(models.Model):
    """What editors changed on a code agent; absent keys mean "as in code"."""

    agent = models.OneToOneField(
        "agents_core.Agent", on_delete=models.CASCADE, related_name="editor_override"
    )
    # None = not overridden. Instructions are never None in code, so None is unambiguous.
    instructions = models.JSONField(null=True, blank=True)
    # {binding key: description}
    tool_descriptions = models.JSONField(default=dict, blank=True)
    # Code bindings switched off, and bindings added by editors {key: tool name}.
    tools_removed = models.JSONField(default=list, blank=True)
    tools_added = models.JSONField(default=dict, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"overrides of {self.agent_id}"

    def as_document(self) -> dict:
        return {
            "instructions": self.instructions,
            "tool_descriptions": dict(self.tool_descriptions),
            "tools_removed": list(self.tools_removed),
            "tools_added": dict(self.tools_added),
        }


class RevisionKind(models.TextChoices):
    SAVE = "save", "Save"
    RESET = "reset", "Reset to code"
    RESTORE = "restore", "Restore"


class Revision(models.Model):
    """One editor save: who, when, which fields, and the full document before and after."""

    agent = models.ForeignKey(
        "agents_core.Agent", on_delete=models.CASCADE, related_name="revisions"
    )
    # The agent's version this save produced (saves name the version they started from).
    version = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=RevisionKind.choices, default=RevisionKind.SAVE)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    fields = models.JSONField(default=list, help_text="Names of the fields this save changed.")
    before = models.JSONField(default=dict)
    after = models.JSONField(default=dict)
    # Fields the save asked for that code owns, removed before writing.
    stripped = models.JSONField(default=list, blank=True)
    # A code agent's code values at the time of the save ({"instructions", "tool_descriptions":
    # {key: text}}): what an override that appears or goes away is diffed against.
    code_values = models.JSONField(default=dict, blank=True)
    restored_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-version", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "version"], name="revision_unique_version"),
        ]

    def __str__(self) -> str:
        return f"{self.agent_id} v{self.version} ({self.kind})"


class LockEnd(models.TextChoices):
    RELEASED = "released", "Released"
    TAKEN_OVER = "taken_over", "Taken over after expiry"
    BROKEN = "broken", "Broken"
    # The holder took the lock over in another editing session (another tab or window).
    REPLACED = "replaced", "Taken over by another session of the holder"


class EditLock(models.Model):
    """An edit lock; ended rows stay as the lock history (takeovers and breaks recorded)."""

    agent = models.ForeignKey(
        "agents_core.Agent", on_delete=models.CASCADE, related_name="edit_locks"
    )
    holder = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    acquired_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    renewed_at = models.DateTimeField(null=True, blank=True)
    renew_count = models.PositiveIntegerField(default=0)
    ended_at = models.DateTimeField(null=True, blank=True)
    ended_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    end_reason = models.CharField(max_length=12, choices=LockEnd.choices, blank=True)

    class Meta:
        ordering = ["-acquired_at", "-id"]
        constraints = [
            # At most one open lock row per agent, whatever races happen above.
            models.UniqueConstraint(
                fields=["agent"],
                condition=models.Q(ended_at__isnull=True),
                name="editlock_one_open_per_agent",
            ),
        ]

    def __str__(self) -> str:
        return f"lock on {self.agent_id} by {self.holder_id}"
