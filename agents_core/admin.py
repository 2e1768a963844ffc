"""Django admin for agents_core: agents with their bindings, and the records that runs,
signals, tasks and the editor leave behind. The editor wraps AgentAdmin's change page
(agents_core.admin_editor.AgentEditorAdminMixin: policy, locks, versions), building on the
fieldsets and read-only fields defined here.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from agents_core.admin_bindings import AgentToolInline, SubAgentInline
from agents_core.admin_editor import AgentEditorAdminMixin
from agents_core.admin_forms import ModelEndpointsFormMixin
from agents_core.definitions import SLUG, DefinitionError, valid_model_string, validate_instructions
from agents_core.models import (
    Agent,
    EditLock,
    EditorOverride,
    ImportJob,
    Message,
    NotificationRecord,
    Revision,
    Run,
    RunWorkerBeat,
    Signal,
    Source,
    StreamEvent,
    TaskItem,
    Thread,
    ToolCall,
)
from agents_core.serializers import default_options_problems
from common.admin_forms import StudioModelAdmin


class RecordAdmin(admin.ModelAdmin):
    """Rows the studio writes itself (runs, events, revisions...): view and delete only."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RecordInline(admin.TabularInline):
    extra = 0
    show_change_link = True
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# --- agents -------------------------------------------------------------------------------
class AgentAdminForm(ModelEndpointsFormMixin, forms.ModelForm):
    """The same rules as the REST API (agents_core.serializers), for the fields shown."""

    class Meta:
        model = Agent
        fields = (
            "slug",
            "name",
            "description",
            "model",
            "owner",
            "instructions",
            "default_options",
            "metadata",
            "notification_policy",
        )

    def clean_slug(self) -> str:
        slug = self.cleaned_data["slug"]
        if not SLUG.match(slug):
            raise ValidationError(
                "Use lowercase letters, digits, - and _ (for example trip-planner)."
            )
        return slug

    def clean_model(self) -> str:
        model = self.cleaned_data["model"]
        if not valid_model_string(model):
            raise ValidationError("Use provider/model, for example openai/gpt-4o-mini.")
        return model

    def clean_instructions(self) -> Any:
        try:
            return validate_instructions(self.cleaned_data["instructions"])
        except DefinitionError as exc:
            raise ValidationError(str(exc)) from exc

    def clean_default_options(self) -> Any:
        options = self.cleaned_data["default_options"]
        if not isinstance(options, dict):
            raise ValidationError("default_options must be a JSON object.")
        problems = default_options_problems(options)
        if problems:
            raise ValidationError(problems)
        return options


@admin.register(Agent)
class AgentAdmin(AgentEditorAdminMixin, StudioModelAdmin):
    form = AgentAdminForm
    list_display = (
        "slug",
        "name",
        "model",
        "source",
        "owner",
        "tool_count",
        "is_live",
        "version",
        "updated_at",
    )
    list_filter = ("source", ("gone_at", admin.EmptyFieldListFilter), "model")
    search_fields = ("slug", "name", "description", "owner__username")
    list_select_related = ("owner",)
    autocomplete_fields = ("owner",)
    fieldsets = (
        (None, {"fields": ("slug", "name", "description", "model", "owner")}),
        (
            "Behaviour",
            {
                "fields": (
                    "instructions",
                    "default_options",
                    "metadata",
                    "notification_policy",
                    "editor_policy",
                )
            },
        ),
        (
            "Origin",
            {"fields": ("source", "code_hash", "gone_at", "version", "created_at", "updated_at")},
        ),
    )
    readonly_fields = (
        "source",
        "code_hash",
        "gone_at",
        "version",
        "created_at",
        "updated_at",
        "editor_policy",
    )
    inlines = (AgentToolInline, SubAgentInline)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Agent]:
        return super().get_queryset(request).annotate(tool_count=Count("tool_bindings"))

    def get_readonly_fields(self, request: HttpRequest, obj: Agent | None = None) -> list[str]:
        readonly = list(super().get_readonly_fields(request, obj))
        if obj is not None:
            readonly.append("slug")  # the agent's id: threads and URLs name it
        if obj is not None and obj.source == Source.CODE:
            # Code owns the row; the next sync would silently undo an edit made here.
            readonly += [f for f in self.form._meta.fields if f not in readonly]
        return readonly

    @admin.display(description="tools", ordering="tool_count")
    def tool_count(self, obj: Agent) -> int:
        return obj.tool_count  # type: ignore[attr-defined]

    @admin.display(description="live", boolean=True, ordering="gone_at")
    def is_live(self, obj: Agent) -> bool:
        return obj.gone_at is None

    def save_model(
        self, request: HttpRequest, obj: Agent, form: forms.ModelForm, change: bool
    ) -> None:
        if not change and obj.owner_id is None and obj.source == Source.STUDIO:
            obj.owner = request.user  # a studio agent nobody owns would be visible to no one
        super().save_model(request, obj, form, change)


# --- conversations and runs ---------------------------------------------------------------
class RunInline(RecordInline):
    model = Run
    fields = ("id", "status", "step", "started_by", "created_at", "finished_at")
    readonly_fields = fields


class ToolCallInline(RecordInline):
    model = ToolCall
    fields = ("call_id", "tool_name", "status", "step", "error", "created_at", "finished_at")
    readonly_fields = fields


@admin.register(Thread)
class ThreadAdmin(StudioModelAdmin):
    list_display = ("__str__", "agent", "owner", "resource_id", "last_seq", "updated_at")
    list_filter = ("agent__source", "updated_at")
    search_fields = ("title", "agent__slug", "owner__username", "resource_id")
    list_select_related = ("agent", "owner")
    autocomplete_fields = ("agent", "owner")
    readonly_fields = ("id", "last_seq", "created_at", "updated_at")
    inlines = (RunInline,)


@admin.register(Message)
class MessageAdmin(RecordAdmin):
    list_display = ("__str__", "thread", "role", "run", "created_at")
    list_filter = ("role", "created_at")
    search_fields = ("thread__title", "thread__agent__slug")
    list_select_related = ("thread", "run")


@admin.register(Run)
class RunAdmin(RecordAdmin):
    list_display = (
        "id",
        "agent",
        "thread",
        "status",
        "step",
        "started_by",
        "created_at",
        "finished_at",
    )
    list_filter = ("status", "created_at")
    search_fields = ("agent__slug", "thread__title", "error", "started_by__username")
    list_select_related = ("agent", "thread", "started_by")
    inlines = (ToolCallInline,)


@admin.register(ToolCall)
class ToolCallAdmin(RecordAdmin):
    list_display = ("tool_name", "call_id", "status", "run", "step", "created_at")
    list_filter = ("status", "created_at")
    search_fields = ("tool_name", "call_id", "error")
    list_select_related = ("run",)


@admin.register(StreamEvent)
class StreamEventAdmin(RecordAdmin):
    list_display = ("seq", "type", "thread", "run", "created_at")
    list_filter = ("type",)
    search_fields = ("type", "thread__title")
    list_select_related = ("thread", "run")


# --- editor, signals, tasks (written through their own services) --------------------------
@admin.register(EditorOverride)
class EditorOverrideAdmin(RecordAdmin):
    list_display = ("agent", "updated_by", "updated_at")
    list_filter = ("updated_at",)
    search_fields = ("agent__slug", "updated_by__username")
    list_select_related = ("agent", "updated_by")


@admin.register(Revision)
class RevisionAdmin(RecordAdmin):
    list_display = ("agent", "version", "kind", "author", "created_at")
    list_filter = ("kind", "created_at")
    search_fields = ("agent__slug", "author__username")
    list_select_related = ("agent", "author")


@admin.register(EditLock)
class EditLockAdmin(RecordAdmin):
    list_display = ("agent", "holder", "acquired_at", "expires_at", "ended_at", "end_reason")
    list_filter = ("end_reason", ("ended_at", admin.EmptyFieldListFilter))
    search_fields = ("agent__slug", "holder__username")
    list_select_related = ("agent", "holder")


@admin.register(RunWorkerBeat)
class RunWorkerBeatAdmin(RecordAdmin):
    list_display = ("name", "started_at", "beat_at")
    list_filter = ("beat_at", "started_at")
    search_fields = ("name",)


@admin.register(Signal)
class SignalAdmin(RecordAdmin):
    list_display = (
        "tag_name",
        "type",
        "thread",
        "status",
        "decision",
        "created_at",
        "delivered_at",
    )
    list_filter = ("type", "status", "decision")
    search_fields = ("tag_name", "contents", "thread__title")
    list_select_related = ("thread",)


@admin.register(NotificationRecord)
class NotificationRecordAdmin(RecordAdmin):
    list_display = ("summary", "thread", "priority", "status", "source", "count", "created_at")
    list_filter = ("priority", "status", "created_at")
    search_fields = ("summary", "source", "kind", "dedupe_key", "coalesce_key")
    list_select_related = ("thread",)


@admin.register(TaskItem)
class TaskItemAdmin(RecordAdmin):
    list_display = ("title", "thread", "status", "position", "updated_at")
    list_filter = ("status",)
    search_fields = ("title", "notes", "thread__title")
    list_select_related = ("thread",)


@admin.register(ImportJob)
class ImportJobAdmin(RecordAdmin):
    list_display = ("id", "owner", "status", "done", "total", "created_at", "finished_at")
    list_filter = ("status", "created_at")
    search_fields = ("owner__username",)
    list_select_related = ("owner",)
    exclude = ("request",)  # the posted document, possibly megabytes
