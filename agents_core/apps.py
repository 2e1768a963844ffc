from __future__ import annotations

from django.apps import AppConfig


class AgentsCoreConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "agents_core"
    verbose_name = "Agents"

    def ready(self) -> None:
        from agents_core import registry

        registry.connect_sync_on_migrate()
