from __future__ import annotations

from django.apps import AppConfig


class TracesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "traces"
    verbose_name = "Traces"

    def ready(self) -> None:
        from django.conf import settings

        from agents_core.runtime.run import observers
        from tools_app import observers as tool_observers
        from traces.console import console_recorder
        from traces.recorder import recorder

        if not settings.STUDIO_TRACES:
            return
        # Every process that runs agents (web, run workers, Celery workers finishing
        # async tools) records the spans of its runs.
        observers.register(recorder)
        # A tool run from the test console (sync in the web process, async in a Celery
        # worker) records its one span when it ends.
        tool_observers.register(console_recorder)
