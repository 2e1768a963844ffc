"""The messages a model call sees: instructions, then the thread's memory.

Stored messages keep parts (agents_core.models.Message.parts):
  user       [{"type": "text", "text"}]
  assistant  [{"type": "text", "text"}, {"type": "tool-call", "toolCallId", "toolName",
              "input", "inputText"}]
  tool       [{"type": "tool-result", "toolCallId", "toolName", "output", "modelOutput",
              "isError"}]
  signal     [{"type": "context", "text"}]  (a finished async tool, a signal)
"""

from __future__ import annotations

import json
from typing import Any

from agents_core.models import Message, MessageRole

MEMORY_LIMIT = 200
INTERRUPTED = {"error": "No result: this call was interrupted before it finished."}


def instruction_messages(instructions: Any) -> list[dict[str, Any]]:
    """The four forms of DESIGN.md section 6 as system messages."""
    if instructions in (None, "", []):
        return []
    items = instructions if isinstance(instructions, list) else [instructions]
    messages = []
    for item in items:
        if isinstance(item, str):
            if item:
                messages.append({"role": "system", "content": item})
        elif isinstance(item, dict) and item.get("content"):
            message = {"role": "system", "content": item["content"]}
            anthropic = ((item.get("providerOptions") or {}).get("anthropic") or {})
            if anthropic.get("cacheControl"):
                message["cache_control"] = anthropic["cacheControl"]
            messages.append(message)
    return messages


def text_of(parts: list[dict[str, Any]]) -> str:
    return "".join(p.get("text", "") for p in parts if p.get("type") == "text")


def _arguments(part: dict[str, Any]) -> str:
    if part.get("input") is not None:
        return json.dumps(part["input"], ensure_ascii=False)
    return part.get("inputText") or "{}"


def _tool_content(part: dict[str, Any]) -> str:
    value = part.get("modelOutput")
    if part.get("isError") and not isinstance(value, dict | list):
        value = {"error": value if value is not None else part.get("error", "failed")}
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def memory_messages(rows: list[Message]) -> list[dict[str, Any]]:
    """Thread memory in the OpenAI chat format litellm takes.

    Every tool call gets exactly one result right after its assistant message: a context
    message that arrived while calls were outstanding waits until they are answered, and a
    call left without a result (a run that was interrupted) gets an explicit one.
    """
    out: list[dict[str, Any]] = []
    outstanding: dict[str, str] = {}
    deferred: list[dict[str, Any]] = []

    def close_outstanding() -> None:
        for call_id in list(outstanding):
            out.append({"role": "tool", "tool_call_id": call_id,
                        "content": json.dumps(INTERRUPTED)})
        outstanding.clear()

    for row in rows:
        parts = row.parts or []
        if row.role == MessageRole.TOOL:
            for part in parts:
                if part.get("toolCallId") in outstanding:
                    outstanding.pop(part["toolCallId"])
                    out.append({"role": "tool", "tool_call_id": part["toolCallId"],
                                "content": _tool_content(part)})
            if not outstanding and deferred:
                out.extend(deferred)
                deferred.clear()
            continue
        if row.role == MessageRole.SIGNAL:
            text = "\n".join(p.get("text", "") for p in parts if p.get("text"))
            message = {"role": "user", "content": text}
            (deferred if outstanding else out).append(message)
            continue
        close_outstanding()
        out.extend(deferred)
        deferred.clear()
        if row.role == MessageRole.USER:
            out.append({"role": "user", "content": text_of(parts)})
        elif row.role == MessageRole.ASSISTANT:
            calls = [p for p in parts if p.get("type") == "tool-call"]
            message: dict[str, Any] = {"role": "assistant", "content": text_of(parts) or None}
            if calls:
                message["tool_calls"] = [
                    {"id": p["toolCallId"], "type": "function",
                     "function": {"name": p["toolName"], "arguments": _arguments(p)}}
                    for p in calls
                ]
                outstanding.update({p["toolCallId"]: p["toolName"] for p in calls})
            if message["content"] is None and not calls:
                continue
            out.append(message)
        elif row.role == MessageRole.SYSTEM:
            out.append({"role": "system", "content": text_of(parts)})
    # Calls still outstanding at the end are the ones being executed now (no result yet
    # is impossible at a model call) or interrupted ones: answer them.
    close_outstanding()
    out.extend(deferred)
    return out


def thread_memory(thread_id: Any) -> list[Message]:
    rows = list(Message.objects.filter(thread_id=thread_id).order_by("-id")[:MEMORY_LIMIT])
    rows.reverse()
    # Never start the window in the middle of a tool exchange.
    while rows and rows[0].role in (MessageRole.TOOL, MessageRole.SIGNAL):
        rows.pop(0)
    return rows
