"""A new run's rows and its first event: for one run (`run_start`) or for many chat
messages taken together (services/run_chats.py).

A new run is its row (status running, queued for a process), its first message (the
user's text, or the signal that starts it), the thread's placeholder title when it has
none, and its `run-start` event, stored with the rows and published once they are
committed: the page sees the message taken at once, however many runs wait for their loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from agents_core.models import MessageRole, Run, RunStatus, Thread
from agents_core.runtime import bus
from agents_core.runtime.event_store import events_store_many
from agents_core.runtime.processes import queue_marker
from agents_core.runtime.store_sql import runs_create
from agents_core.services.threads import title_summary


@dataclass
class NewRun:
    """A run to insert (`run`, unsaved), its first message part and role, the title its
    thread gets (None: it keeps its own) and its per-run Python hooks."""

    run: Run
    role: str
    part: dict[str, Any]
    title: str | None
    hooks: dict[str, Any] = field(default_factory=dict)


def new_run(
    *,
    thread: Thread,
    text: str,
    user: Any,
    stored: dict[str, Any],
    queued: bool = True,
    signal: Any = None,
) -> NewRun:
    """The rows of a run started on `thread` with `text` (or `signal`, a SignalInput) and
    its checked options `stored`; `queued=False` for a run its caller executes (a
    sub-agent's)."""
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
    return NewRun(run=run, role=role, part=part, title=title)


def runs_insert(new: list[NewRun]) -> None:
    """Insert new runs (each on its own thread) and their `run-start` events, in the
    caller's transaction: one statement for the rows on PostgreSQL, one for the events
    (the database numbers them: no process owns these threads yet, their runs launch
    after commit). The events are published once committed, all in one write. A running
    run on any of the threads fails them all (IntegrityError)."""
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
    transaction.on_commit(lambda: bus.publish_stored(published))
