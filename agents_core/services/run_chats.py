"""Chat messages from the thread websockets, taken together when they come together.

A message starts a run (`run_start`). When many arrive at once (a hundred chats sent
together), taking them one by one costs each its thread read, its transaction and its
publish, one after the other in the web process. Here each event loop keeps the messages
that wait while a batch is being taken, and takes them as the next batch: one read for
all their threads (with the owner checked per message, as `thread_for` checks it), one
statement for their runs, messages and titles, one for their `run-start` events, one
commit, then every `run-start` published at once and every run launched.

A message that needs more than a new run goes the one-at-a-time way (`chat_start`),
after the batch: its thread has a suspended run (answered or superseded first) or a
running one (a conflict, or a stale run to end first), or another message of the batch
took its thread already (it then meets that run: a conflict). So does every message of a
batch whose statement fails (a run started on one of the threads meanwhile, by another
process). A message refused (empty, bad options, not the user's thread) gets its own
error; the others of its batch are taken. On SQLite (the embedded studio: one writer at
a time) every message goes the one-at-a-time way.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from channels.db import database_sync_to_async
from django.db import DatabaseError, connection, transaction
from django.db.models import Exists, OuterRef

from agents_core.models import Run, RunStatus, Thread
from agents_core.runtime import active as active_runs
from agents_core.selectors import thread_for
from agents_core.services.run_options import run_options_check
from agents_core.services.run_rows import NewRun, new_run, runs_insert
from agents_core.services.runs import run_start_safe
from common.exceptions import ApplicationError, NotFound

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Chat:
    """One chat message: who sent it, to which thread, its text and run options."""

    user: Any
    thread_id: Any
    text: str
    options: dict[str, Any]


def chat_start(chat: Chat) -> None:
    """Take one message: the thread read for it (the user's, or NotFound), then its run
    started (`run_start_safe`)."""
    thread = thread_for(chat.user, chat.thread_id, for_message=True)
    run_start_safe(thread=thread, message=chat.text, user=chat.user, options=chat.options)


def _threads(chats: list[Chat]) -> dict[str, Thread]:
    """The chats' threads with their agents, whether a run waits for an answer on each
    (`has_suspended`) and whether one is running (`has_running`): one query."""
    runs = Run.objects.filter(thread=OuterRef("pk"))
    threads = (
        Thread.objects.filter(pk__in={str(chat.thread_id) for chat in chats})
        .select_related("agent")
        .annotate(
            has_suspended=Exists(runs.filter(status=RunStatus.SUSPENDED)),
            has_running=Exists(runs.filter(status=RunStatus.RUNNING)),
        )
    )
    return {str(thread.pk): thread for thread in threads}


def _new(chat: Chat, thread: Thread | None) -> NewRun | None:
    """The new run of a message that needs nothing else (None: it goes one at a time);
    NotFound for a thread that is not the sender's, ApplicationError for a refused one."""
    user = chat.user
    if (
        thread is None
        or not getattr(user, "is_authenticated", False)
        or thread.owner_id != getattr(user, "pk", None)
    ):
        raise NotFound("No such thread.", code="not_found")
    if thread.has_suspended or thread.has_running:  # type: ignore[attr-defined]
        return None
    text = (chat.text or "").strip()
    if not text:
        raise ApplicationError("The message is empty.", code="empty_message")
    stored, hooks = run_options_check(agent=thread.agent, options=chat.options)
    new = new_run(thread=thread, text=text, user=user, stored=stored)
    new.hooks = hooks
    return new


def chats_start(chats: list[Chat]) -> list[Exception | None]:
    """Take the messages together (the module's docstring); each one's outcome: None
    (its run started) or the error it gets."""
    results: list[Exception | None] = [None] * len(chats)
    alone: list[int] = []
    together: list[tuple[int, NewRun]] = []
    threads = _threads(chats)
    taken: set[str] = set()
    for index, chat in enumerate(chats):
        thread = threads.get(str(chat.thread_id))
        try:
            new = _new(chat, thread)
        except ApplicationError as exc:
            results[index] = exc
            continue
        if new is None or str(chat.thread_id) in taken:
            alone.append(index)
        else:
            taken.add(str(chat.thread_id))
            together.append((index, new))
    if together:
        try:
            with transaction.atomic():
                runs_insert([new for _, new in together])
        except DatabaseError:
            # A run started on one of the threads since the read (another process), or
            # a thread deleted: each message is taken alone and gets its own outcome.
            alone += [index for index, _ in together]
            together = []
    for _, new in together:
        active_runs.remember_hooks(new.run.id, new.hooks)
    if together:
        active_runs.launch_many([new.run.id for _, new in together])
    for index in sorted(alone):
        try:
            chat_start(chats[index])
        except Exception as exc:  # noqa: BLE001 - the consumer answers each with its error
            results[index] = exc
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
    if connection.vendor != "postgresql":
        await database_sync_to_async(chat_start, thread_sensitive=True)(chat)
        return
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
