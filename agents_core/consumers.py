"""The websocket of a thread: `/ws/threads/<id>/?after=<seq>` (docs/protocol.md).

It subscribes to the thread on the event bus (runtime/bus: the stored events after
`after`, then live ones, in order, once each) and hands each client frame to a service,
whose database work runs in any of asgiref's threads (many sockets in parallel)."""

from __future__ import annotations

import functools
from typing import Any, ClassVar
from urllib.parse import parse_qs

from channels.db import database_sync_to_async

from agents_core import serializers as shapes
from agents_core.runtime import bus
from agents_core.runtime.execution import active
from agents_core.services import run_chats, thread_calls
from agents_core.services import threads as thread_services
from common.websocket import Frames, JsonFrameConsumer

_in_thread = functools.partial(database_sync_to_async, thread_sensitive=False)


class ThreadConsumer(JsonFrameConsumer):
    channel_layer_alias = None  # its events come from the bus: it joins no layer group
    frames: ClassVar[Frames] = {
        "chat": (shapes.ChatFrame, "_chat"),
        "resume": (shapes.ResumeFrame, "_resume"),
        "abort": (None, "_abort"),
        "client-tool-result": (shapes.ClientToolResultFrame, "_client_tool_result"),
        "get-partial": (shapes.CallFrame, "_get_partial"),
    }
    subscription: bus.Subscription | None = None

    async def connect(self) -> None:
        self.thread_id = self.scope["url_route"]["kwargs"]["thread_id"]
        self.user = self.scope.get("user")
        stored = await _in_thread(thread_calls.thread_stored_seq)(self.user, self.thread_id)
        await self.accept()
        if stored is None:
            anonymous = not getattr(self.user, "is_authenticated", False)
            await self.close(code=4401 if anonymous else 4403)
            return
        after = parse_qs(self.scope.get("query_string", b"").decode()).get("after", ["0"])[0]
        self.subscription = await bus.subscribe(
            self.thread_id,
            after=int(after) if after.isdecimal() else 0,
            stored=stored,
            send=lambda t: self.send(text_data=t),
        )

    async def disconnect(self, code: int) -> None:
        if self.subscription is not None:
            self.subscription.close()

    async def _chat(self, frame: dict[str, Any]) -> None:
        chat = run_chats.Chat(self.user, self.thread_id, frame["text"], frame["options"])
        async with active.taking_message():
            await run_chats.chat_take(chat)

    async def _resume(self, frame: dict[str, Any]) -> None:
        await _in_thread(thread_calls.call_resume)(
            self.user, self.thread_id, frame["toolCallId"], frame.get("payload")
        )

    async def _client_tool_result(self, frame: dict[str, Any]) -> None:
        await _in_thread(thread_calls.call_client_result)(
            self.user, self.thread_id, frame["toolCallId"], frame["output"], frame["error"]
        )

    async def _abort(self, frame: dict[str, Any]) -> None:
        await _in_thread(thread_calls.thread_run_abort)(self.user, self.thread_id)

    async def _get_partial(self, frame: dict[str, Any]) -> None:
        answer = await _in_thread(thread_services.thread_partial)(
            thread_id=self.thread_id, tool_call_id=frame["toolCallId"]
        )
        await self.send_json(answer)
