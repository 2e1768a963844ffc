from __future__ import annotations

from django.apps import AppConfig


class EvalsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "evals"
    verbose_name = "Agent tests"

    def ready(self) -> None:
        # An exported agent carries its test cases; agents_core sees them only through
        # this registration, so it never imports evals.
        from agents_core.services.agent_io import document_section_register
        from evals.agent_section import tests_export, tests_load

        document_section_register("tests", export=tests_export, load=tests_load)

        # Every Celery worker's recovery thread also takes back suite runs whose worker died.
        from evals.services.recovery import suite_runs_sweep
        from tools_app.recovery import recovery_sweep_register

        recovery_sweep_register("suite runs", suite_runs_sweep)
