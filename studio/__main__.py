"""`python -m studio <command>`: Django's management commands from an installed wheel."""

from __future__ import annotations

from studio.cli import main

main()
