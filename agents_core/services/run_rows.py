"""A new run: the checks on who starts it and with what, its rows, its first event and its
launch, one path for one run (`services/runs.run_start`) and for many started together
(`runs.runs_start`, the websocket's chat messages that arrive together).

A new run is its row (status running, queued for a process), its first message (the
user's text, or the signal that starts it), the thread's placeholder title when it has
none, and its `run-start` event, stored with the rows and published once they are
committed: the page sees the message taken at once, however many runs wait for their loop.
Once committed the runs that execute on their own are launched, all with one wake-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from agents_core.models import MessageRole, Run, RunStatus, Thread
from agents_core.runtime import bus
from agents_core.runtime.execution import active as active_runs
from agents_core.runtime.execution.processes import queue_marker
from agents_core.runtime.storage.event_store_sql import events_store_many
from agents_core.runtime.storage.store_sql import runs_create
from agents_core.services.run_options import run_options_check
from agents_core.services.threads import title_summary
from common.exceptions import ApplicationError, NotFound

CHAT, SIGNAL, SUBAGENT = "chat", "signal", "subagent"


@dataclass(frozen=True)
class SignalInput:
    """A signal that starts a run: the thread keeps `part` (role `signal`, which the model
    reads as a user turn) and the page shows the signal, not a chat message."""

    id: int
    part: dict[str, Any]
    title: str


@dataclass(frozen=True)
class Start:
    """A run to start: on `thread` (read with its agent) by `user`, with `message` as its
    input and the run `options` it asks for, from `origin` (a chat message, a signal, a
    sub-agent call); `signal` when a signal starts it."""

    thread: Thread
    message: str
    user: Any
    options: dict[str, Any] | None = None
    origin: str = CHAT
    signal: SignalInput | None = None


@dataclass
class NewRun:
    """A run to insert (`run`, unsaved), its first message part and role, the title its
    thread gets (None: it keeps its own), its per-run Python hooks and whether it is
    launched once committed (`queued`; a sub-agent's run is executed by its caller)."""

    run: Run
    role: str
    part: dict[str, Any]
    title: str | None
    hooks: dict[str, Any] = field(default_factory=dict)
    queued: bool = True


def check_owner(thread: Thread, user: Any) -> None:
    """NotFound (a 404, as for a thread that does not exist) unless `user` owns `thread`."""
    if user is None or thread.owner_id != getattr(user, "pk", None):
        raise NotFound("No such thread.", code="not_found")


def new_run(start: Start) -> NewRun:
    """The rows of the run `start` asks for, once checked: the thread is the user's
    (NotFound), the message is not empty and the options are allowed (ApplicationError;
    a sub-agent's run may have no text, and its model is checked when its run loads)."""
    thread, user, signal = start.thread, start.user, start.signal
    check_owner(thread, user)
    text = (start.message or "").strip()
    queued = start.origin != SUBAGENT
    stored: dict[str, Any] = {}
    hooks: dict[str, Any] = {}
    if queued:
        if not text:
            raise ApplicationError("The message is empty.", code="empty_message")
        stored, hooks = run_options_check(agent=thread.agent, options=start.options)
    run = Run(
        thread=thread,
        agent=thread.agent,
        status=RunStatus.RUNNING,
        options=stored,
        started_by=user,
        state={"message": "", "signalId": signal.id} if signal else {"message": text},
        worker=queue_marker() if queued else "",
    )
    role, part = MessageRole.USER, {"type": "text", "text": text}
    if signal is not None:
        role, part = MessageRole.SIGNAL, signal.part
    title = None
    if not thread.title and (thread.agent.default_options or {}).get("generateTitle", True):
        title = signal.title if signal else title_summary(text)
    return NewRun(run=run, role=role, part=part, title=title, hooks=hooks, queued=queued)


def runs_insert(new: list[NewRun]) -> None:
    """Insert new runs (each on its own thread) and their `run-start` events, in the
    caller's transaction: one statement for the rows, one for the events (the database
    numbers them: no process owns these threads yet, their runs launch after commit). Once
    committed the events are published, all in one write, and the queued runs launched. A
    running run on any of the threads fails them all (IntegrityError): nothing is written."""
    runs_create([(item.run, item.role, item.part, item.title) for item in new])
    batches = []
    for item in new:
        run = item.run
        started = {"type": "run-start", "runId": str(run.pk), "agent": run.agent.slug}
        events = [{**started, "resumed": False, "step": 0, "message": run.state["message"]}]
        batches.append((run.thread_id, run.pk, events))
    texts = events_store_many(batches)
    published = [
        (thread_id, [(event["seq"], text) for event, text in zip(events, encoded, strict=True)])
        for (thread_id, _, events), encoded in zip(batches, texts, strict=True)
    ]
    queued = [item for item in new if item.queued]

    def committed() -> None:
        bus.publish_stored(published)
        for item in queued:
            active_runs.remember_hooks(item.run.id, item.hooks)
        if queued:
            active_runs.launch_many([item.run.id for item in queued])

    transaction.on_commit(committed)
