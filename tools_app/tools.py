"""Code tools that ship with the studio: the offline demo tools (built-in system tools
are added beside them by tools_app.types.system)."""

from __future__ import annotations

from django.conf import settings

if getattr(settings, "STUDIO_LOAD_DEMO", True):
    from tools_app.demo import unit_convert, weather_lookup  # noqa: F401

from tools_app.types.system.tools import ask_user, submit_plan, web_fetch, web_search  # noqa: E402,F401
