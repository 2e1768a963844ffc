from __future__ import annotations

from celery import shared_task

from traces.export import traces_export
from traces.services import traces_delete_expired


@shared_task(name="traces.traces_delete_expired", ignore_result=True)
def traces_delete_expired_task() -> int:
    return traces_delete_expired()


@shared_task(name="traces.traces_export", ignore_result=True)
def traces_export_task() -> int:
    return traces_export()
