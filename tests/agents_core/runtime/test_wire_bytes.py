"""What the page receives for a streamed tool argument (runtime/bus/events.py, patches.py):
the deltas a run produces within one pass of its event loop go out as one event, so a
long argument costs a small multiple of its size on the socket; a delta of a later pass
is its own event; what is stored and replayed is what was sent."""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async

from agents_core.models import StreamEvent
from agents_core.runtime.bus.events import EventSink
from agents_core.runtime.run.partial_json import IncrementalJSONParser
from tests.agents_core.runtime.conftest import settle, start
from tests.agents_core.runtime.test_deliver_first import FOREVER, _run
from tests.agents_core.runtime.test_partial_json import apply
from tests.agents_core.runtime.test_websocket import communicator

pytestmark = pytest.mark.django_db(transaction=True)


def folded(deltas: list[dict]) -> object:
    value = None
    for delta in deltas:
        for patch in delta["patches"]:
            value = apply(value, patch)
    return value


async def frames_until_finish(comm) -> list[str]:
    frames = []
    for _ in range(10_000):
        text = await comm.receive_from(timeout=30)
        frames.append(text)
        if json.loads(text)["type"] in ("run-finish", "run-error"):
            return frames
    raise AssertionError("the run never finished")


def of_call(frames: list[str], kind: str) -> list[str]:
    return [text for text in frames if json.loads(text)["type"] == kind]


async def test_a_long_argument_costs_a_small_multiple_of_its_size_live_and_replayed(
    make_thread, owner
):
    thread = await database_sync_to_async(make_thread)("rt-agent")
    words = ['say "hi"', "naïve café", "東京", "back\\slash", "tab\there", "streaming"]
    text = " ".join(words[i % len(words)] for i in range(2500))
    comm = communicator(thread, owner)
    await comm.connect()
    # 16-character chunks with no pause between them: they come in one pass of the loop.
    options = {"providerOptions": {"studio": {"delay": 0, "chunk_size": 16}}}
    await start(thread, "use rt_echo with " + json.dumps({"text": text}), owner, options)
    live = await frames_until_finish(comm)
    await settle()
    deltas = of_call(live, "tool-input-delta")
    argument = "".join(json.loads(d)["argsTextDelta"] for d in deltas)
    assert json.loads(argument) == {"text": text}
    assert len(argument) > 20_000
    sent = sum(len(d.encode()) for d in deltas)
    # Before deltas of one pass were joined: about 17x (one event per 16 characters).
    assert sent < 3 * len(argument.encode())
    call = json.loads(of_call(live, "tool-call")[0])
    assert folded([json.loads(d) for d in deltas]) == call["input"] == {"text": text}
    # A reconnect from the start replays the same events from the database.
    again = communicator(thread, owner, after=0)
    await again.connect()
    replayed = await frames_until_finish(again)
    assert [json.loads(t) for t in replayed] == [json.loads(t) for t in live]
    seqs = [json.loads(t)["seq"] for t in replayed]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    stored = await database_sync_to_async(
        lambda: list(StreamEvent.objects.filter(thread=thread).values_list("seq", flat=True))
    )()
    assert sorted(stored) == list(range(1, len(stored) + 1))
    for socket in (comm, again):
        await socket.disconnect()


def _delta(sink: EventSink, parser: IncrementalJSONParser, text: str) -> dict:
    return sink.base(
        "tool-input-delta",
        toolCallId="c1",
        toolName="t",
        argsTextDelta=text,
        patches=parser.feed(text),
    )


async def test_deltas_of_one_pass_go_out_as_one_event_and_a_later_pass_s_alone(make_thread, owner):
    thread = await database_sync_to_async(make_thread)()
    sink = EventSink(
        thread_id=thread.pk,
        run_id=(await database_sync_to_async(_run)(thread)).pk,
        interval=FOREVER,
    )
    comm = communicator(thread, owner)
    await comm.connect()
    await sink.emit("run-start", resumed=False)
    await sink.emit("tool-input-start", toolCallId="c1", toolName="t", kind="code", step=1)
    parser = IncrementalJSONParser()
    for piece in ['{"a": [1, ', '{"b": "x', 'y"}], "c": "z']:
        sink.delta(_delta(sink, parser, piece))
    await asyncio.sleep(0)  # the pass ends
    sink.delta(_delta(sink, parser, "zz"))
    sink.delta(sink.base("text-delta", textDelta="between", step=1))
    sink.delta(_delta(sink, parser, '"}'))
    await sink.emit("tool-input-end", toolCallId="c1", toolName="t")
    received = [await comm.receive_json_from(timeout=10) for _ in range(7)]
    assert [(e["seq"], e["type"]) for e in received] == [
        (1, "run-start"),
        (2, "tool-input-start"),
        (3, "tool-input-delta"),
        (4, "tool-input-delta"),
        (5, "text-delta"),
        (6, "tool-input-delta"),
        (7, "tool-input-end"),
    ]
    joined = received[2]
    assert joined["argsTextDelta"] == '{"a": [1, {"b": "xy"}], "c": "z'
    # Merged, then compacted: what the three deltas built, set once.
    assert joined["patches"] == [
        {"op": "set", "path": [], "value": {"a": [1, {"b": "xy"}], "c": "z"}}
    ]
    assert received[3]["patches"] == [{"op": "append", "path": ["c"], "value": "zz"}]
    assert folded([received[2], received[3], received[5]]) == parser.finish()
    await sink.release()
    stored = await database_sync_to_async(
        lambda: [e.payload for e in StreamEvent.objects.filter(thread=thread).order_by("seq")]
    )()
    assert stored == received
    assert await comm.receive_nothing(timeout=0.2)
    await comm.disconnect()
