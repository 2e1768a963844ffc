"""Chat messages from the thread websockets, taken together when they come together.

A message starts a run. When many arrive at once (a hundred chats sent together), taking
them one by one costs each its thread read, its transaction and its publish, one after the
other in the web process. Here each event loop keeps the messages that wait while a batch
is being taken, and takes them as the next batch: one read for all their threads (each
the sender's: selectors.threads_for_messages), then the one run start for all of them
(services/runs.runs_start: the same checks, rows and launch as a single start, one
statement per kind for the batch). Each message gets its own outcome: its run started,
or its error (not the sender's thread, empty, bad options, a run running on its thread).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from channels.db import database_sync_to_async

from agents_core.selectors import threads_for_messages
from agents_core.services.run_rows import Start
from agents_core.services.runs import runs_start
from common.exceptions import NotFound

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Chat:
    """One chat message: who sent it, to which thread, its text and run options."""

    user: Any
    thread_id: Any
    text: str
    options: dict[str, Any]


def chats_start(chats: list[Chat]) -> list[Exception | None]:
    """Take the messages together (the module's docstring); each one's outcome: None
    (its run started) or the error it gets."""
    threads = threads_for_messages([(chat.user, chat.thread_id) for chat in chats])
    results: list[Exception | None] = [None] * len(chats)
    starts: list[tuple[int, Start]] = []
    for index, chat in enumerate(chats):
        thread = threads.get((getattr(chat.user, "pk", None), str(chat.thread_id)))
        if thread is None:
            results[index] = NotFound("No such thread.", code="not_found")
        else:
            starts.append((index, Start(thread, chat.text, chat.user, chat.options)))
    outcomes = runs_start([start for _, start in starts])
    for (index, _), outcome in zip(starts, outcomes, strict=True):
        results[index] = outcome if isinstance(outcome, Exception) else None
    return results


@dataclass
class _Waiting:
    """The messages waiting on one event loop while a batch is being taken."""

    chats: list[tuple[Chat, asyncio.Future]] = field(default_factory=list)
    busy: bool = False


_waiting: dict[asyncio.AbstractEventLoop, _Waiting] = {}


async def chat_take(chat: Chat) -> None:
    """Take a message (the thread websocket's `chat`): returns once its run is stored and
    its `run-start` published, or raises the error it gets."""
    loop = asyncio.get_running_loop()
    waiting = _waiting.setdefault(loop, _Waiting())
    future: asyncio.Future = loop.create_future()
    waiting.chats.append((chat, future))
    if not waiting.busy:
        waiting.busy = True
        loop.create_task(_take(loop, waiting))
    await future


async def _take(loop: asyncio.AbstractEventLoop, waiting: _Waiting) -> None:
    """Take the waiting messages batch after batch until none waits."""
    try:
        while waiting.chats:
            batch, waiting.chats = waiting.chats, []
            try:
                results = await database_sync_to_async(chats_start, thread_sensitive=False)(
                    [chat for chat, _ in batch]
                )
            except Exception as exc:  # noqa: BLE001 - each message is answered with it
                logger.exception("Taking %d chat messages failed", len(batch))
                results = [exc] * len(batch)
            for (_, future), result in zip(batch, results, strict=True):
                if future.done():  # its socket went away meanwhile
                    continue
                if result is None:
                    future.set_result(None)
                else:
                    future.set_exception(result)
    finally:
        waiting.busy = False
        if not waiting.chats and _waiting.get(loop) is waiting:
            del _waiting[loop]
