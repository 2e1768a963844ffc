"""Django admin for tools_app: tools (credentials never shown, only whether they are set)
and the record of tool runs."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from common.admin_forms import StudioModelAdmin
from tools_app.models import OAuthToken, Source, Tool, ToolRun, ToolSource, WebSearchSetting
from tools_app.serializers import TOOL_NAME, TOOL_NAME_MESSAGE, json_schema_problem
from tools_app.types import ConfigError, all_types, get_type


class ToolAdminForm(forms.ModelForm):
    """The same rules as the REST API (tools_app.serializers)."""

    class Meta:
        model = Tool
        fields = (
            "name",
            "description",
            "kind",
            "owner",
            "input_schema",
            "output_schema",
            "execution_mode",
            "timeout_seconds",
            "config",
            "model_output",
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "kind" in self.fields:
            # The registered types are the truth (tools_app.types), not the model's choices.
            self.fields["kind"] = forms.ChoiceField(
                choices=[(t.kind, f"{t.label} ({t.kind})") for t in all_types()],
                initial=self.fields["kind"].initial,
            )

    def clean_name(self) -> str:
        name = self.cleaned_data["name"]
        if not TOOL_NAME.match(name):
            raise ValidationError(TOOL_NAME_MESSAGE)
        return name

    def clean_input_schema(self) -> Any:
        schema = self.cleaned_data["input_schema"] or {"type": "object", "properties": {}}
        problem = json_schema_problem(schema)
        if problem:
            raise ValidationError(problem)
        if schema.get("type") != "object":
            raise ValidationError('$.type: the input schema must be {"type": "object", ...}.')
        return schema

    def clean_output_schema(self) -> Any:
        schema = self.cleaned_data["output_schema"]
        problem = None if schema is None else json_schema_problem(schema)
        if problem:
            raise ValidationError(problem)
        return schema

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        kind, config = cleaned.get("kind"), cleaned.get("config")
        if kind is None or config is None:
            return cleaned
        try:
            tool_type = get_type(kind)
        except LookupError:
            self.add_error("kind", f"No tool type {kind!r} is registered.")
            return cleaned
        try:
            cleaned["config"] = tool_type.validate_config(config)
        except ConfigError as exc:
            self.add_error("config", [f"{path}: {message}" for path, message in exc.errors.items()])
        return cleaned


@admin.register(Tool)
class ToolAdmin(StudioModelAdmin):
    form = ToolAdminForm
    list_display = (
        "name",
        "kind",
        "source",
        "owner",
        "execution_mode",
        "has_credentials",
        "is_live",
        "updated_at",
    )
    list_filter = ("kind", "source", "execution_mode", ("gone_at", admin.EmptyFieldListFilter))
    search_fields = ("name", "description", "owner__username")
    list_select_related = ("owner",)
    autocomplete_fields = ("owner",)
    fieldsets = (
        (None, {"fields": ("name", "description", "kind", "owner")}),
        ("Schemas", {"fields": ("input_schema", "output_schema")}),
        (
            "Execution",
            {
                "fields": (
                    "execution_mode",
                    "timeout_seconds",
                    "config",
                    "model_output",
                    "has_credentials",
                )
            },
        ),
        ("Origin", {"fields": ("source", "code_hash", "gone_at", "created_at", "updated_at")}),
    )
    # credentials_encrypted is not editable and never listed: the admin shows only whether
    # credentials are set (they are written through the API or tools_app.crypto).
    readonly_fields = (
        "has_credentials",
        "source",
        "code_hash",
        "gone_at",
        "created_at",
        "updated_at",
    )

    @admin.display(description="credentials", boolean=True)
    def has_credentials(self, obj: Tool) -> bool:
        return bool(obj.credentials_encrypted)

    @admin.display(description="live", boolean=True, ordering="gone_at")
    def is_live(self, obj: Tool) -> bool:
        return obj.gone_at is None

    def has_change_permission(self, request: HttpRequest, obj: Tool | None = None) -> bool:
        # Code tools follow their code (agents_core.registry); here they are view-only.
        code = obj is not None and obj.source == Source.CODE
        return not code and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Tool | None = None) -> bool:
        code = obj is not None and obj.source == Source.CODE
        return not code and super().has_delete_permission(request, obj)

    def save_model(
        self, request: HttpRequest, obj: Tool, form: forms.ModelForm, change: bool
    ) -> None:
        if not change and obj.owner_id is None and obj.source == Source.STUDIO:
            obj.owner = request.user  # a studio tool nobody owns would be usable by no one
        super().save_model(request, obj, form, change)


@admin.register(ToolRun)
class ToolRunAdmin(admin.ModelAdmin):
    list_display = ("id", "tool", "status", "mode", "created_by", "duration_ms", "created_at")
    list_filter = ("status", "mode", "created_at")
    search_fields = ("tool__name", "error", "created_by__username")
    list_select_related = ("tool", "created_by")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: ToolRun | None = None) -> bool:
        return False  # a run is a record of what happened


@admin.register(ToolSource)
class ToolSourceAdmin(StudioModelAdmin):
    list_display = ("name", "kind", "owner", "url", "has_credentials", "imported_at", "created_at")
    list_filter = ("kind", "imported_at")
    search_fields = ("name", "url", "owner__username")
    list_select_related = ("owner",)
    autocomplete_fields = ("owner",)
    # credentials_encrypted is never shown (it is not editable, so no form field either).
    readonly_fields = ("has_credentials", "imported_at", "created_at", "updated_at")

    @admin.display(description="credentials", boolean=True)
    def has_credentials(self, obj: ToolSource) -> bool:
        return bool(obj.credentials_encrypted)


class SecretRecordAdmin(admin.ModelAdmin):
    """A record that holds an encrypted secret: listed for support and deletable (a token a
    user should connect again), never added or edited here, its secret never shown."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(OAuthToken)
class OAuthTokenAdmin(SecretRecordAdmin):
    list_display = ("user", "tool", "source", "expires_at", "updated_at")
    list_filter = ("expires_at", "updated_at")
    search_fields = ("user__username", "tool__name", "source__name")
    list_select_related = ("user", "tool", "source")
    exclude = ("token_encrypted", "digest")


@admin.register(WebSearchSetting)
class WebSearchSettingAdmin(SecretRecordAdmin):
    list_display = ("owner", "provider", "base_url", "model", "key_hint", "updated_at")
    list_filter = ("provider", "updated_at")
    search_fields = ("owner__username", "base_url", "model")
    list_select_related = ("owner",)
    exclude = ("secret_encrypted",)
