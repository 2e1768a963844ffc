"""The studio's command line: `manage.py`, the `studio` console script of an installed
wheel and `python -m studio` all run Django's management commands through `main`.

A studio that is not configured (a setting missing or malformed) or whose database is
not there or not migrated is one line on stderr and exit code 3, not a traceback: the
message says what to do.
"""

from __future__ import annotations

import os
import sys

NOT_CONFIGURED = 3


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line
    from django.db import OperationalError, ProgrammingError

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        sys.stderr.write(f"Agent Studio is not configured: {exc}\n")
        sys.exit(NOT_CONFIGURED)
    except (OperationalError, ProgrammingError) as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        sys.stderr.write(
            f"The studio's database is not ready ({first_line}): start it once with "
            "`make run`, or run `python manage.py migrate`.\n"
        )
        sys.exit(NOT_CONFIGURED)
