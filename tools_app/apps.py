from __future__ import annotations

from celery.signals import worker_process_init, worker_ready, worker_shutdown
from django.apps import AppConfig


class ToolsAppConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "tools_app"
    verbose_name = "Tools"

    def ready(self) -> None:
        import tools_app.checks  # noqa: F401 - registers the system checks
        import tools_app.types.builtin  # noqa: F401 - registers the built-in tool types
        from common.patterns import jsonschema_uses_re2
        from tools_app import recovery
        from tools_app.redaction import log_redaction_install

        # No log line carries a secret a run or a call is using (tools_app.redaction).
        log_redaction_install()

        # User patterns in JSON Schemas are matched in linear time (common/patterns.py).
        jsonschema_uses_re2()

        # Every Celery worker recovers async tool runs whose worker died (not only beat).
        worker_process_init.connect(recovery.recovery_start, dispatch_uid="tools_app.recovery")
        worker_ready.connect(recovery.recovery_start, dispatch_uid="tools_app.recovery")
        worker_shutdown.connect(recovery.recovery_stop, dispatch_uid="tools_app.recovery")
