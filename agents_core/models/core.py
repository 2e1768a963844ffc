"""Agents, their bindings, threads, messages, runs, tool calls and the event log.

Tables of the other parts (signals, the inbox, tasks, editor overrides and locks) live in
this package too, so that every part of the studio shares one picture of the domain.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from common.constraints import unique_per_owner
from common.fields import NulFreeJSONEncoder, NulFreeTextField
from tools_app.models import Source  # one enum for where agents and tools come from


class AgentQuerySet(models.QuerySet["Agent"]):
    def live(self) -> AgentQuerySet:
        """Agents whose definition still exists (code agents removed from code are gone)."""
        return self.filter(gone_at__isnull=True)

    def visible_to(self, user) -> AgentQuerySet:
        """Code agents are shared with every signed-in user; studio agents with their owner."""
        return self.filter(models.Q(source=Source.CODE) | models.Q(owner=user))

    def namespace_of(self, owner) -> AgentQuerySet:
        """The agents whose slugs a new agent of `owner` may not repeat: the owner's own and
        the shared ones (no owner: code agents). Another user's slugs are no concern of
        theirs, so a clash never tells anyone that someone else has a slug."""
        return self.filter(models.Q(owner__isnull=True) | models.Q(owner=owner))


class Agent(models.Model):
    # Unique per owner, and among the shared (code) agents: see Meta.constraints.
    slug = models.SlugField(max_length=100, help_text="The agent's id.")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    model = models.CharField(max_length=200, help_text="A litellm model string: provider/model.")
    # A string, a list of strings, a system message {role, content, providerOptions},
    # or a list of system messages.
    instructions = models.JSONField(default=str, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    # maxSteps, toolChoice, activeTools, temperature, autoResume ...
    default_options = models.JSONField(default=dict, blank=True)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.STUDIO)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="agents",
        help_text="Owner of a studio agent; code agents have none.",
    )
    # None: instructions and tools editable; False: nothing; or a dict.
    editor_policy = models.JSONField(null=True, blank=True)
    notification_policy = models.JSONField(default=dict, blank=True)
    code_hash = models.CharField(max_length=64, blank=True)
    gone_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when a code definition disappeared from code."
    )
    # Bumped on every edit; saves name the version they started from.
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = AgentQuerySet.as_manager()

    class Meta:
        ordering = ["name", "slug"]
        permissions = [("break_editlock", "Can break another editor's live edit lock")]
        constraints = unique_per_owner("slug", prefix="agent", what="agent")

    def __str__(self) -> str:
        return f"{self.name} ({self.slug})"

    @property
    def is_code(self) -> bool:
        return self.source == Source.CODE


class AgentTool(models.Model):
    """A tool bound to an agent under the key the model sees (the events' toolName)."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="tool_bindings")
    tool = models.ForeignKey("tools_app.Tool", on_delete=models.CASCADE, related_name="bindings")
    key = models.CharField(max_length=64)
    description_override = models.TextField(blank=True)
    requires_approval = models.BooleanField(default=False)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.STUDIO)
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "key"], name="agenttool_unique_key"),
        ]

    def __str__(self) -> str:
        return f"{self.agent.slug}.{self.key}"


class SubAgent(models.Model):
    """A sub-agent binding; the model sees it as the tool `agent-<key>`."""

    parent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="subagent_bindings")
    child = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="parent_bindings")
    key = models.CharField(max_length=64)
    description_override = models.TextField(blank=True)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.STUDIO)
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["parent", "key"], name="subagent_unique_key"),
            models.CheckConstraint(
                condition=~models.Q(parent=models.F("child")), name="subagent_not_self"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.parent.slug} -> agent-{self.key}"

    @property
    def tool_name(self) -> str:
        return f"agent-{self.key}"


class Thread(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="threads")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="threads"
    )
    # Mastra's resource id: who the thread belongs to (the owner's id unless set).
    resource_id = models.CharField(max_length=200, db_index=True)
    title = models.CharField(max_length=200, blank=True)
    # The title is the first-message placeholder, waiting to be replaced by the model's
    # summary of the first exchange; a rename by the user (or the summary) clears it.
    title_auto = models.BooleanField(default=False)
    metadata = models.JSONField(default=dict, blank=True)
    # The last stream-event sequence number handed out; bumped with an atomic update.
    last_seq = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.title or str(self.id)


class MessageRole(models.TextChoices):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SIGNAL = "signal"


class Message(models.Model):
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="messages")
    run = models.ForeignKey(
        "Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="messages"
    )
    role = models.CharField(max_length=16, choices=MessageRole.choices)
    # A list of parts: {"type": "text", "text": ...}, {"type": "tool-call", ...}, ...
    # Model text and tool results may hold a NUL, which PostgreSQL cannot store: U+FFFD.
    parts = models.JSONField(default=list, encoder=NulFreeJSONEncoder)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.role} #{self.pk}"


class RunStatus(models.TextChoices):
    RUNNING = "running"
    SUSPENDED = "suspended"
    COMPLETED = "completed"
    FAILED = "failed"
    ABORTED = "aborted"


class RunQuerySet(models.QuerySet["Run"]):
    def running(self) -> RunQuerySet:
        return self.filter(status=RunStatus.RUNNING)

    def active(self) -> RunQuerySet:
        """Running, or suspended on a call that waits for an answer."""
        return self.filter(status__in=[RunStatus.RUNNING, RunStatus.SUSPENDED])


class Run(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="runs")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(
        max_length=16, choices=RunStatus.choices, default=RunStatus.RUNNING, db_index=True
    )
    # Per-run options: toolChoice, activeTools, maxSteps, hooks ...
    options = models.JSONField(default=dict, blank=True)
    step = models.PositiveIntegerField(default=0)
    # What a suspended run needs to continue after a restart.
    state = models.JSONField(default=dict, blank=True, encoder=NulFreeJSONEncoder)
    error = NulFreeTextField(blank=True)
    usage = models.JSONField(default=dict, blank=True)
    # The model that answered the last model call: the agent's, or one of its fallbacks.
    model = models.CharField(max_length=200, blank=True, default="")
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    # Who executes it: "" in the process that started it (STUDIO_RUN_EXECUTOR=inline),
    # "queued" until a run worker claims it, then that worker's name (runtime/execution/worker.py).
    worker = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(
                fields=["created_at"],
                condition=models.Q(worker="queued"),
                name="run_queued_for_worker",
            ),
        ]
        constraints = [
            # At most one run is active on a thread at a time.
            models.UniqueConstraint(
                fields=["thread"],
                condition=models.Q(status="running"),
                name="run_one_running_per_thread",
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.id} ({self.status})"


class RunWorkerBeat(models.Model):
    """A run worker's heartbeat (runtime/execution/worker.py): the runs claimed by a worker
    whose beat stopped are ended as interrupted by the workers still alive."""

    name = models.CharField(max_length=200, unique=True)
    started_at = models.DateTimeField()
    beat_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"worker {self.name}"


class ToolCallStatus(models.TextChoices):
    STREAMING = "streaming"
    RUNNING = "running"
    PENDING = "pending"
    SUSPENDED = "suspended"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"


# A call in one of these states has no result yet: when its run ends, it fails.
OPEN_CALLS = (ToolCallStatus.STREAMING, ToolCallStatus.RUNNING)


class ToolCall(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="tool_calls")
    call_id = models.CharField(max_length=100, help_text="The model's toolCallId.")
    tool_name = models.CharField(max_length=100, help_text="The binding key the model used.")
    tool = models.ForeignKey(
        "tools_app.Tool", null=True, blank=True, on_delete=models.SET_NULL, related_name="calls"
    )
    step = models.PositiveIntegerField(default=0)
    status = models.CharField(
        max_length=16, choices=ToolCallStatus.choices, default=ToolCallStatus.STREAMING
    )
    # What the model and the tool produced may hold a NUL: stored as U+FFFD (common.fields).
    input_text = NulFreeTextField(blank=True, help_text="The raw argument text the model wrote.")
    input = models.JSONField(null=True, blank=True, encoder=NulFreeJSONEncoder)
    output = models.JSONField(null=True, blank=True, encoder=NulFreeJSONEncoder)
    model_output = models.JSONField(null=True, blank=True, encoder=NulFreeJSONEncoder)
    error = NulFreeTextField(blank=True)
    suspend_payload = models.JSONField(null=True, blank=True, encoder=NulFreeJSONEncoder)
    resume_payload = models.JSONField(null=True, blank=True, encoder=NulFreeJSONEncoder)
    hook_decisions = models.JSONField(default=list, blank=True, encoder=NulFreeJSONEncoder)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "call_id"], name="toolcall_unique_per_run"),
        ]

    def __str__(self) -> str:
        return f"{self.tool_name} ({self.status})"


class StreamEvent(models.Model):
    """Every event a run published, with its per-thread sequence number."""

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="events")
    run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.CASCADE, related_name="events"
    )
    seq = models.BigIntegerField()
    type = models.CharField(max_length=40)
    payload = models.JSONField(default=dict, encoder=NulFreeJSONEncoder)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["thread", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["thread", "seq"], name="streamevent_unique_seq"),
        ]

    def __str__(self) -> str:
        return f"{self.type} #{self.seq}"
