from __future__ import annotations

from django.apps import AppConfig


class AgentsCoreConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "agents_core"
    verbose_name = "Agents"

    def ready(self) -> None:
        from agents_core import registry
        from agents_core.runtime import model_endpoints

        # A bad STUDIO_MODEL_API_BASES entry stops the start (ImproperlyConfigured), before
        # code agents are checked against the list.
        model_endpoints.allowed_origins()
        registry.connect_sync_on_migrate()
