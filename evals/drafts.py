"""A test case drafted from a chat thread ("Save as test case"): one turn per user
message, the tool calls its run made as the expected ones (name and arguments), the
answers given to its suspended calls as the script, and `no_error` when the run
completed. The user edits the draft before it is saved."""

from __future__ import annotations

from typing import Any

from agents_core.models import MessageRole, RunStatus, Thread, ToolCallStatus


def case_draft_from_thread(*, thread: Thread) -> dict[str, Any]:
    turns: list[dict[str, Any]] = []
    messages = thread.messages.filter(role=MessageRole.USER).select_related("run")
    for message in messages.order_by("pk"):
        text = "".join(p.get("text", "") for p in message.parts or [] if p.get("type") == "text")
        if not text.strip():
            continue
        turn: dict[str, Any] = {"message": text}
        if message.run is not None:
            turn.update(_from_run(message.run))
        turns.append(turn)
    return {
        "name": (thread.title or "Chat")[:200],
        "agent": thread.agent.slug,
        "spec": {"turns": turns},
    }


def _from_run(run: Any) -> dict[str, Any]:
    expect: list[dict[str, Any]] = []
    answers: list[dict[str, Any]] = []
    for call in run.tool_calls.order_by("created_at", "pk"):
        if call.resume_payload is not None:
            answers.append({"tool": call.tool_name, "payload": call.resume_payload})
            expect.append({"type": "tool_called", "tool": call.tool_name})
        elif call.status != ToolCallStatus.SKIPPED and isinstance(call.input, dict):
            expect.append({"type": "tool_called", "tool": call.tool_name, "args": call.input})
    if run.status == RunStatus.COMPLETED:
        expect.append({"type": "no_error"})
    turn: dict[str, Any] = {"expect": expect}
    if answers:
        turn["answers"] = answers
    return turn
