"""Times as people read them in editor messages: "2 minutes ago", "1 minute from now"."""

from __future__ import annotations

from datetime import datetime

from django.contrib.humanize.templatetags.humanize import naturaltime


def human_time(moment: datetime) -> str:
    """Django's naturaltime relative to now ("just now" for its bare "now"), with plain
    spaces (it joins with no-break spaces, which JSON clients and log lines show as
    escapes)."""
    text = str(naturaltime(moment)).replace("\xa0", " ")
    return "just now" if text == "now" else text
