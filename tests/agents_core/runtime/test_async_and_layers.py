"""An async tool finished by a real Celery worker and injected into the next turn; two
subscribers on the Redis channel layer see the same stream."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from agents_core.models import Message, ToolCall
from tests.agents_core.runtime.conftest import events_of, run_to_end, settle
from tests.conftest import celery_worker_process

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def runtime_worker(synced):
    with celery_worker_process(STUDIO_CODE_MODULES="tests.agents_core.runtime.definitions") as p:
        yield p


@pytest.mark.celery_worker
async def test_an_async_tool_runs_on_a_worker_and_its_result_joins_the_next_turn(
    make_thread, owner, runtime_worker
):
    thread = await database_sync_to_async(make_thread)("rt-agent")
    run, events = await run_to_end(thread, "use rt_report for the budget", owner)
    pending = next(e for e in events if e["type"] == "tool-call-pending")
    assert pending["output"] == {"status": "pending"}
    assert run.status == "completed"

    for _ in range(300):
        later = [
            e
            for e in await database_sync_to_async(events_of)(thread)
            if e["type"] == "tool-result" and e.get("async")
        ]
        if later:
            break
        await asyncio.sleep(0.1)
    assert later, "the worker never completed the call"
    assert later[0]["toolCallId"] == pending["toolCallId"] and later[0]["runId"] == str(run.pk)
    assert later[0]["output"] == {"report": "Report on the budget", "pages": 3}
    call = await database_sync_to_async(ToolCall.objects.get)(call_id=pending["toolCallId"])
    assert call.status == "completed"

    _, next_events = await run_to_end(thread, "what happened?", owner)
    # The result reaches the model at its next call after completion: step 2 of the same
    # run when the worker was faster than the model, else the next run.
    everything = await database_sync_to_async(events_of)(thread)
    text = "".join(e["textDelta"] for e in everything if e["type"] == "text-delta")
    assert "A background job finished" in text and "function [rt_report] completed" in text
    assert text.count("function [rt_report] completed") == 1
    context = await database_sync_to_async(
        lambda: Message.objects.get(thread=thread, role="signal").parts[0]["text"]
    )()
    prefix, suffix = "<context>function [rt_report] completed with response ", "</context>"
    assert context.startswith(prefix) and context.endswith(suffix)
    assert json.loads(context[len(prefix) : -len(suffix)]) == {
        "report": "Report on the budget",
        "pages": 3,
    }


async def test_a_worker_that_completes_the_call_at_once_is_not_overwritten_by_pending(
    make_thread, owner, monkeypatch, synced
):
    """The worker may finish before the run has recorded the call as pending: it is
    recorded in the transaction that enqueues the task, so a result that comes at once is
    kept (here the task runs the moment it is enqueued, in the enqueuing thread)."""
    from tools_app.services import runs
    from tools_app.tasks import tool_run_execute

    monkeypatch.setattr(runs, "tool_run_send", tool_run_execute.run)
    thread = await database_sync_to_async(make_thread)("rt-agent")
    run, events = await run_to_end(thread, "use rt_report for the budget", owner)
    pending = next(e for e in events if e["type"] == "tool-call-pending")
    call = await database_sync_to_async(ToolCall.objects.get)(call_id=pending["toolCallId"])
    assert (call.status, call.output) == (
        "completed",
        {"report": "Report on the budget", "pages": 3},
    )
    assert call.finished_at is not None
    stored = await database_sync_to_async(events_of)(thread)
    assert [e["output"] for e in stored if e["type"] == "tool-result" and e.get("async")] == [
        {"report": "Report on the budget", "pages": 3}
    ]


async def test_two_subscribers_see_the_same_stream_through_redis(make_thread, owner, settings):
    from channels.layers import channel_layers

    from studio.routing import websocket_urlpatterns
    from studio.settings import redis_channel_layer

    settings.CHANNEL_LAYERS = {
        "default": redis_channel_layer(
            settings.REDIS_URL, kind=settings.STUDIO_CHANNEL_LAYER, prefix=f"rt-test-{os.getpid()}"
        )
    }
    channel_layers.backends.clear()
    try:
        thread = await database_sync_to_async(make_thread)("weather-assistant")
        comms = []
        for _ in range(2):
            comm = WebsocketCommunicator(
                URLRouter(websocket_urlpatterns), f"/ws/threads/{thread.pk}/"
            )
            comm.scope["user"] = owner
            assert (await comm.connect())[0]
            comms.append(comm)
        from channels.layers import get_channel_layer
        from channels_redis.core import RedisChannelLayer
        from channels_redis.pubsub import RedisPubSubChannelLayer

        assert isinstance(get_channel_layer(), RedisPubSubChannelLayer | RedisChannelLayer)
        await comms[0].send_json_to(
            {
                "type": "chat",
                "text": "use weather_lookup for Nairobi",
                "options": {"providerOptions": {"studio": {"delay": 0.01}}},
            }
        )
        streams = []
        for comm in comms:
            got = []
            while not got or got[-1]["type"] != "run-finish":
                got.append(await comm.receive_json_from(timeout=30))
            streams.append(got)
        await settle()
        assert streams[0] == streams[1]
        assert streams[0] == await database_sync_to_async(events_of)(thread)
        for comm in comms:
            await comm.disconnect()
    finally:
        channel_layers.backends.clear()


async def test_a_result_landing_between_memory_read_and_model_call_is_news_for_the_next_one(
    make_thread, owner, monkeypatch
):
    """The race CI once hit: the worker's result commits after the step read the thread's
    memory but before the step's message was numbered. The model never saw it, so it must
    come after that message, where the next model call takes it as news."""
    from agents_core.models import MessageRole
    from agents_core.runtime.storage import store_sql

    thread = await database_sync_to_async(make_thread)("rt-agent")
    real_start = store_sql.message_start
    landed = []

    def start_after_a_landing(*, run_id, thread_id):
        if not landed and Message.objects.filter(thread_id=thread_id, role="tool").exists():
            landed.append(
                Message.objects.create(
                    thread_id=thread_id,
                    run_id=run_id,
                    role=MessageRole.SIGNAL,
                    parts=[
                        {
                            "type": "context",
                            "text": "<context>function [rt_report] completed with response "
                            '{"pages": 3}</context>',
                        }
                    ],
                ).pk
            )
        return real_start(run_id=run_id, thread_id=thread_id)

    monkeypatch.setattr(store_sql, "message_start", start_after_a_landing)
    run, events = await run_to_end(thread, "use rt_report for the budget", owner)
    assert landed and run.status == "completed"
    first = "".join(e["textDelta"] for e in events if e["type"] == "text-delta")
    assert "A background job finished" not in first

    _, events = await run_to_end(thread, "what happened?", owner)
    text = "".join(e["textDelta"] for e in events if e["type"] == "text-delta")
    assert text.startswith("A background job finished: <context>function [rt_report] completed")
    roles = await database_sync_to_async(
        lambda: list(Message.objects.filter(thread=thread).values_list("role", flat=True))
    )()
    assert roles == ["user", "assistant", "tool", "assistant", "signal", "user", "assistant"]
