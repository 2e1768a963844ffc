from __future__ import annotations

from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "knowledge"
    verbose_name = "Knowledge"

    def ready(self) -> None:
        # The knowledge_search tool type lives here; tools_app only sees it through its
        # registry, so tools_app never imports this app.
        from tools_app.types import register

        register("knowledge_search", "knowledge.tool_type")
