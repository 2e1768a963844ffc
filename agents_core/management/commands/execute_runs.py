"""`manage.py execute_runs`: a run worker (STUDIO_RUN_EXECUTOR=worker;
runtime/execution/worker.py)."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = (
        "Execute the runs that web processes queue (STUDIO_RUN_EXECUTOR=worker), many at "
        "once on one event loop, until SIGTERM. With --check: exit 0 when the worker "
        "named --name beats (a liveness probe), 1 when it does not."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--concurrency",
            type=int,
            default=None,
            help="Most runs executing at once (default: STUDIO_RUN_WORKER_CONCURRENCY, 200).",
        )
        parser.add_argument(
            "--name",
            default=None,
            help="Written on the runs this worker claims; unique among live "
            "workers (default host:pid).",
        )
        parser.add_argument(
            "--check",
            action="store_true",
            help="Do not serve: succeed when the worker named --name has beaten within "
            "STUDIO_RUN_WORKER_DEAD_SECONDS (what the other workers take as alive).",
        )

    def handle(self, *args, **options) -> None:
        if options["check"]:
            return self.check_alive(options["name"])
        from agents_core.runtime.execution.worker import serve_forever

        serve_forever(name=options["name"], concurrency=options["concurrency"])

    def check_alive(self, name: str | None) -> None:
        from agents_core.runtime.execution.processes import process_is_dead

        if not name:
            raise CommandError("--check needs the --name of the worker to check.")
        # The same bound the live workers use before they end a silent worker's runs.
        dead_after = max(
            float(settings.STUDIO_RUN_WORKER_DEAD_SECONDS),
            3 * float(settings.STUDIO_RUN_WORKER_POLL_SECONDS),
        )
        if process_is_dead(name=name, dead_after=dead_after):
            raise CommandError(f"Run worker {name} has not beaten for {dead_after:g} s.")
        self.stdout.write(f"Run worker {name} is alive.")
