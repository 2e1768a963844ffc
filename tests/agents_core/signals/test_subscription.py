"""subscribe_to_thread: live events, the active run, abort, unsubscribe."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from agents_core.models import Run
from agents_core.signals.notifications import send_notification_signal
from agents_core.signals.subscriptions import subscribe_to_thread
from tests.agents_core.signals.conftest import make_running_run

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_subscriber_gets_the_threads_signal_and_notification_events(thread, owner):
    subscription = await subscribe_to_thread(thread=thread, user=owner)
    run = await database_sync_to_async(make_running_run)(thread)
    assert await subscription.active_run_id() == str(run.id)
    await database_sync_to_async(send_notification_signal)(
        thread=thread, source="ci", summary="deploy done", priority="urgent"
    )
    first, second = await subscription.next_event(5), await subscription.next_event(5)
    assert first["type"] == "signal" and first["signal"]["status"] == "pending"
    assert first["runId"] == str(run.id) and first["seq"] >= 1
    assert second["type"] == "notification" and second["decision"] == "deliver"
    await subscription.unsubscribe()
    await database_sync_to_async(send_notification_signal)(
        thread=thread, source="ci", summary="more", priority="low"
    )
    assert subscription.subscription is None
    with pytest.raises(TimeoutError):
        await subscription.next_event(0.3)  # nothing after unsubscribing


async def test_abort_through_the_subscription_stops_the_active_run(thread, owner):
    subscription = await subscribe_to_thread(thread=thread, user=owner)
    run = await database_sync_to_async(make_running_run)(thread)
    assert await subscription.abort() == run.id
    await database_sync_to_async(run.refresh_from_db)()
    assert run.state.get("abortRequested") is True
    await subscription.unsubscribe()


async def test_abort_on_an_idle_thread_does_nothing(thread, owner):
    subscription = await subscribe_to_thread(thread=thread, user=owner)
    assert await subscription.abort() is None
    assert await subscription.active_run_id() is None
    await subscription.unsubscribe()


def test_the_abort_endpoint_aborts_the_owners_active_run(api, outsider_api, thread):
    run = make_running_run(thread)
    assert outsider_api.post(f"/api/threads/{thread.id}/abort").status_code == 404
    assert not Run.objects.get(id=run.id).state
    response = api.post(f"/api/threads/{thread.id}/abort")
    assert response.json() == {"aborted": str(run.id)}
    assert Run.objects.get(id=run.id).state["abortRequested"] is True
