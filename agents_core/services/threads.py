"""Threads: create and rename, and the reads of a thread's contents the chat needs. Which
threads a user may reach is agents_core.selectors' `threads_for`; these take a thread (or
its id) already checked there."""

from __future__ import annotations

import re
from typing import Any

from django.db.models import QuerySet

from agents_core.models import Agent, Message, RunStatus, StreamEvent, Thread, ToolCall
from agents_core.models import ToolCallStatus as Status
from common.exceptions import ApplicationError, NotFound

EVENTS_PAGE = 2000
TITLE_WORDS = 7
TITLE_CHARS = 60
# Openings that say nothing about the subject of a conversation.
_POLITE = re.compile(
    r"^\s*(?:(?:hi|hello|hey|ok|okay|so|please|thanks)\b[\s,!.]*"
    r"|(?:can|could|would|will) you\s+(?:please\s+)?)+",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")


def title_summary(text: str) -> str:
    """A thread's title from its first message: its first sentence without greetings or
    "can you please", cut to a few words at a word boundary."""
    body = _POLITE.sub("", text.strip()) or text.strip()
    sentences = [part for part in _SENTENCE_END.split(body) if part.strip()]
    first = (sentences[0] if sentences else body).strip(" \t?!.,") or body
    words = first.split()
    title = " ".join(words[:TITLE_WORDS])
    if len(title) > TITLE_CHARS:
        title = title[:TITLE_CHARS].rsplit(" ", 1)[0] or title[:TITLE_CHARS]
    cut = title != " ".join(words)
    return (title[:1].upper() + title[1:] + ("…" if cut else ""))[:200]


def thread_create(
    *, user: Any, agent: Agent, title: str = "", metadata: dict[str, Any] | None = None
) -> Thread:
    if agent.gone_at is not None:
        raise ApplicationError("This agent was removed from code.", code="agent_gone")
    if not Agent.objects.visible_to(user).filter(pk=agent.pk).exists():
        raise NotFound("No such agent.", code="not_found")
    return Thread.objects.create(
        agent=agent,
        owner=user,
        resource_id=str(user.pk),
        title=title[:200],
        metadata=metadata or {},
    )


def thread_rename(*, thread: Thread, title: str) -> Thread:
    """A user's title: the model's summary never replaces it (`title_auto` off)."""
    thread.title = title[:200]
    thread.title_auto = False
    thread.save(update_fields=["title", "title_auto", "updated_at"])
    return thread


def thread_events_after(
    *,
    thread_id: Any,
    after: int,
    limit: int = EVENTS_PAGE,
) -> list[dict[str, Any]]:
    rows = StreamEvent.objects.filter(thread_id=thread_id, seq__gt=after).order_by("seq")
    return [row.payload for row in rows[:limit]]


def thread_events_between(*, thread_id: Any, after: int, before: int) -> list[dict[str, Any]]:
    rows = StreamEvent.objects.filter(thread_id=thread_id, seq__gt=after, seq__lt=before)
    return [row.payload for row in rows.order_by("seq")]


def thread_messages(*, thread: Thread) -> QuerySet[Message]:
    return thread.messages.order_by("id")


def thread_suspended_calls(*, thread: Thread) -> list[dict[str, Any]]:
    from agents_core.runtime.run.setup import load_setup
    from agents_core.runtime.run.suspend_payloads import resume_schema_for

    calls = ToolCall.objects.filter(
        run__thread=thread, status=Status.SUSPENDED, run__status=RunStatus.SUSPENDED
    ).select_related("run")
    result = []
    for call in calls:
        spec = load_setup(call.run_id).specs.get(call.tool_name)
        result.append(
            {
                "runId": str(call.run_id),
                "toolCallId": call.call_id,
                "toolName": call.tool_name,
                "suspendPayload": call.suspend_payload,
                "resumeSchema": resume_schema_for(spec, call.suspend_payload),
                "autoResume": bool(
                    {**(thread.agent.default_options or {}), **(call.run.options or {})}.get(
                        "autoResume"
                    )
                ),
                "createdAt": call.created_at.isoformat(),
            }
        )
    return result


def thread_partial(*, thread_id: Any, tool_call_id: str) -> dict[str, Any]:
    """The partial value of a call's arguments from the stored deltas, and the seq of the
    last delta it includes (`asOf`): a late joiner applies only deltas after it."""
    from agents_core.runtime.run.partial_json import IncrementalJSONParser, PartialJSONError

    rows = StreamEvent.objects.filter(
        thread_id=thread_id, type="tool-input-delta", payload__toolCallId=tool_call_id
    ).order_by("seq")
    parser = IncrementalJSONParser()
    as_of = 0
    transformed = None
    for seq, payload in rows.values_list("seq", "payload"):
        as_of = seq
        if "argsTextDelta" in payload:
            try:
                parser.feed(payload["argsTextDelta"])
            except PartialJSONError:
                break
        else:
            # A transformed tool sends whole display values; the last one is current.
            for patch in payload.get("patches") or []:
                if patch.get("path") == []:
                    transformed = patch.get("value")
    value = transformed if transformed is not None else parser.value()
    return {"type": "partial", "toolCallId": tool_call_id, "value": value, "asOf": as_of}
