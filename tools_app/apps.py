from __future__ import annotations

from django.apps import AppConfig


class ToolsAppConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "tools_app"
    verbose_name = "Tools"

    def ready(self) -> None:
        import tools_app.checks  # noqa: F401 - registers the system checks
        import tools_app.types.builtin  # noqa: F401 - registers the built-in tool types
