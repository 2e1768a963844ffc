"""Start the studio: migrate, make sure a local admin exists, start the embedded Celery
worker when there is no Redis, and serve HTTP and websockets with Daphne."""

from __future__ import annotations

import importlib
import secrets
import threading

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Run Agent Studio (Daphne; in embedded mode also an in-process Celery worker)."

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--no-worker", action="store_true", help="Do not start a worker.")

    def handle(self, *args, host: str, port: int, no_worker: bool, **options) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        if settings.EMBEDDED:
            self._ensure_local_admin()
        if settings.CELERY_EMBEDDED_WORKER and not no_worker:
            from studio.embedded import start_embedded_worker

            start_embedded_worker()
            self.stdout.write("Celery: in-process worker and beat (memory broker).")
        self.stdout.write(f"Agent Studio on http://{host}:{port}/  (Ctrl+C to stop)")
        from agents_core.runtime.execution.processes import uses_workers

        if not uses_workers():
            # Runs execute in this process: import litellm (seconds) while Daphne starts,
            # not when the first chat is sent (it waited about 7 s for it).
            threading.Thread(
                target=importlib.import_module,
                name="litellm-import",
                args=("providers.offline",),
                daemon=True,
            ).start()
        from studio.server import serve

        serve(host=host, port=port)

    def _ensure_local_admin(self) -> None:
        """Embedded mode only: a local admin whose password is kept in the data folder."""
        password_file = settings.DATA_DIR / "admin_password"
        user_model = get_user_model()
        if not password_file.exists() or not user_model.objects.filter(username="admin").exists():
            password = secrets.token_urlsafe(12)
            user, _ = user_model.objects.get_or_create(
                username="admin", defaults={"is_staff": True, "is_superuser": True}
            )
            user.is_staff = user.is_superuser = True
            user.set_password(password)
            user.save()
            password_file.write_text(password)
            password_file.chmod(0o600)
        password = password_file.read_text().strip()
        self.stdout.write(
            self.style.SUCCESS(f"Sign in as  admin / {password}   (kept in {password_file})")
        )
