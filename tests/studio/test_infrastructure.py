"""The real parts the suite stands on: PostgreSQL, Redis, a Celery worker (Daphne and
Chromium: test_infrastructure_browser.py)."""

from __future__ import annotations

import pytest


@pytest.mark.celery_worker
def test_a_real_worker_process_runs_a_task_from_redis(celery_worker):
    from studio.celery import app

    result = app.send_task("studio.ping", args=["hello"])
    assert result.get(timeout=30) == "hello"
