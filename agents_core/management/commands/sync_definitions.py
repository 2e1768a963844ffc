from __future__ import annotations

from django.core.management.base import BaseCommand

from agents_core.registry import definitions_sync, reset_registry


class Command(BaseCommand):
    help = "Discover code-defined agents and tools and sync them into the database."

    def handle(self, *args, **options) -> None:
        reset_registry()
        report = definitions_sync()
        self.stdout.write(f"Code definitions synced: {report}")
