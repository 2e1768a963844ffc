"""The few places signals meets the run loop (agents_core/runtime, services/runs.py):
start a run, publish an event on the thread's stream, abort.

Kept in one module so that the contract (docs/protocol.md, "Requests from
signals") has one counterpart here.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from agents_core.runtime.bus.events import events_emit_sync
from agents_core.services.run_options import run_options_check
from agents_core.services.run_rows import SIGNAL, SignalInput
from agents_core.services.runs import run_abort as runs_run_abort
from agents_core.services.runs import run_start


def check_run_options(*, thread, options: dict[str, Any]) -> None:  # noqa: ANN001
    """The options a message gives the run it starts, at once or after the active run (a
    queued message): checked when the message is sent, as run_start checks them, so that a
    refused option is the sender's 400 and never a queued message that cannot start."""
    run_options_check(agent=thread.agent, options=options)


def start_run(*, thread, text: str, user, options: dict[str, Any], signal) -> Any:  # noqa: ANN001
    """Start a run on an idle thread with `text` as its first input (raises IntegrityError
    when another run is already running on the thread).

    A plain message starts the run as a chat message does. Any other signal is not the
    user talking: the thread keeps it as a `signal` message (the model still sees it as a
    user turn), titled by the signal's own words rather than the XML the model reads.
    """
    signal_input = None
    if signal.type != "message" or signal.attributes:
        title = f"{signal.tag_name}: {signal.contents}".splitlines()[0][:80]
        signal_input = SignalInput(id=signal.id, part=signal_part(signal, text), title=title)
    return run_start(
        thread=thread,
        message=text,
        user=user or thread.owner,
        options=options,
        origin=SIGNAL,
        signal=signal_input,
    )


def signal_part(signal, text: str) -> dict[str, Any]:  # noqa: ANN001
    return {
        "type": "signal",
        "signalId": signal.id,
        "signalType": signal.type,
        "tagName": signal.tag_name,
        "attributes": signal.attributes,
        "text": text,
    }


def publish(*, thread_id, run_id, event: dict[str, Any]) -> None:  # noqa: ANN001
    """Number, store and publish a `signal` / `notification` event on the thread's stream
    once the caller's transaction commits.

    After commit, not inside it: numbering updates the Thread row, and holding that row
    while we also hold a Run row could deadlock against the run loop's own last events.
    """
    event = {**event, "runId": str(run_id) if run_id else None}
    transaction.on_commit(
        lambda: events_emit_sync(thread_id=thread_id, run_id=run_id, events=[event])
    )


def run_abort(*, run, user) -> Any:  # noqa: ANN001
    return runs_run_abort(run=run, user=user)
