from __future__ import annotations

from django.apps import AppConfig


class TracesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "traces"
    verbose_name = "Traces"

    def ready(self) -> None:
        from django.conf import settings

        from agents_core.runtime import observers
        from traces.recorder import recorder

        if not settings.STUDIO_TRACES:
            return
        # Every process that runs agents (web, run workers, Celery workers finishing
        # async tools) records the spans of its runs.
        observers.register(recorder)
