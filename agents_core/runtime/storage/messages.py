"""The messages a model call sees: instructions, then the thread's memory.

Stored messages are the transcript as people see it (agents_core.models.Message.parts):
  user       [{"type": "text", "text"}]
  assistant  [{"type": "text", "text"}, {"type": "tool-call", "toolCallId", "toolName",
              "input"}]                       (display value: after a tool's transform)
  tool       [{"type": "tool-result", "toolCallId", "toolName", "output", "isError",
              "modelOutput"?}]               (modelOutput only for tools without transform)
  signal     [{"type": "context" | "signal", "text"}]  (a finished async tool, a signal)
What the model saw (raw arguments, model output) is read from the ToolCall rows, so a
display transform never changes what the model remembers.
"""

from __future__ import annotations

import json
from typing import Any

from agents_core.models import MessageRole
from agents_core.runtime.storage import store_sql
from agents_core.runtime.storage.store_sql import MemoryCall, MemoryRow
from providers.options import message_cache_control

MEMORY_LIMIT = 200
INTERRUPTED = {"error": "No result: this call was interrupted before it finished."}


def instruction_messages(instructions: Any, model: str = "") -> list[dict[str, Any]]:
    """An agent's instructions (a string, a list of strings, a system message or a list of
    system messages) as system messages, for a call of `model`
    (litellm's model string): an instruction's providerOptions for that provider apply
    (anthropic's cacheControl makes its text a content block with cache_control)."""
    if instructions in (None, "", []):
        return []
    items = instructions if isinstance(instructions, list) else [instructions]
    messages = []
    for item in items:
        if isinstance(item, str):
            if item:
                messages.append({"role": "system", "content": item})
        elif isinstance(item, dict) and item.get("content"):
            cache_control = message_cache_control(item.get("providerOptions"), model)
            content: Any = item["content"]
            if cache_control:
                content = [{"type": "text", "text": content, "cache_control": cache_control}]
            messages.append({"role": "system", "content": content})
    return messages


def text_of(parts: list[dict[str, Any]]) -> str:
    return "".join(p.get("text", "") for p in parts if p.get("type") == "text")


def _arguments(part: dict[str, Any], call: MemoryCall | None) -> str:
    if call is not None:
        if call.input is not None:
            return json.dumps(call.input, ensure_ascii=False)
        return call.input_text or "{}"
    if part.get("input") is not None:
        return json.dumps(part["input"], ensure_ascii=False)
    return "{}"


def _tool_content(part: dict[str, Any], call: MemoryCall | None) -> str:
    value = part.get("modelOutput")
    if call is not None and call.model_output is not None and not part.get("isError"):
        value = call.model_output
    if part.get("isError") and not isinstance(value, dict | list):
        value = {"error": value if value is not None else part.get("error", "failed")}
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def memory_messages(
    rows: list[MemoryRow], calls: dict[tuple[Any, str], MemoryCall] | None = None
) -> list[dict[str, Any]]:
    """Thread memory in the OpenAI chat format litellm takes.

    Every tool call gets exactly one result right after its assistant message: a context
    message that arrived while calls were outstanding waits until they are answered, and a
    call left without a result (a run that was interrupted) gets an explicit one.
    """
    calls = calls_of = calls or {}
    out: list[dict[str, Any]] = []
    outstanding: dict[str, str] = {}
    deferred: list[dict[str, Any]] = []

    def close_outstanding() -> None:
        for call_id in list(outstanding):
            out.append(
                {"role": "tool", "tool_call_id": call_id, "content": json.dumps(INTERRUPTED)}
            )
        outstanding.clear()

    for row in rows:
        parts = row.parts or []
        if row.role == MessageRole.TOOL:
            for part in parts:
                if part.get("toolCallId") in outstanding:
                    outstanding.pop(part["toolCallId"])
                    call = calls.get((row.run_id, part["toolCallId"]))
                    out.append(
                        {
                            "role": "tool",
                            "tool_call_id": part["toolCallId"],
                            "content": _tool_content(part, call),
                        }
                    )
            if not outstanding and deferred:
                out.extend(deferred)
                deferred.clear()
            continue
        if row.role == MessageRole.SIGNAL:
            text = "\n".join(p.get("text", "") for p in parts if p.get("text"))
            (deferred if outstanding else out).append({"role": "user", "content": text})
            continue
        close_outstanding()
        out.extend(deferred)
        deferred.clear()
        if row.role == MessageRole.USER:
            out.append({"role": "user", "content": text_of(parts)})
        elif row.role == MessageRole.ASSISTANT:
            tool_parts = [p for p in parts if p.get("type") == "tool-call"]
            message: dict[str, Any] = {"role": "assistant", "content": text_of(parts) or None}
            if tool_parts:
                message["tool_calls"] = [
                    {
                        "id": p["toolCallId"],
                        "type": "function",
                        "function": {
                            "name": p["toolName"],
                            "arguments": _arguments(p, calls_of.get((row.run_id, p["toolCallId"]))),
                        },
                    }
                    for p in tool_parts
                ]
                outstanding.update({p["toolCallId"]: p["toolName"] for p in tool_parts})
            if message["content"] is None and not tool_parts:
                continue
            out.append(message)
        elif row.role == MessageRole.SYSTEM:
            out.append({"role": "system", "content": text_of(parts)})
    # Calls still outstanding at the end are the ones being executed now (no result yet
    # is impossible at a model call) or interrupted ones: answer them.
    close_outstanding()
    out.extend(deferred)
    return out


def thread_memory(
    thread_id: Any, limit: int | None = None
) -> tuple[list[MemoryRow], dict[tuple[Any, str], MemoryCall]]:
    """The last `limit` messages of the thread (the agent's `lastMessages` option; default
    MEMORY_LIMIT) and the tool calls they mention, read as plain rows without the ORM
    (store_sql.MemoryRow, MemoryCall): every step reads them."""
    rows = store_sql.memory_rows(thread_id, limit or MEMORY_LIMIT)
    # Never start the window in the middle of a tool exchange.
    while rows and rows[0].role in (MessageRole.TOOL, MessageRole.SIGNAL):
        rows.pop(0)
    run_ids = {row.run_id for row in rows if row.role in (MessageRole.ASSISTANT, MessageRole.TOOL)}
    found = store_sql.memory_calls(run_ids)
    return rows, {(call.run_id, call.call_id): call for call in found}
