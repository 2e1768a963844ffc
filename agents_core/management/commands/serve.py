"""`manage.py serve`: the web process (Daphne, HTTP and websockets) with the studio's
limits (studio/server.py). It does not migrate and starts no worker: with services, those
are their own processes (`migrate`, `execute_runs`, `celery worker`)."""

from __future__ import annotations

import argparse

from django.core.management.base import BaseCommand

from studio.server import serve


class Command(BaseCommand):
    help = "Serve the studio with Daphne (HTTP and websockets), with the studio's limits."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "daphne_options",
            nargs=argparse.REMAINDER,
            help="More options for Daphne after `--` (for example --proxy-headers).",
        )

    def handle(
        self, *args: object, host: str, port: int, daphne_options: list, **kw: object
    ) -> None:
        extra = [option for option in daphne_options if option != "--"]
        serve(host=host, port=port, extra=extra)
