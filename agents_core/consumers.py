"""The websocket of a thread: `/ws/threads/<id>/?after=<seq>` (docs/protocol.md).

On connect it subscribes first (to the run owner of this process, runtime/live.py, to the
thread's live events from other processes, runtime/relay.py, and to the thread's
channel-layer group) and then replays the events after `after`: the stored
ones, then those this process's owner delivered and has not stored yet. From then on it
forwards live events with a higher seq than the last one sent (no duplicates). An event
that skips ahead waits until the missing ones are found: stored (replayed from the
database), in this process's owner's tail, or, when their owner is another process, once
that process says it stored them (runtime/relay.py, or `stream.stored` on the layer).
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from typing import Any, ClassVar
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from rest_framework import serializers

from agents_core.runtime import active, live, relay
from agents_core.runtime.events import thread_group
from agents_core.selectors import thread_for, threads_for
from agents_core.services import run_chats
from agents_core.services import runs as run_services
from agents_core.services import threads as thread_services
from common.exceptions import ApplicationError
from common.websocket import Frames, JsonFrameConsumer


def _in_thread(fn: Any) -> Any:
    """The consumer's database work, in any of asgiref's threads: many sockets' messages
    (a hundred chats starting together) are served in parallel, each connection taken from
    the pool and given back. On SQLite (one writer at a time) in the one shared thread."""
    from django.db import connection

    return database_sync_to_async(fn, thread_sensitive=connection.vendor == "sqlite")


class ChatFrame(serializers.Serializer):
    text = serializers.CharField()
    options = serializers.DictField(required=False, default=dict)


class CallFrame(serializers.Serializer):
    toolCallId = serializers.CharField(max_length=100)  # noqa: N815 - the protocol's name


class ResumeFrame(CallFrame):
    payload = serializers.JSONField(required=False, allow_null=True, default=None)


class ClientToolResultFrame(CallFrame):
    output = serializers.JSONField(required=False, allow_null=True, default=None)
    error = serializers.CharField(required=False, allow_blank=True, default="")


class ThreadConsumer(JsonFrameConsumer):
    frames: ClassVar[Frames] = {
        "chat": (ChatFrame, "_chat"),
        "resume": (ResumeFrame, "_resume"),
        "abort": (None, "_abort"),
        "client-tool-result": (ClientToolResultFrame, "_client_tool_result"),
        "get-partial": (CallFrame, "_get_partial"),
    }

    async def connect(self) -> None:
        self.thread_id = self.scope["url_route"]["kwargs"]["thread_id"]
        self.user = self.scope.get("user")
        stored = await _in_thread(_stored_seq)(self.user, self.thread_id)
        await self.accept()
        if stored is None:
            anonymous = not getattr(self.user, "is_authenticated", False)
            await self.close(code=4401 if anonymous else 4403)
            return
        query = parse_qs(self.scope.get("query_string", b"").decode())
        try:
            self.last_seq = max(0, int(query.get("after", ["0"])[0]))
        except ValueError:
            self.last_seq = 0
        self.group = thread_group(self.thread_id)
        self.loop = asyncio.get_running_loop()
        self.sending = asyncio.Lock()  # one path sends at a time, in seq order
        self.held: dict[int, Any] = {}  # live events after a gap not found yet
        self.recent: deque[tuple[int, Any]] = deque(maxlen=256)  # the last events sent
        self.incoming: deque[tuple[int, str]] = deque()  # from this process's owner
        self.draining = False
        live.subscribe(self.thread_id, self)
        await relay.follow(self.thread_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        async with self.sending:
            local = live.owner(self.thread_id)
            if self.last_seq > stored and (local is None or local.seq is not None):
                lost = await _in_thread(_stored_if_lost)(
                    self.thread_id, self.last_seq, local.seq if local else None
                )
                if lost is not None:
                    # The client was sent events that were never stored (their run's
                    # process died before it stored them): it starts over from the store.
                    await self._reset(lost)
            await self._catch_up()

    async def disconnect(self, code: int) -> None:
        if getattr(self, "group", None):
            live.unsubscribe(self.thread_id, self)
            if not any(s.loop is self.loop for s in live.subscribers(self.thread_id)):
                relay.unfollow(self.thread_id)
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def _replay(self, *, after: int, before: int | None = None) -> None:
        while True:
            if before is None:
                events = await _in_thread(thread_services.thread_events_after)(
                    thread_id=self.thread_id, after=after
                )
            else:
                events = await _in_thread(thread_services.thread_events_between)(
                    thread_id=self.thread_id, after=after, before=before
                )
            for event in events:
                await self._send_event(event)
            if before is not None or len(events) < thread_services.EVENTS_PAGE:
                return
            after = self.last_seq

    async def _catch_up(self, before: int | None = None) -> None:
        """Send what is missing after the last seq sent: stored, then this process's
        owner's unstored tail; then the held events that now follow."""
        await self._replay(after=self.last_seq, before=before)
        for seq, text in live.tail_after(self.thread_id, self.last_seq):
            if before is None or seq < before:
                await self._send_event(text, seq)
        await self._send_held()

    async def _send_held(self) -> None:
        while self.last_seq + 1 in self.held:
            seq = self.last_seq + 1
            await self._send_event(self.held.pop(seq), seq)
        for seq in [seq for seq in self.held if seq <= self.last_seq]:
            del self.held[seq]

    async def _forward(self, event: Any, seq: int | None) -> None:
        """A live event: sent now, or held until the events before it are found."""
        if seq is not None and seq > self.last_seq + 1:
            await self._catch_up(before=seq)
            if seq > self.last_seq + 1:
                self.held[seq] = event  # unstored at another process: see stream_stored
                return
        await self._send_event(event, seq)
        if self.held:
            await self._send_held()

    async def _send_event(self, event: dict[str, Any] | str, seq: int | None = None) -> None:
        """Send an event (a dict, or its stored JSON text with its `seq`) unless it was
        sent already."""
        if isinstance(event, dict):
            seq = event.get("seq")
        if seq is not None:
            if seq <= self.last_seq:
                return
            self.last_seq = seq
            self.recent.append((seq, event))
        if isinstance(event, str):
            await self.send(text_data=event)
        else:
            await self.send_json(event)

    def live_events(self, items: list[tuple[int, str]]) -> None:
        """From the thread's run, on this consumer's loop: told by this process's owner
        (live.py) or received from another process (relay.py)."""
        self.incoming.extend(items)
        if not self.draining:
            self.draining = True
            self.loop.create_task(self._drain())

    async def _drain(self) -> None:
        try:
            async with self.sending:
                while self.incoming:
                    seq, text = self.incoming.popleft()
                    await self._forward(text, seq)
        finally:
            self.draining = False

    def live_stored(self, seq: int) -> None:
        """The run's process (another one) stored the thread's events up to `seq`."""
        if seq > self.last_seq:
            self.loop.create_task(self.stream_stored({"upTo": seq}))

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels checks the database connection (a hop to the one sync thread) before
        # every message; stream events do not touch the database, and there are many.
        kind = message.get("type")
        if kind == "stream.events":
            await self.stream_events(message)
            return
        if kind == "stream.stored":
            await self.stream_stored(message)
            return
        await super().dispatch(message)

    # --- group messages ------------------------------------------------------------------
    async def stream_events(self, message: dict[str, Any]) -> None:
        # Numbered events come as JSON text (sent as it is); unsequenced ones (answers,
        # hints) as dicts.
        items = (
            message["encoded"]
            if "encoded" in message
            else [(event.get("seq"), event) for event in message["events"]]
        )
        if message.get("reset") and items and self._sent_other(*items[0]):
            # Numbered after what the dead owner stored: what it sent beyond is gone.
            async with self.sending:
                await self._reset(items[0][0] - 1)
        if all(seq is not None and seq <= self.last_seq for seq, _ in items):
            return  # delivered already (by this process's owner, or a replay)
        async with self.sending:
            for seq, event in items:
                await self._forward(event, seq)

    def _sent_other(self, seq: int, text: str) -> bool:
        """Whether this socket was sent another event under `seq` than `text`."""
        if seq > self.last_seq:
            return False
        for sent_seq, sent in self.recent:
            if sent_seq == seq:
                return (sent if isinstance(sent, str) else json.dumps(sent)) != text and (
                    json.loads(text) != (json.loads(sent) if isinstance(sent, str) else sent)
                )
        return True

    async def _reset(self, last_seq: int) -> None:
        """Tell the client to drop what it has after `last_seq` (it reloads the thread)."""
        self.last_seq = last_seq
        self.held.clear()
        await self.send_json({"type": "reset", "lastSeq": last_seq})

    async def stream_stored(self, message: dict[str, Any]) -> None:
        """The owner (another process) stored events up to `upTo`: what this consumer
        has not seen of them (held behind a gap, or delivered before it subscribed) can
        be replayed now."""
        if message["upTo"] > self.last_seq:
            async with self.sending:
                await self._catch_up()

    # --- client messages (a bad frame gets an error event: common.websocket) ----------------
    async def _chat(self, frame: dict[str, Any]) -> None:
        chat = run_chats.Chat(self.user, self.thread_id, frame["text"], frame["options"])
        async with active.taking_message():
            await run_chats.chat_take(chat)

    async def _resume(self, frame: dict[str, Any]) -> None:
        await _in_thread(_resume)(
            self.user, self.thread_id, frame["toolCallId"], frame.get("payload")
        )

    async def _client_tool_result(self, frame: dict[str, Any]) -> None:
        await _in_thread(_client_tool_result)(self.user, self.thread_id, frame["toolCallId"], frame)

    async def _abort(self, frame: dict[str, Any]) -> None:
        await _in_thread(_abort)(self.user, self.thread_id)

    async def _get_partial(self, frame: dict[str, Any]) -> None:
        answer = await _in_thread(thread_services.thread_partial)(
            thread_id=self.thread_id, tool_call_id=frame["toolCallId"]
        )
        await self.send_json(answer)


# Thin wrappers: one service call each, run in a thread by database_sync_to_async.
def _stored_seq(user: Any, thread_id: Any) -> int | None:
    """The thread's last stored seq, or None when the socket may not open (missing and
    someone else's are not told apart)."""
    return threads_for(user).filter(pk=thread_id).values_list("last_seq", flat=True).first()


def _stored_if_lost(thread_id: Any, after: int, owner_seq: int | None) -> int | None:
    """The thread's last stored seq when a client that was sent up to `after` saw events
    that exist nowhere (else None): beyond what is stored, with no run streaming (whose
    process may hold them unstored) or beyond this process's run's numbering. The run is
    looked for first: a run that is not running any more has stored everything."""
    from agents_core.models import Run, Thread

    if owner_seq is None and Run.objects.running().filter(thread_id=thread_id).exists():
        return None
    last = Thread.objects.values_list("last_seq", flat=True).get(pk=thread_id)
    return last if after > max(last, owner_seq or 0) else None


def _suspended_run_of_call(user: Any, thread_id: Any, tool_call_id: str) -> Any:
    from agents_core.models import Run, RunStatus

    thread = thread_for(user, thread_id)
    run = (
        Run.objects.filter(thread=thread, tool_calls__call_id=tool_call_id)
        .order_by("-created_at")
        .first()
    )
    if run is None:
        raise ApplicationError("No such tool call on this thread.", code="not_found")
    if run.status != RunStatus.SUSPENDED:
        raise ApplicationError("This call is not waiting for an answer.", code="not_suspended")
    return run


def _resume(user: Any, thread_id: Any, tool_call_id: str, payload: Any) -> None:
    run = _suspended_run_of_call(user, thread_id, tool_call_id)
    run_services.run_resume(run=run, tool_call_id=tool_call_id, payload=payload, user=user)


def _client_tool_result(
    user: Any, thread_id: Any, tool_call_id: str, content: dict[str, Any]
) -> None:
    run = _suspended_run_of_call(user, thread_id, tool_call_id)
    run_services.client_tool_result(
        run=run,
        tool_call_id=tool_call_id,
        output=content.get("output"),
        error=content.get("error"),
        user=user,
    )


def _abort(user: Any, thread_id: Any) -> None:
    thread = thread_for(user, thread_id)
    run = run_services.thread_active_run(thread=thread, suspended=True)
    if run is None:
        raise ApplicationError("Nothing is running on this thread.", code="not_running")
    run_services.run_abort(run=run, user=user)
