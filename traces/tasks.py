from __future__ import annotations

from celery import shared_task

from traces.services import traces_delete_expired


@shared_task(name="traces.traces_delete_expired", ignore_result=True)
def traces_delete_expired_task() -> int:
    return traces_delete_expired()
