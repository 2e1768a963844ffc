"""Code tools that ship with the studio, discovered at start-up by the code registry: the
offline demo tools (when STUDIO_LOAD_DEMO) and every built-in system tool
(tools_app/types/system/)."""

from __future__ import annotations

from django.conf import settings

if settings.STUDIO_LOAD_DEMO:
    from tools_app.demo import unit_convert, weather_lookup  # noqa: F401

from tools_app.types.system.tasks import (  # noqa: E402,F401
    task_check,
    task_complete,
    task_update,
    task_write,
)
from tools_app.types.system.tools import ask_user, submit_plan, web_fetch, web_search  # noqa: E402,F401
