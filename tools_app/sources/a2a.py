"""External A2A agents as tools, through the `a2a-sdk` client.

Adding an agent fetches its agent card (through the web_fetch address guard), keeps it
on a ToolSource (kind "a2a") with optional encrypted headers, and makes one Tool of kind
"a2a": input {"message": "..."}, output {"reply", "state", "task_id"}.

A call sends the message without blocking (`return_immediately`) and then follows the
task: it polls `tasks/get` until the task is completed, failed, canceled, rejected or
asks for input, all within the tool's timeout (the execution pipeline enforces it).
The card is fetched with tools_app.net.fetch, and the SDK's HTTP client is pinned to the
addresses the guard checked for the card's endpoints (common.pinned_client).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from asgiref.sync import async_to_sync
from django.db import transaction
from django.utils import timezone

from common.exceptions import ApplicationError
from tools_app.models import Tool, ToolKind, ToolSource
from tools_app.models_sources import SourceKind
from tools_app.sources.common import (
    fetch_text,
    get_credentials,
    headers_check,
    names_check,
    pinned_client,
    set_credentials,
)
from tools_app.sources.openapi_spec import snake_case

POLL_SECONDS = 0.25
INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "message": {
            "type": "string",
            "minLength": 1,
            "description": "The message sent to the agent.",
        }
    },
    "required": ["message"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "reply": {"type": "string"},
        "state": {"type": "string"},
        "task_id": {"type": ["string", "null"]},
        "states": {
            "type": "array",
            "items": {"type": "string"},
            "description": "The task states seen, in order.",
        },
    },
    "required": ["reply", "state"],
}


class A2AFailure(Exception):
    """The agent could not be reached, or its task failed; the message says why."""


def card_parse(data: Any) -> Any:
    from a2a.client.card_resolver import parse_agent_card

    try:
        card = parse_agent_card(json.loads(json.dumps(data)))  # it edits its argument
    except Exception as exc:  # ParseError and friends from protobuf
        raise A2AFailure(f"Not a valid agent card: {exc}") from None
    if not card.supported_interfaces:
        raise A2AFailure("The agent card names no endpoint (supportedInterfaces / url).")
    return card


def _state_name(state: int) -> str:
    from a2a.types.a2a_pb2 import TaskState

    return TaskState.Name(state).removeprefix("TASK_STATE_").lower().replace("_", "-")


def _task_reply(task: Any) -> str:
    from a2a.helpers import get_artifact_text, get_message_text
    from a2a.types.a2a_pb2 import Role

    texts = [get_artifact_text(a) for a in task.artifacts]
    if any(texts):
        return "\n".join(t for t in texts if t)
    if task.status.HasField("message"):
        return get_message_text(task.status.message)
    agent_messages = [m for m in task.history if m.role == Role.ROLE_AGENT]
    return get_message_text(agent_messages[-1]) if agent_messages else ""


_DONE = {"completed", "failed", "canceled", "rejected", "input-required", "auth-required"}


async def a2a_send(
    *, card_data: dict[str, Any], headers: dict[str, str], text: str, timeout: float
) -> dict[str, Any]:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.helpers import get_message_text, new_text_message
    from a2a.types.a2a_pb2 import GetTaskRequest, Role, SendMessageRequest

    from tools_app.net import BlockedURL, FetchError

    card = card_parse(card_data)
    try:
        http = await pinned_client(
            [i.url for i in card.supported_interfaces], headers=headers, timeout=timeout
        )
    except (BlockedURL, FetchError) as exc:
        raise A2AFailure(f"The agent's address is not allowed: {exc}") from None
    async with http:
        client = ClientFactory(
            ClientConfig(streaming=False, polling=True, httpx_client=http)
        ).create(card)
        request = SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER))
        try:
            task = None
            async for event in client.send_message(request):
                if event.HasField("message"):
                    return {
                        "reply": get_message_text(event.message),
                        "state": "completed",
                        "task_id": None,
                        "states": [],
                    }
                task = event.task
            states = [_state_name(task.status.state)] if task is not None else []
            while task is not None and states[-1] not in _DONE:
                await asyncio.sleep(POLL_SECONDS)
                task = await client.get_task(GetTaskRequest(id=task.id))
                if _state_name(task.status.state) != states[-1]:
                    states.append(_state_name(task.status.state))
        except A2AFailure:
            raise
        except Exception as exc:  # transport and JSON-RPC errors of the SDK
            raise A2AFailure(f"A2A agent {card.name or ''}: {type(exc).__name__}: {exc}") from None
        finally:
            await client.close()
    if task is None:
        raise A2AFailure("The agent answered with neither a message nor a task.")
    state, reply = _state_name(task.status.state), _task_reply(task)
    if state in ("failed", "canceled", "rejected"):
        raise A2AFailure(f"The agent's task ended {state}: {reply or 'no message'}")
    return {"reply": reply, "state": state, "task_id": task.id, "states": states}


# --- services ----------------------------------------------------------------------------
def _card_fetch(card_url: str, headers: dict[str, str]) -> dict[str, Any]:
    text = async_to_sync(fetch_text)(card_url, max_bytes=1_000_000, headers=headers)
    try:
        data = json.loads(text)
        card_parse(data)
    except (ValueError, A2AFailure) as exc:
        raise ApplicationError(
            f"{card_url} is not an A2A agent card: {exc}",
            code="invalid_card",
            extra={"errors": [{"path": "$.card_url", "message": str(exc)}]},
        ) from None
    return data


def _description(card: dict[str, Any]) -> str:
    skills = "; ".join(s.get("name") or s.get("id", "") for s in card.get("skills") or [])
    text = card.get("description") or f"The A2A agent {card.get('name', '')}"
    return f"{text}\n\nSkills: {skills}" if skills else text


@transaction.atomic
def a2a_agent_add(
    *,
    user,
    card_url: str,
    name: str = "",
    headers: dict[str, str] | None = None,
    timeout_seconds: float = 60.0,
) -> Tool:
    """Add an external A2A agent as a tool (its card is fetched and checked first)."""
    headers = headers_check(headers)
    card = _card_fetch(card_url, headers)
    name = name or snake_case(card.get("name") or "a2a_agent")
    errors = names_check([name], owner=user, path="$.name")
    if errors:
        raise ApplicationError(errors[0]["message"], code="invalid_name", extra={"errors": errors})
    source = ToolSource.objects.create(
        kind=SourceKind.A2A,
        name=card.get("name") or card_url,
        owner=user,
        url=card_url,
        document=card,
        imported_at=timezone.now(),
    )
    if headers:
        set_credentials(source, {"headers": headers})
    return Tool.objects.create(
        name=name,
        kind=ToolKind.A2A,
        owner=user,
        description=_description(card),
        input_schema=INPUT_SCHEMA,
        output_schema=OUTPUT_SCHEMA,
        timeout_seconds=timeout_seconds,
        config={"source_id": source.id},
    )


def a2a_source_connection(tool: Tool) -> dict[str, Any]:
    """The card and decrypted headers of the tool's agent; only its owner's source counts
    (see mcp_source_connection)."""
    source = ToolSource.objects.get(
        pk=tool.config.get("source_id"), kind=SourceKind.A2A, owner_id=tool.owner_id
    )
    return {"card_data": source.document, "headers": get_credentials(source).get("headers", {})}
