"""A thread with its messages, runs, tool calls, stream events and tasks, and the tool runs
of a chat and of the test console, as 0.1.0 stored them."""

from __future__ import annotations

import uuid

from tests.upgrade.ledger import Ledger
from tests.upgrade.rows_0_1_0.times import at


def write_chat(ledger: Ledger, *, ada, trip, lookup) -> dict:
    add = ledger.add
    thread = add(
        "agents_core.Thread",
        id=uuid.UUID("7d3c1c1e-0000-4000-8000-000000000001"),
        agent=trip,
        owner=ada,
        resource_id=str(ada.pk),
        title="Lisbon in May",
        metadata={"pinned": True},
        last_seq=4,
    )
    done = add(
        "agents_core.Run",
        id=uuid.UUID("7d3c1c1e-0000-4000-8000-000000000002"),
        thread=thread,
        agent=trip,
        status="completed",
        options={"maxSteps": 4},
        step=2,
        usage={"promptTokens": 120, "completionTokens": 48},
        model="anthropic/claude-haiku-4-5",
        started_by=ada,
        finished_at=at(3),
    )
    add(
        "agents_core.Run",
        thread=thread,
        agent=trip,
        status="failed",
        error="The model did not answer within 60 s.",
        model="anthropic/claude-haiku-4-5",
        worker="queued",
        finished_at=at(4),
    )
    add(
        "agents_core.Run",
        thread=thread,
        agent=trip,
        status="suspended",
        state={"pending": {"callId": "call_ask", "question": "Which hotel?"}},
    )
    say = [{"type": "text", "text": "Plan three days in Lisbon."}]
    add("agents_core.Message", thread=thread, run=done, role="user", parts=say)
    call = {"type": "tool-call", "toolCallId": "call_1", "toolName": "order", "args": {"id": 17}}
    add("agents_core.Message", thread=thread, run=done, role="assistant", parts=[call])
    result = [{"type": "tool-result", "toolCallId": "call_1", "result": {"status": "shipped"}}]
    add("agents_core.Message", thread=thread, run=done, role="tool", parts=result)
    tool_call = add(
        "agents_core.ToolCall",
        run=done,
        call_id="call_1",
        tool_name="order",
        tool=lookup,
        step=1,
        status="completed",
        input_text='{"id": 17}',
        input={"id": 17},
        output={"status": "shipped"},
        model_output={"type": "json", "value": {"status": "shipped"}},
        hook_decisions=[{"hook": "beforeToolCall", "decision": "allow"}],
        started_at=at(2),
        finished_at=at(2.5),
    )
    add(
        "agents_core.ToolCall",
        run=done,
        call_id="call_2",
        tool_name="order",
        status="failed",
        input_text='{"id": 18',
        error="The arguments are not valid JSON at $.",
    )
    for seq, (kind, payload) in enumerate(
        [
            ("run-start", {"runId": str(done.pk)}),
            ("text-delta", {"delta": "Day one: Alfama."}),
            ("tool-call", {"toolCallId": "call_1", "toolName": "order", "args": {"id": 17}}),
            ("run-finish", {"finishReason": "stop", "usage": {"totalTokens": 168}}),
        ],
        start=1,
    ):
        add("agents_core.StreamEvent", thread=thread, run=done, seq=seq, type=kind, payload=payload)
    add(
        "agents_core.TaskItem",
        thread=thread,
        title="Book the tram tour",
        notes="Line 28.",
        status="in_progress",
    )
    add("agents_core.RunWorkerBeat", name="worker-1:4242", started_at=at(0), beat_at=at(0.5))
    tool_run = add(
        "tools_app.ToolRun",
        tool=lookup,
        status="completed",
        mode="async",
        input={"id": 17},
        output={"status": "shipped"},
        logs="GET /orders/17 -> 200",
        duration_ms=123.4,
        attempts=1,
        worker="worker-1:4242",
        enqueued_at=at(2),
        tool_call=tool_call,
        created_by=ada,
        started_at=at(2.1),
        finished_at=at(2.2),
    )
    console_run = add(
        "tools_app.ToolRun",
        tool=lookup,
        status="failed",
        mode="sync",
        input={},
        error="Input failed validation.",
        errors=[{"path": "$.id", "message": "'id' is a required property"}],
        created_by=ada,
    )
    return {"thread": thread, "run": done, "tool_run": tool_run, "console_run": console_run}
