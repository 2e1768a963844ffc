"""Admin for tool and sub-agent bindings: the inlines of the agent change page, and the
bindings' own pages.

A code agent's bindings are changed through its editor (policy, lock, revisions: the
agent page's editor, the studio page, the REST API), never on the bindings' own pages:
there they are read-only and the add form offers studio agents only. A studio agent's
binding is written there only while no other session holds the agent's edit lock.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest

from agents_core.editor.services.locks import lock_blocking, lock_guard, locked_error
from agents_core.models import Agent, AgentTool, Source, SubAgent
from agents_core.serializers import (
    BINDING_KEY,
    BINDING_KEY_MESSAGE,
    SUBAGENT_KEY,
    SUBAGENT_KEY_MESSAGE,
)
from agents_core.services.binding_rules import subagent_path


class BindingForm(forms.ModelForm):
    """A binding's form: the key follows its kind's rule, as in the REST API."""

    key_pattern = BINDING_KEY
    key_message = BINDING_KEY_MESSAGE

    def clean_key(self) -> str:
        key = self.cleaned_data["key"]
        if not self.key_pattern.match(key):
            raise ValidationError(self.key_message)
        return key


class AgentToolInlineForm(BindingForm):
    class Meta:
        model = AgentTool
        fields = ("agent", "tool", "key", "description_override", "requires_approval", "position")


class SubAgentInlineForm(BindingForm):
    key_pattern = SUBAGENT_KEY
    key_message = SUBAGENT_KEY_MESSAGE

    class Meta:
        model = SubAgent
        fields = ("parent", "child", "key", "description_override", "position")

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        # Inline on the agent page the parent is the page's agent; on its own page a field.
        parent = cleaned.get("parent") or getattr(self.instance, "parent", None)
        child = cleaned.get("child")
        if parent is None or parent.pk is None or child is None or parent.pk == child.pk:
            return cleaned  # "not itself" is the model's own check constraint
        if subagent_path(child, parent) is not None:
            raise ValidationError(
                {"child": f"{child.slug} already reaches {parent.slug}: that would be a cycle."}
            )
        return cleaned


class BindingInlineMixin:
    """Bindings of a code agent follow the code: shown, not edited, here."""

    def _code_agent(self, obj: Agent | None) -> bool:
        return obj is not None and obj.source == Source.CODE

    def has_add_permission(self, request: HttpRequest, obj: Agent | None = None) -> bool:
        return not self._code_agent(obj) and super().has_add_permission(request, obj)  # type: ignore[misc]

    def has_change_permission(self, request: HttpRequest, obj: Agent | None = None) -> bool:
        return not self._code_agent(obj) and super().has_change_permission(request, obj)  # type: ignore[misc]

    def has_delete_permission(self, request: HttpRequest, obj: Agent | None = None) -> bool:
        return not self._code_agent(obj) and super().has_delete_permission(request, obj)  # type: ignore[misc]


class AgentToolInline(BindingInlineMixin, admin.TabularInline):
    model = AgentTool
    form = AgentToolInlineForm
    fk_name = "agent"
    extra = 0
    fields = ("position", "key", "tool", "description_override", "requires_approval", "source")
    readonly_fields = ("source",)
    autocomplete_fields = ("tool",)


class SubAgentInline(BindingInlineMixin, admin.TabularInline):
    model = SubAgent
    form = SubAgentInlineForm
    fk_name = "parent"
    extra = 0
    fields = ("position", "key", "child", "description_override", "source")
    readonly_fields = ("source",)
    autocomplete_fields = ("child",)
    verbose_name = "sub-agent"


class LockCheckedForm(forms.ModelForm):
    """A binding form on the bindings' own pages: refused while another session holds the
    edit lock of the binding's agent (this page holds none)."""

    editor_user: Any = None
    parent_field = "agent"

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        agent = cleaned.get(self.parent_field) or getattr(self.instance, self.parent_field, None)
        if isinstance(agent, Agent):
            lock = lock_blocking(agent=agent, user=self.editor_user, lock_id=None)
            if lock is not None:
                raise ValidationError(
                    locked_error(lock, user=self.editor_user, writing=True).message
                )
        return cleaned


class BindingAdmin(admin.ModelAdmin):
    """Bindings on their own pages; see the module docstring for what is written here."""

    list_filter = ("source",)
    parent_field = "agent"

    def _agent(self, obj: Any) -> Agent:
        return getattr(obj, self.parent_field)

    def _writable(self, obj: Any) -> bool:
        return obj is None or (obj.source != Source.CODE and not self._agent(obj).is_code)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._writable(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._writable(obj) and super().has_delete_permission(request, obj)

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any):
        if db_field.name == self.parent_field:
            kwargs["queryset"] = Agent.objects.filter(source=Source.STUDIO)
            kwargs["help_text"] = "A studio agent (a code agent's tools are edited in its editor)."
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any):
        form = super().get_form(request, obj, change=change, **kwargs)
        attrs = {"editor_user": request.user, "parent_field": self.parent_field}
        return type(form.__name__, (LockCheckedForm, form), attrs)

    # The form checked the lock for the user; these check it again in the write's
    # transaction, under the agent's row lock, where a lock taken meanwhile refuses it.
    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        lock_guard(agent=self._agent(obj), user=request.user, lock_id=None)
        super().save_model(request, obj, form, change)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        lock_guard(agent=self._agent(obj), user=request.user, lock_id=None)
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for agent in Agent.objects.filter(pk__in=queryset.values(self.parent_field)):
            if agent.is_code:
                raise ValidationError(f"{agent.slug}'s bindings are edited in its editor.")
            lock_guard(agent=agent, user=request.user, lock_id=None)
        super().delete_queryset(request, queryset)


@admin.register(AgentTool)
class AgentToolAdmin(BindingAdmin):
    form = AgentToolInlineForm
    list_display = ("key", "agent", "tool", "source", "requires_approval", "position", "created_at")
    list_filter = ("source", "requires_approval", "tool__kind")
    search_fields = ("key", "agent__slug", "tool__name")
    list_select_related = ("agent", "tool")
    autocomplete_fields = ("agent", "tool")
    readonly_fields = ("source", "created_at")


@admin.register(SubAgent)
class SubAgentAdmin(BindingAdmin):
    form = SubAgentInlineForm
    parent_field = "parent"
    list_display = ("key", "parent", "child", "source", "position", "created_at")
    search_fields = ("key", "parent__slug", "child__slug")
    list_select_related = ("parent", "child")
    autocomplete_fields = ("parent", "child")
    readonly_fields = ("source", "created_at")
