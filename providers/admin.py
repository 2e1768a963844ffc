"""Site-wide credentials (no owner) are an admin's: set here or through the API."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError

from common.exceptions import ApplicationError
from providers import services
from providers.models import ProviderCredential


class CredentialForm(forms.ModelForm):
    api_key = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Stored encrypted; left empty on a change, the stored key stays.",
    )

    class Meta:
        model = ProviderCredential
        fields = ["owner", "provider", "name", "api_base"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        try:
            services.credential_check(
                data.get("provider", ""), data.get("name", ""), data.get("api_base", "")
            )
        except ApplicationError as exc:
            raise ValidationError(exc.message) from exc
        return data


@admin.register(ProviderCredential)
class ProviderCredentialAdmin(admin.ModelAdmin):
    form = CredentialForm
    list_display = ["name", "provider", "owner", "api_base", "key_hint", "updated_at"]
    list_filter = ["provider"]
    readonly_fields = ["key_hint"]

    def save_model(self, request: Any, obj: ProviderCredential, form: Any, change: bool) -> None:
        # The form checked name and base; the key is stored encrypted, or kept.
        if form.cleaned_data.get("api_key"):
            services.credential_store_key(obj, form.cleaned_data["api_key"])
        obj.save()
