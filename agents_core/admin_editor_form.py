"""The editor fields of the admin's agent change form, and the form mixin that turns them
into one versioned editor change (agents_core.admin_editor puts them on the page).

A field the page may not write (code-owned, or the page is read-only because another
session holds the edit lock) is a disabled field: Django then ignores what a POST sends
for it and keeps its initial value, so a forged or half-empty POST changes nothing, and a
form that comes back with an error shows the same values, still disabled.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.html import format_html

from agents_core.definitions import DefinitionError, validate_instructions
from agents_core.editor import selectors
from agents_core.editor.diff import as_text
from agents_core.editor.humanize import human_time
from agents_core.models import Agent, Revision
from common.json_input import JSONInputError, json_loads

PREFIX = "editor_"
LOCK_FIELD = f"{PREFIX}lock"
# Row fields a studio agent edits through the editor (versioned, with revisions).
STUDIO_ROW_FIELDS = ("name", "description", "model", "instructions")


def tool_field(key: str) -> str:
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


def editor_fields(
    agent: Agent, state: dict[str, Any], *, editable: bool, session: int | None
) -> dict[str, forms.Field]:
    """The editor's form fields; only the policy's fields, and only when `editable`."""
    open_fields = set(state["editable"]) if editable else set()
    effective = state["instructions"]["effective"]
    fields: dict[str, forms.Field] = {
        f"{PREFIX}version": forms.IntegerField(widget=forms.HiddenInput, initial=state["version"]),
        # The edit lock session this page holds; every save names it.
        LOCK_FIELD: forms.IntegerField(widget=forms.HiddenInput, initial=session, required=False),
        f"{PREFIX}instructions_format": forms.CharField(
            widget=forms.HiddenInput,
            required=False,
            initial="text" if isinstance(effective, str) else "json",
            disabled=not editable,
        ),
        f"{PREFIX}instructions": forms.CharField(
            label="Instructions",
            required=False,
            strip=False,
            initial=as_text(effective),
            disabled="instructions" not in open_fields,
            widget=forms.Textarea(attrs={"rows": 12, "class": "vLargeTextField"}),
            help_text="Overridden: the code value is shown below."
            if state["instructions"]["overridden"]
            else "",
        ),
    }
    if agent.is_code and state["instructions"]["overridden"] and "instructions" in open_fields:
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
                disabled=name not in open_fields,
                widget=widget,
            )
    # A studio agent's tool bindings (and their descriptions) are edited in the inline.
    for tool in state["tools"] if agent.is_code else []:
        if not tool["active"]:
            continue
        fields[tool_field(tool["key"])] = forms.CharField(
            label=f"Tool “{tool['key']}” description",
            required=False,
            initial=tool["description"],
            disabled="tool_descriptions" not in open_fields,
            widget=forms.Textarea(attrs={"rows": 2, "class": "vLargeTextField"}),
            help_text=(
                f"Overridden. Code: {tool['code_description']}"
                if tool["overridden"]
                else "Empty = the tool's own description."
            ),
        )
    for field in fields.values():
        if field.disabled and not isinstance(field.widget, forms.HiddenInput):
            # The admin's stylesheet draws disabled inputs like live ones (admin_editor.css).
            classes = field.widget.attrs.get("class", "")
            field.widget.attrs["class"] = f"{classes} editor-read-only".strip()
    return fields


class EditorFormMixin:
    """Added to the admin's ModelForm: turns the editor fields into one versioned change.

    `editor_refusal` is set when another session holds the live edit lock: the whole form
    is then refused, so nothing of the page (editor fields, row fields, inlines) is saved.
    """

    editor_state: dict[str, Any]
    editor_agent: Agent
    editor_refusal: str | None = None

    def _initial(self, name: str) -> str:
        value = self.get_initial_for_field(self.fields[name], name)
        return str(value or "").replace("\r\n", "\n")

    def _posted(self, name: str) -> str:
        return str(self.cleaned_data.get(name) or "").replace("\r\n", "\n")

    def _changed(self, name: str) -> bool:
        field = self.fields.get(name)
        return (
            field is not None and not field.disabled and self._posted(name) != self._initial(name)
        )

    def editor_changes(self) -> dict[str, Any]:
        data, state, changes = self.cleaned_data, self.editor_state, {}
        fmt = data.get(f"{PREFIX}instructions_format") or "text"
        if data.get(f"{PREFIX}instructions_reset"):
            changes["instructions"] = None
        elif self._changed(f"{PREFIX}instructions"):
            changes["instructions"] = instructions_from_text(
                self._posted(f"{PREFIX}instructions"), fmt
            )
        if not self.editor_agent.is_code:
            for name in ("name", "description", "model"):
                if self._changed(f"{PREFIX}{name}"):
                    changes[name] = self._posted(f"{PREFIX}{name}")
        descriptions = {}
        for tool in state["tools"]:
            field = tool_field(tool["key"])
            if self._changed(field) and self._posted(field).strip() != self._initial(field).strip():
                text = self._posted(field).strip()
                same_as_code = text == tool["code_description"].strip()
                descriptions[tool["key"]] = None if (not text or same_as_code) else text
        if descriptions:
            changes["tool_descriptions"] = descriptions
        return changes

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.editor_refusal:
            raise ValidationError(self.editor_refusal, code="locked")
        try:
            self.editor_pending = self.editor_changes()
        except ValidationError as exc:
            self.add_error(f"{PREFIX}instructions", exc)
            return cleaned
        current = Agent.objects.get(pk=self.editor_agent.pk)
        started = cleaned.get(f"{PREFIX}version")
        if self.editor_pending and started != current.version:
            self._stale(current, started)
        return cleaned

    def _stale(self, current: Agent, started: int | None) -> None:
        state = selectors.editor_state(agent=current)
        last = Revision.objects.filter(agent=current).select_related("author").first()
        by = last.author.get_username() if last and last.author else "someone"
        when = human_time(last.created_at) if last else "meanwhile"
        # Let the next submit go on top of what is there now: the user has seen it.
        self.data = self.data.copy()
        self.data[f"{PREFIX}version"] = str(current.version)
        raise ValidationError(
            format_html(
                "Not saved: {} changed this agent {} (version {}, you started from "
                "version {}). Current instructions:<pre class='editor-current'>{}</pre>"
                "Your text is still in the form: re-apply your change on top of the "
                "current text and save again.",
                by,
                when,
                current.version,
                started,
                as_text(state["instructions"]["effective"]),
            ),
            code="stale_version",
        )
