"""`manage.py execute_runs`: a run worker (STUDIO_RUN_EXECUTOR=worker; runtime/worker.py)."""

from __future__ import annotations

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Execute the runs that web processes queue (STUDIO_RUN_EXECUTOR=worker), many at "
        "once on one event loop, until SIGTERM."
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

    def handle(self, *args, **options) -> None:
        from agents_core.runtime.worker import serve_forever

        serve_forever(name=options["name"], concurrency=options["concurrency"])
