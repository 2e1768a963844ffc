"""The websocket of a thread: `/ws/threads/<id>/?after=<seq>` (docs/protocol.md).

On connect it joins the thread's group first and then replays the stored events after
`after`, so nothing published meanwhile is missed; from then on it forwards live events
with a higher seq than the last one sent (no duplicates), and fills a gap from the
database before forwarding an event that skips ahead.
"""

from __future__ import annotations

from typing import Any, ClassVar
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from rest_framework import serializers

from agents_core.runtime.events import thread_group
from agents_core.selectors import thread_for, threads_for
from agents_core.services import runs as run_services
from agents_core.services import threads as thread_services
from studio.exceptions import ApplicationError
from studio.websocket import Frames, JsonFrameConsumer


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
        owned = await _in_thread(_owns)(self.user, self.thread_id)
        await self.accept()
        if not owned:
            anonymous = not getattr(self.user, "is_authenticated", False)
            await self.close(code=4401 if anonymous else 4403)
            return
        query = parse_qs(self.scope.get("query_string", b"").decode())
        try:
            self.last_seq = max(0, int(query.get("after", ["0"])[0]))
        except ValueError:
            self.last_seq = 0
        self.group = thread_group(self.thread_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self._replay(after=self.last_seq)

    async def disconnect(self, code: int) -> None:
        if getattr(self, "group", None):
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

    async def _send_event(self, event: dict[str, Any] | str, seq: int | None = None) -> None:
        """Send an event (a dict, or its stored JSON text with its `seq`) unless it was
        sent already."""
        if isinstance(event, dict):
            seq = event.get("seq")
        if seq is not None:
            if seq <= self.last_seq:
                return
            self.last_seq = seq
        if isinstance(event, str):
            await self.send(text_data=event)
        else:
            await self.send_json(event)

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels checks the database connection (a hop to the one sync thread) before
        # every message; stream events do not touch the database, and there are many.
        if message.get("type") == "stream.events":
            await self.stream_events(message)
            return
        await super().dispatch(message)

    # --- group messages ------------------------------------------------------------------
    async def stream_events(self, message: dict[str, Any]) -> None:
        # Stored events come as the JSON that was stored (sent as it is); unsequenced ones
        # (answers, hints) as dicts.
        items = (
            message["encoded"]
            if "encoded" in message
            else [(event.get("seq"), event) for event in message["events"]]
        )
        for seq, event in items:
            if seq is not None and seq > self.last_seq + 1:
                # Published out of order by another writer: the missing ones are stored.
                await self._replay(after=self.last_seq, before=seq)
            await self._send_event(event, seq)

    # --- client messages (a bad frame gets an error event: studio.websocket) ----------------
    async def _chat(self, frame: dict[str, Any]) -> None:
        await _in_thread(_chat)(self.user, self.thread_id, frame["text"], frame["options"])

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
def _owns(user: Any, thread_id: Any) -> bool:
    """Whether the socket may open: missing and someone else's are not told apart."""
    return threads_for(user).filter(pk=thread_id).exists()


def _chat(user: Any, thread_id: Any, text: str, options: dict[str, Any]) -> None:
    thread = thread_for(user, thread_id)
    run_services.run_start_safe(thread=thread, message=text, user=user, options=options)


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
