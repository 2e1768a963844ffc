"""Shapes of the providers API. A key goes in; only its hint comes out."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from providers.catalog import PROVIDERS
from providers.models import ProviderCredential


class CredentialInputSerializer(serializers.Serializer):
    provider = serializers.ChoiceField(choices=sorted(PROVIDERS))
    name = serializers.CharField(
        max_length=64,
        required=False,
        allow_blank=True,
        help_text="A slug; default: the provider. An OpenAI-compatible server's models "
        "are written <name>/<model>.",
    )
    api_key = serializers.CharField(
        max_length=1000, required=False, allow_blank=True, trim_whitespace=True
    )
    api_base = serializers.CharField(
        max_length=500,
        required=False,
        allow_blank=True,
        help_text="A server on the operator's STUDIO_MODEL_API_BASES list.",
    )
    site = serializers.BooleanField(
        required=False, default=False, help_text="Site-wide, for every user (admins only)."
    )


class CredentialUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=64, required=False)
    api_key = serializers.CharField(
        max_length=1000,
        required=False,
        allow_blank=True,
        help_text="Left out: the stored key stays.",
    )
    api_base = serializers.CharField(max_length=500, required=False, allow_blank=True)


class CredentialTestSerializer(serializers.Serializer):
    model = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        help_text="Default: a small model of the provider (required for a compatible server).",
    )


class CredentialOutputSerializer(serializers.ModelSerializer):
    provider_label = serializers.CharField(source="get_provider_display")
    site = serializers.BooleanField(source="is_site")
    editable = serializers.SerializerMethodField()

    class Meta:
        model = ProviderCredential
        fields = [
            "id",
            "provider",
            "provider_label",
            "name",
            "api_base",
            "key_hint",
            "site",
            "editable",
            "created_at",
            "updated_at",
        ]

    def get_editable(self, credential: ProviderCredential) -> bool:
        user = self.context.get("user")
        if credential.is_site:
            return bool(user is not None and user.is_staff)
        return True


def provider_catalog(configured: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": p.id,
            "label": p.label,
            "needs_base": p.needs_base,
            "test_model": p.test_model,
            **configured.get(p.id, {}),
        }
        for p in PROVIDERS.values()
    ]
