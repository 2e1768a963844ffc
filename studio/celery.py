"""The Celery app. Settings come from Django's settings with the CELERY_ prefix."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")

app = Celery("studio")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="studio.ping", ignore_result=False)
def ping(value: str = "pong") -> str:
    """Health check task: a worker that answers is consuming from the broker."""
    return value
