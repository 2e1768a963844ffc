"""Signals against the real run loop (offline model, runs as tasks on the test's loop)."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from agents_core.models import Message, MessageRole, Run, Signal, SignalStatus
from agents_core.signals.services import queue_message, send_message
from tests.agents_core.runtime.conftest import events_of, settle, start

pytestmark = pytest.mark.django_db(transaction=True)


async def wait_until(predicate, timeout: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await database_sync_to_async(predicate)():
        assert loop.time() < deadline, "the condition did not come true in time"
        await asyncio.sleep(0.05)


@database_sync_to_async
def _thread(make_thread):
    return make_thread("weather-assistant")


async def test_a_message_sent_during_a_tool_call_reaches_the_next_model_call(make_thread, owner):
    thread = await _thread(make_thread)
    sent = []

    def before_tool_call(info):
        # Runs between the first model call and the second.
        sent.append(send_message(thread=thread, message="also for Oslo", attributes={"from": "pm"}))
        return None

    run = await start(
        thread,
        "use weather_lookup for Paris",
        owner,
        {"hooks": {"before_tool_call": before_tool_call}},
    )
    await settle()

    @database_sync_to_async
    def check():
        run.refresh_from_db()
        assert run.status == "completed"
        assert sent[0].decision == "deliver" and sent[0].run_id == run.id
        signal = Signal.objects.get()
        assert (signal.status, signal.delivered_in_run_id) == (SignalStatus.DELIVERED, run.id)
        roles = list(Message.objects.filter(run=run).order_by("id").values_list("role", flat=True))
        # user, assistant (tool call), tool result, the signal, then the second answer.
        assert roles == ["user", "assistant", "tool", "signal", "assistant"]
        signal_message = Message.objects.get(role=MessageRole.SIGNAL)
        assert signal_message.parts[0]["text"] == '<message from="pm">also for Oslo</message>'
        events = events_of(thread)
        types = [e["type"] for e in events]
        delivered = next(
            i
            for i, e in enumerate(events)
            if e["type"] == "signal" and e["signal"]["status"] == "delivered"
        )
        assert types.index("tool-result") < delivered < types.index("run-finish")

    await check()


async def test_a_message_queued_during_a_run_starts_the_next_run_when_it_ends(make_thread, owner):
    thread = await _thread(make_thread)

    def before_tool_call(info):
        queue_message(thread=thread, message="now convert 20 celsius to fahrenheit")
        return None

    first = await start(
        thread,
        "use weather_lookup for Paris",
        owner,
        {"hooks": {"before_tool_call": before_tool_call}},
    )
    await settle()
    # The next run is launched from the first one's end hook (on whichever loop is the
    # process's): wait, bounded, for the thread to have two runs that both ended.
    await wait_until(
        lambda: Run.objects.filter(thread=thread).exclude(status="running").count() == 2
    )

    @database_sync_to_async
    def check():
        runs = list(Run.objects.filter(thread=thread).order_by("created_at"))
        assert [r.id for r in runs][0] == first.id
        assert len(runs) == 2
        assert [r.status for r in runs] == ["completed", "completed"]
        second_input = Message.objects.filter(run=runs[1]).order_by("id").first()
        assert second_input.parts[0]["text"] == "now convert 20 celsius to fahrenheit"
        assert Signal.objects.get().status == SignalStatus.DELIVERED

    await check()
