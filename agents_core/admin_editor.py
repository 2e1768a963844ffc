"""The editor on the admin's agent change page (a mixin for AgentAdmin).

Instructions and tool descriptions are edited through agents_core.editor.services, so the
admin obeys the same policy, versions, revisions and locks as the studio page and the
API. Opening the page starts an edit lock session (renewed by admin_editor.js); the page
names it in a hidden field and every save from the page names it to the editor. While
another session holds the live lock (another user, or the same user's other tab) the
page is read-only: editor fields disabled, Save disabled, and a POST is refused whole,
so nothing of it is written. A save that started from an old version is refused with the
current text, the user's own text kept in the form.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from django.contrib import admin, messages
from django.db import transaction
from django.forms import Script
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from agents_core.admin_editor_form import (
    LOCK_FIELD,
    PREFIX,
    STUDIO_ROW_FIELDS,
    EditorFormMixin,
    editor_fields,
)
from agents_core.editor import selectors
from agents_core.editor.diff import as_text
from agents_core.editor.humanize import human_time
from agents_core.editor.policy import field_ownership
from agents_core.editor.services import documents, locks, permissions, revisions
from agents_core.models import Agent, EditLock
from common.exceptions import ApplicationError

# The request being rendered, for the read-only lock display (it gets no request).
_request: ContextVar[HttpRequest | None] = ContextVar("admin_editor_request", default=None)


def _named_session(raw: str, request: HttpRequest, agent: Agent, **open_only: bool) -> int | None:
    """The lock session a request names, if it is one of this user's on this agent."""
    sessions = EditLock.objects.filter(agent=agent, holder=request.user, **open_only)
    return int(raw) if raw.isdigit() and sessions.filter(pk=int(raw)).exists() else None


class AgentEditorAdminMixin(admin.ModelAdmin):
    """Mix into AgentAdmin (before admin.ModelAdmin) to edit agents under the editor policy."""

    class Media:
        # An ES module: it imports the studio's relative-time formatter (js/lib/format.js).
        js = (Script("agents_core/admin_editor.js", type="module"),)
        css = {"all": ("agents_core/admin_editor.css",)}

    # --- the lock session of this request -------------------------------------------------
    def _editor_session(self, request: HttpRequest, agent: Agent) -> None:
        """Set request.editor_session (the lock id this page holds) and
        request.editor_blocked (the Locked error while another session holds the lock).

        A GET starts a session, or continues the one its URL names (after a take-over, a
        break or a refused save). A POST names its session in the form; without one, or
        with another session holding the live lock, the page was read-only.
        """
        request.editor_session, request.editor_blocked = None, None
        if not permissions.can_edit(user=request.user, agent=agent):
            return
        if request.method == "POST":
            request.editor_session = _named_session(
                request.POST.get(LOCK_FIELD, ""), request, agent
            )
            blocking = locks.lock_blocking(
                agent=agent, user=request.user, lock_id=request.editor_session
            )
            if blocking is not None:
                request.editor_blocked = locks.locked_error(
                    blocking, user=request.user, writing=True
                )
            return
        named = request.GET.get(LOCK_FIELD, "")
        request.editor_session = _named_session(named, request, agent, ended_at__isnull=True)
        if request.editor_session is None:
            try:
                request.editor_session = locks.lock_take(agent=agent, user=request.user).pk
            except locks.Locked as exc:
                request.editor_blocked = exc

    def _editable_now(self, request: HttpRequest) -> bool:
        return getattr(request, "editor_session", None) is not None and not getattr(
            request, "editor_blocked", None
        )

    # --- the form -------------------------------------------------------------------------
    def get_form(
        self, request: HttpRequest, obj: Agent | None = None, change: bool = False, **kwargs: Any
    ):
        if obj is None:
            return super().get_form(request, obj, change=change, **kwargs)
        state = selectors.editor_state(agent=obj)
        declared = editor_fields(
            obj,
            state,
            editable=self._editable_now(request),
            session=getattr(request, "editor_session", None),
        )
        blocked = getattr(request, "editor_blocked", None)
        base = kwargs.get("form", self.form)
        form = type(
            "AgentEditorForm",
            (EditorFormMixin, base),
            {
                **declared,
                "editor_state": state,
                "editor_agent": obj,
                "editor_refusal": blocked.message if blocked and request.method == "POST" else None,
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
        state = selectors.editor_state(agent=obj)
        names = list(editor_fields(obj, state, editable=self._editable_now(request), session=None))
        ordered = ["editor_lock_status", *names]
        if obj.is_code:
            ordered.insert(ordered.index(f"{PREFIX}instructions") + 1, "editor_code_instructions")
        return [("Editor", {"fields": ordered, "description": self._policy_text(obj)}), *cleaned]

    def get_readonly_fields(self, request: HttpRequest, obj: Agent | None = None):
        readonly = list(super().get_readonly_fields(request, obj))
        if obj is None:
            return readonly
        readonly += ["editor_lock_status", "editor_code_instructions"]
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
        last = agent.revisions.select_related("author").first()
        version = f"Version {agent.version}, never edited."
        if last is not None:
            by = last.author.get_username() if last.author else "someone"
            version = (
                f"Version {agent.version}, last changed by {by} "
                f"({last.kind}, {human_time(last.created_at)})."
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
        return format_html("<pre class='editor-code'>{}</pre>", as_text(obj.instructions))

    @admin.display(description="Edit lock")
    def editor_lock_status(self, obj: Agent) -> str:
        request = _request.get()
        lock = selectors.lock_current(agent=obj)
        data = {
            "lock-url": reverse("agent-lock", kwargs={"slug": obj.slug}),
            "username": request.user.get_username() if request else "",
            "heartbeat-ms": max(1, locks.lock_seconds() // 3) * 1000,
        }
        if lock is None:
            return self._badge(data, "Not locked.")
        holder = lock.holder.get_username()
        since = format_html(
            "<time datetime='{}' data-ago>{}</time>",
            lock.acquired_at.isoformat(),
            human_time(lock.acquired_at),
        )
        if lock.pk == getattr(request, "editor_session", None):
            text = "Locked by <strong>{}</strong> (you, in this page) since {}. It renews while "
            text += "this page is open."
            return self._badge({**data, "lock-id": lock.pk}, format_html(text, holder, since))
        yours = request is not None and lock.holder_id == request.user.pk
        if yours:
            data["other-id"] = lock.pk
        expired = " (expired)" if lock.expires_at <= timezone.now() else ""
        who = "you, in another tab or window" if yours else holder
        text = format_html("Locked by <strong>{}</strong> since {}{}.", who, since, expired)
        return format_html(
            "{} {}", self._badge(data, text), self._lock_buttons(request, obj, yours=yours)
        )

    def _badge(self, data: dict[str, Any], inner: str) -> str:
        attrs = format_html_join(" ", "data-{}='{}'", data.items())
        return format_html("<span id='editor-lock' {}>{}</span>", attrs, inner)

    def _lock_buttons(self, request: HttpRequest | None, obj: Agent, *, yours: bool) -> str:
        info = self.opts.app_label, self.opts.model_name
        if request is None or not permissions.can_edit(user=request.user, agent=obj):
            return ""
        if yours:
            name, label, button = "take_over", "Take over here", "editor-take-over"
        elif permissions.can_break_lock(user=request.user):
            name, label, button = "break_lock", "Break lock", "editor-break-lock"
        else:
            return ""
        action = reverse("admin:{}_{}_{}".format(*info, name), args=[obj.pk])
        return format_html(
            "<button type='submit' class='button' formaction='{}' formnovalidate id='{}'>"
            "{}</button>",
            action,
            button,
            label,
        )

    # --- the page -------------------------------------------------------------------------
    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict | None = None,
    ) -> HttpResponse:
        agent = Agent.objects.filter(pk=object_id).first() if object_id.isdigit() else None
        if agent is not None:
            self._editor_session(request, agent)
            blocked = request.editor_blocked
            if blocked is not None:
                extra_context = {**(extra_context or {}), "editor_read_only": blocked.message}
                if request.method == "GET":
                    messages.warning(request, f"{blocked.message} The editor is read-only.")
        token = _request.set(request)
        try:
            response = super().change_view(request, object_id, form_url, extra_context)
            # Render now, while the request is known (a TemplateResponse renders later).
            if hasattr(response, "render") and not getattr(response, "is_rendered", True):
                response.render()
            return response
        finally:
            _request.reset(token)

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        view = self.admin_site.admin_view
        return [
            path(
                "<path:object_id>/editor/break-lock/",
                view(self.break_lock_view),
                name="{}_{}_break_lock".format(*info),
            ),
            path(
                "<path:object_id>/editor/take-over/",
                view(self.take_over_view),
                name="{}_{}_take_over".format(*info),
            ),
            *super().get_urls(),
        ]

    def _lock_view(self, request: HttpRequest, object_id: str, take: Any, done: str):
        agent = get_object_or_404(Agent, pk=object_id)
        change_url = reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_change", args=[agent.pk]
        )
        if request.method != "POST":
            return HttpResponseRedirect(change_url)
        try:
            lock = take(agent=agent, user=request.user)
        except ApplicationError as exc:
            messages.error(request, exc.message)
            return HttpResponseRedirect(change_url)
        messages.success(request, done)
        # The page that opens next continues this session instead of starting another.
        return HttpResponseRedirect(f"{change_url}?{LOCK_FIELD}={lock.pk}")

    def break_lock_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return self._lock_view(
            request, object_id, locks.lock_break, "You broke the lock and now hold it."
        )

    def take_over_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        def take(**kwargs: Any) -> EditLock:
            return locks.lock_take(take_over=True, **kwargs)

        return self._lock_view(
            request, object_id, take, "You took the lock over: edit here, not in your other tab."
        )

    # --- saving ---------------------------------------------------------------------------
    def save_model(self, request: HttpRequest, obj: Agent, form, change: bool) -> None:
        if not change:
            super().save_model(request, obj, form, change)
            return
        # Code owns a code agent's row, and only the editor moves the version (with its
        # check): the row is never written back from what the request read.
        pending = getattr(form, "editor_pending", None)
        if not pending:
            return
        try:
            result = revisions.override_save(
                agent=obj,
                user=request.user,
                data=pending,
                version=form.cleaned_data[f"{PREFIX}version"],
                lock_id=request.editor_session,
            )
        except ApplicationError as exc:
            transaction.set_rollback(True)
            request.editor_error = exc
            return
        if result.stripped:
            messages.warning(
                request,
                "Code owns these fields; they were not saved: " + ", ".join(result.stripped),
            )

    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        obj = form.instance
        if not change or obj.is_code or getattr(request, "editor_error", None) is not None:
            super().save_related(request, form, formsets, change)
            return
        changed = [
            name
            for name in form.changed_data
            if name in {f.name for f in Agent._meta.fields} and name not in STUDIO_ROW_FIELDS
        ]
        # What a revision records of the row is saved inside the recorded change; the rest
        # (the owner) outside it, where "nothing to record" cannot undo it.
        recorded = [name for name in changed if name in documents.STUDIO_RECORDED_FIELDS]
        other = [name for name in changed if name not in documents.STUDIO_RECORDED_FIELDS]

        def apply() -> None:
            if recorded:
                obj.save(update_fields=recorded)
            super(AgentEditorAdminMixin, self).save_related(request, form, formsets, change)

        # Settings and bindings changed here are a revision too (before and after), like
        # the same changes through the REST API, and pass the same lock guard.
        try:
            revisions.tracked_change(
                agent=obj, user=request.user, lock_id=request.editor_session, apply=apply
            )
        except ApplicationError as exc:
            transaction.set_rollback(True)
            request.editor_error = exc
            return
        if other:
            obj.save(update_fields=other)

    def response_change(self, request: HttpRequest, obj: Agent) -> HttpResponse:
        error = getattr(request, "editor_error", None)
        if error is None:
            # The page is left: its lock session ends here (the next page starts its own).
            if request.editor_session is not None:
                locks.lock_release(agent=obj, user=request.user, lock_id=request.editor_session)
            return super().response_change(request, obj)
        current = error.extra.get("current") if isinstance(error.extra, dict) else None
        text = as_text(current["instructions"]["effective"]) if current else ""
        detail = format_html(" Current instructions:<pre>{}</pre>", text) if current else ""
        messages.error(request, format_html("{}{}", error.message, detail))
        # The page that opens next continues this page's lock session.
        session = request.editor_session
        return HttpResponseRedirect(
            f"{request.path}?{LOCK_FIELD}={session}" if session else request.path
        )
