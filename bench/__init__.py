"""Benchmarks: `python -m bench` runs every module of this package that has a `main()`;
`python -m bench.<module>` runs one. They print side-by-side numbers and ratios; they
never pass or fail."""

from __future__ import annotations

import os


def setup_django() -> None:
    """Configure Django for a bench that needs it: the environment's settings, or the
    embedded studio when no SECRET_KEY is configured."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
    if not (os.environ.get("SECRET_KEY") or os.environ.get("SECRET_KEY_FILE")):
        os.environ.setdefault("STUDIO_EMBEDDED", "1")
    django.setup()
