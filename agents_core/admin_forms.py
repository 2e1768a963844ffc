"""A check the admin's agent form shares with the REST API: where the agent's model may be
called (providers/model_endpoints.py)."""

from __future__ import annotations

from typing import Any

from agents_core.admin_editor import PREFIX
from providers.model_endpoints import agent_model_errors


class ModelEndpointsFormMixin:
    """Refuses a studio agent whose model, metadata and default options together would send
    its model calls to a base the operator does not allow. On a studio agent's change page
    the model is the editor's field (`editor_model`); on the add page the row's own. A code
    agent is checked when it is defined, and its row is read-only here."""

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()  # type: ignore[misc]
        instance = self.instance  # type: ignore[attr-defined]
        if instance.pk is not None and instance.is_code:
            return cleaned
        fields = self.fields  # type: ignore[attr-defined]
        model_field = next((name for name in (f"{PREFIX}model", "model") if name in fields), None)
        model = (cleaned.get(model_field) if model_field else None) or instance.model
        config = {
            name: cleaned.get(name, getattr(instance, name))
            for name in ("metadata", "default_options")
        }
        for name, texts in agent_model_errors(model=model, **config).items():
            field = model_field if name == "model" else name
            self.add_error(field if field in fields else None, texts)  # type: ignore[attr-defined]
        return cleaned
