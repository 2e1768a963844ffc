"""The editor on the admin's agent change page (a mixin for AgentAdmin).

Instructions and tool descriptions are edited through agents_core.editor.services, so the
admin obeys the same policy, versions, revisions and locks as the studio page and the
API: code-owned fields are read-only, opening the page takes the edit lock (renewed by a
small heartbeat script), and a save that started from an old version is refused with the
current text, the user's own text kept in the form.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from agents_core.definitions import DefinitionError, validate_instructions
from agents_core.editor import selectors, services
from agents_core.editor.diff import as_text
from agents_core.editor.policy import field_ownership
from agents_core.models import Agent
from studio.exceptions import ApplicationError
from studio.json_input import JSONInputError, json_loads

PREFIX = "editor_"
# Who is viewing the change page, for the read-only lock display (it gets no request).
_viewer: ContextVar[Any] = ContextVar("admin_editor_viewer", default=None)
# Row fields a studio agent edits through the editor (versioned, with revisions).
STUDIO_ROW_FIELDS = ("name", "description", "model", "instructions")


def _tool_field(key: str) -> str:
    return f"{PREFIX}tool__{key}"


def instructions_from_text(text: str, fmt: str) -> Any:
    """The form's text back into an instructions value; JSON when the value was not a str."""
    value: Any = text.replace("\r\n", "\n")
    if fmt == "json":
        try:
            value = json_loads(value, max_string_chars=0)
        except JSONInputError as exc:
            raise ValidationError(f"Not valid JSON: {exc.message}") from exc
    try:
        return validate_instructions(value)
    except DefinitionError as exc:
        raise ValidationError(str(exc)) from exc


class EditorFormMixin:
    """Added to the admin's ModelForm: turns the editor fields into one versioned change."""

    editor_state: dict[str, Any]
    editor_agent: Agent

    def _initial(self, name: str) -> str:
        value = self.get_initial_for_field(self.fields[name], name)
        return str(value or "").replace("\r\n", "\n")

    def _posted(self, name: str) -> str:
        return str(self.cleaned_data.get(name) or "").replace("\r\n", "\n")

    def editor_changes(self) -> dict[str, Any]:
        data, state, changes = self.cleaned_data, self.editor_state, {}
        agent = self.editor_agent
        fmt = data.get(f"{PREFIX}instructions_format") or "text"
        if not self.fields[f"{PREFIX}instructions"].disabled:
            if data.get(f"{PREFIX}instructions_reset"):
                changes["instructions"] = None
            elif self._posted(f"{PREFIX}instructions") != self._initial(f"{PREFIX}instructions"):
                changes["instructions"] = instructions_from_text(
                    self._posted(f"{PREFIX}instructions"), fmt
                )
        if not agent.is_code:
            for name in ("name", "description", "model"):
                field = f"{PREFIX}{name}"
                if field in self.fields and self._posted(field) != self._initial(field):
                    changes[name] = self._posted(field)
        descriptions = {}
        for tool in state["tools"]:
            field = _tool_field(tool["key"])
            if field in self.fields and not self.fields[field].disabled:
                text = self._posted(field).strip()
                if text != self._initial(field).strip():
                    same_as_code = text == tool["code_description"].strip()
                    descriptions[tool["key"]] = None if (not text or same_as_code) else text
        if descriptions:
            changes["tool_descriptions"] = descriptions
        return changes

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        try:
            self.editor_pending = self.editor_changes()
        except ValidationError as exc:
            self.add_error(f"{PREFIX}instructions", exc)
            return cleaned
        current = Agent.objects.get(pk=self.editor_agent.pk)
        started = cleaned.get(f"{PREFIX}version")
        if self.editor_pending and started != current.version:
            state = selectors.editor_state(agent=current)
            last = state["last_change"] or {}
            # Let the next submit go on top of what is there now: the user has seen it.
            self.data = self.data.copy()
            self.data[f"{PREFIX}version"] = str(current.version)
            raise ValidationError(
                format_html(
                    "Not saved: {} changed this agent at {} (version {}, you started from "
                    "version {}). Current instructions:<pre class='editor-current'>{}</pre>"
                    "Your text is still in the form: re-apply your change on top of the "
                    "current text and save again.",
                    last.get("by") or "someone",
                    last.get("at", "?"),
                    current.version,
                    started,
                    as_text(state["instructions"]["effective"]),
                ),
                code="stale_version",
            )
        return cleaned


class AgentEditorAdminMixin(admin.ModelAdmin):
    """Mix into AgentAdmin (before admin.ModelAdmin) to edit agents under the editor policy."""

    class Media:
        js = ("agents_core/admin_editor.js",)

    # --- the form -------------------------------------------------------------------------
    def _editable_now(self, request: HttpRequest, agent: Agent) -> bool:
        held_by_other = getattr(request, "_editor_locked_by", None)
        return services.can_edit(user=request.user, agent=agent) and not held_by_other

    def _editor_fields(self, request: HttpRequest, agent: Agent, state: dict) -> dict:
        editable = set(state["editable"]) if self._editable_now(request, agent) else set()
        effective = state["instructions"]["effective"]
        fields: dict[str, forms.Field] = {
            f"{PREFIX}version": forms.IntegerField(
                widget=forms.HiddenInput, initial=state["version"]
            ),
            f"{PREFIX}instructions_format": forms.CharField(
                widget=forms.HiddenInput,
                required=False,
                initial="text" if isinstance(effective, str) else "json",
            ),
            f"{PREFIX}instructions": forms.CharField(
                label="Instructions",
                required=False,
                strip=False,
                initial=as_text(effective),
                disabled="instructions" not in editable,
                widget=forms.Textarea(attrs={"rows": 12, "class": "vLargeTextField"}),
                help_text="Overridden: the code value is shown below."
                if state["instructions"]["overridden"]
                else "",
            ),
        }
        if agent.is_code and state["instructions"]["overridden"] and "instructions" in editable:
            fields[f"{PREFIX}instructions_reset"] = forms.BooleanField(
                label="Reset instructions to code", required=False
            )
        if not agent.is_code:
            for name in ("name", "description", "model"):
                widget = forms.Textarea(attrs={"rows": 3}) if name == "description" else None
                fields[f"{PREFIX}{name}"] = forms.CharField(
                    label=name.capitalize(),
                    initial=state[name],
                    required=name != "description",
                    disabled=name not in editable,
                    widget=widget,
                )
        # A studio agent's tool bindings (and their descriptions) are edited in the inline.
        for tool in state["tools"] if agent.is_code else []:
            if not tool["active"]:
                continue
            fields[_tool_field(tool["key"])] = forms.CharField(
                label=f"Tool “{tool['key']}” description",
                required=False,
                initial=tool["description"],
                disabled="tool_descriptions" not in editable,
                widget=forms.Textarea(attrs={"rows": 2, "class": "vLargeTextField"}),
                help_text=(
                    f"Overridden. Code: {tool['code_description']}"
                    if tool["overridden"]
                    else "Empty = the tool's own description."
                ),
            )
        return fields

    def get_form(
        self, request: HttpRequest, obj: Agent | None = None, change: bool = False, **kwargs: Any
    ):
        if obj is None:
            return super().get_form(request, obj, change=change, **kwargs)
        state = selectors.editor_state(agent=obj)
        declared = self._editor_fields(request, obj, state)
        for field in declared.values():
            if field.disabled:  # the admin's stylesheet draws disabled inputs like live ones
                field.widget.attrs["style"] = (
                    "background: var(--darkened-bg); color: var(--body-quiet-color); "
                    "cursor: not-allowed"
                )
        base = kwargs.get("form", self.form)
        form = type(
            "AgentEditorForm",
            (EditorFormMixin, base),
            {
                **declared,
                "editor_state": state,
                "editor_agent": obj,
            },
        )
        kwargs["form"] = form
        if kwargs.get("fields") is not None:
            kwargs["fields"] = [f for f in kwargs["fields"] if not f.startswith(PREFIX)]
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fieldsets(self, request: HttpRequest, obj: Agent | None = None):
        fieldsets = super().get_fieldsets(request, obj)
        if obj is None:
            return fieldsets
        hidden = set(STUDIO_ROW_FIELDS) if not obj.is_code else {"instructions"}
        cleaned = []
        for name, options in fieldsets:
            fields = [
                f
                for f in options.get("fields", ())
                if not (isinstance(f, str) and (f.startswith(PREFIX) or f in hidden))
            ]
            if fields:
                cleaned.append((name, {**options, "fields": fields}))
        state_fields = self._editor_fields(request, obj, selectors.editor_state(agent=obj))
        ordered = ["editor_lock", *state_fields]
        if obj.is_code:
            ordered.insert(ordered.index(f"{PREFIX}instructions") + 1, "editor_code_instructions")
        return [("Editor", {"fields": ordered, "description": self._policy_text(obj)}), *cleaned]

    def get_readonly_fields(self, request: HttpRequest, obj: Agent | None = None):
        readonly = list(super().get_readonly_fields(request, obj))
        if obj is None:
            return readonly
        readonly += ["editor_lock", "editor_code_instructions"]
        if obj.is_code:
            # Code owns the row of a code agent; editors change it only through overrides.
            readonly += [
                f.name for f in Agent._meta.fields if f.editable and f.name not in readonly
            ]
        return readonly

    def _policy_text(self, agent: Agent) -> str:  # HTML: the admin shows it as is
        labels = {
            "tools": "tool membership (API and studio page)",
            "tool_descriptions": "tool descriptions",
        }
        editable = [labels.get(f, f) for f, o in field_ownership(agent).items() if o == "editor"]
        last = selectors.last_change(agent=agent)
        version = (
            f"Version {agent.version}, last changed by {last['by'] or 'someone'} ({last['kind']})."
            if last
            else f"Version {agent.version}, never edited."
        )
        page = reverse("frontend:agent-edit", kwargs={"slug": agent.slug})
        if not agent.is_code:
            text = f"A studio agent: its owner edits every field but its id. {version}"
        else:
            text = (
                f"Code agent. Editable under its editor policy: "
                f"{', '.join(editable) or 'nothing'}; everything else comes from code. {version}"
            )
        return format_html(
            "{} <a href='{}'>Revisions, diffs and restore</a> are on the studio's editor page.",
            text,
            page,
        )

    @admin.display(description="Code instructions")
    def editor_code_instructions(self, obj: Agent) -> str:
        return format_html(
            "<pre style='white-space:pre-wrap;margin:0'>{}</pre>", as_text(obj.instructions)
        )

    @admin.display(description="Edit lock")
    def editor_lock(self, obj: Agent) -> str:
        lock = selectors.lock_current(agent=obj)
        url = reverse("agent-lock", kwargs={"slug": obj.slug})
        if lock is None:
            return format_html("<span id='editor-lock' data-lock-url='{}'>Not locked.</span>", url)
        since = timezone.localtime(lock.acquired_at).strftime("%Y-%m-%d %H:%M")
        expired = " (expired)" if lock.expires_at <= timezone.now() else ""
        viewer = _viewer.get()
        holder = lock.holder.get_username()
        if viewer is not None and lock.holder_id == viewer.pk:
            return format_html(
                "<span id='editor-lock' data-lock-url='{}' data-lock-id='{}' data-holder='{}'>"
                "Locked by <strong>{}</strong> (you) since {}{}. It renews while this page is open."
                "</span>",
                url,
                lock.pk,
                holder,
                holder,
                since,
                expired,
            )
        html = format_html(
            "<span id='editor-lock' data-lock-url='{}'>Locked by <strong>{}</strong> since "
            "{}{}.</span>",
            url,
            holder,
            since,
            expired,
        )
        if viewer is None or not services.can_break_lock(user=viewer):
            return html
        break_url = reverse(
            f"admin:{obj._meta.app_label}_{obj._meta.model_name}_break_lock", args=[obj.pk]
        )
        return format_html(
            "{} <button type='submit' class='button' formaction='{}' formnovalidate "
            "id='editor-break-lock'>Break lock</button>",
            html,
            break_url,
        )

    # --- the lock, taken when the page opens ----------------------------------------------
    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict | None = None,
    ) -> HttpResponse:
        agent = Agent.objects.filter(pk=object_id).first() if object_id.isdigit() else None
        if request.method == "GET" and agent and services.can_edit(user=request.user, agent=agent):
            try:
                services.lock_take(agent=agent, user=request.user)
            except services.Locked as exc:
                request._editor_locked_by = exc.extra["lock"]
                messages.warning(request, f"{exc.message} The editor is read-only.")
        token = _viewer.set(request.user)
        try:
            response = super().change_view(request, object_id, form_url, extra_context)
            # Render now, while the viewer is known (a TemplateResponse renders later).
            if hasattr(response, "render") and not getattr(response, "is_rendered", True):
                response.render()
            return response
        finally:
            _viewer.reset(token)

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        return [
            path(
                "<path:object_id>/editor/break-lock/",
                self.admin_site.admin_view(self.break_lock_view),
                name="{}_{}_break_lock".format(*info),
            ),
            *super().get_urls(),
        ]

    def break_lock_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        agent = get_object_or_404(Agent, pk=object_id)
        change_url = reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_change", args=[agent.pk]
        )
        if request.method != "POST":
            return HttpResponseRedirect(change_url)
        try:
            services.lock_break(agent=agent, user=request.user)
            messages.success(request, "You broke the lock and now hold it.")
        except ApplicationError as exc:
            messages.error(request, exc.message)
        return HttpResponseRedirect(change_url)

    # --- saving ---------------------------------------------------------------------------
    def save_model(self, request: HttpRequest, obj: Agent, form, change: bool) -> None:
        if change:
            # Never write back the version read when the request started: only the
            # editor service moves it, with its check.
            obj.version = F("version")
        if not change or obj.is_code:
            super().save_model(request, obj, form, change)
        # A studio agent's other row fields are saved with its inlines (save_related), as
        # one recorded change after the editor's.
        if not change:
            return
        obj.refresh_from_db(fields=["version"])
        pending = getattr(form, "editor_pending", None)
        if not pending:
            return
        try:
            result = services.override_save(
                agent=obj,
                user=request.user,
                data=pending,
                version=form.cleaned_data[f"{PREFIX}version"],
            )
        except ApplicationError as exc:
            transaction.set_rollback(True)
            request._editor_error = exc
            return
        if result.stripped:
            messages.warning(
                request,
                "Code owns these fields; they were not saved: " + ", ".join(result.stripped),
            )

    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        obj = form.instance
        if not change or obj.is_code or getattr(request, "_editor_error", None) is not None:
            super().save_related(request, form, formsets, change)
            return
        changed = [
            name
            for name in form.changed_data
            if name in {f.name for f in Agent._meta.fields} and name not in STUDIO_ROW_FIELDS
        ]
        # What a revision records of the row is saved inside the recorded change; the rest
        # (the owner) outside it, where "nothing to record" cannot undo it.
        recorded = [name for name in changed if name in services.STUDIO_RECORDED_FIELDS]
        other = [name for name in changed if name not in services.STUDIO_RECORDED_FIELDS]
        if other:
            obj.save(update_fields=other)

        def apply() -> None:
            if recorded:
                obj.save(update_fields=recorded)
            super(AgentEditorAdminMixin, self).save_related(request, form, formsets, change)

        # Settings and bindings changed here are a revision too (before and after), like
        # the same changes through the REST API.
        services.tracked_change(agent=obj, user=request.user, apply=apply)

    def response_change(self, request: HttpRequest, obj: Agent) -> HttpResponse:
        error = getattr(request, "_editor_error", None)
        if error is None:
            return super().response_change(request, obj)
        current = error.extra.get("current") if isinstance(error.extra, dict) else None
        text = as_text(current["instructions"]["effective"]) if current else ""
        messages.error(
            request, format_html("{} Current instructions:<pre>{}</pre>", error.message, text)
        )
        return HttpResponseRedirect(request.path)
