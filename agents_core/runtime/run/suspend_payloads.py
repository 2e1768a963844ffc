"""What a suspended call waits for: the kind of its suspend payload, the schema its answer
must match, and a chat message read as that answer (auto-resume)."""

from __future__ import annotations

import json
import re
from typing import Any

from agents_core.runtime.run.setup import ToolSpec

APPROVAL_RESUME = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["approved"],
    "additionalProperties": False,
}
CLIENT_RESUME = {
    "type": "object",
    "properties": {"output": {}, "error": {"type": "string"}},
    "additionalProperties": False,
}
_YES = re.compile(r"^\s*(yes|y|ok|okay|sure|approve[sd]?|go( ahead)?|lgtm|do it)\b", re.I)


def suspend_kind(payload: dict[str, Any]) -> str:
    return str(payload.get("kind") or "suspended")


def resume_schema_for(spec: ToolSpec | None, payload: dict[str, Any] | None) -> Any:
    kind = suspend_kind(payload or {})
    if kind == "approval":
        return APPROVAL_RESUME
    if kind == "client-function":
        return CLIENT_RESUME
    if kind == "widget":
        # A widget's answer depends on the widget (its options, its form's fields).
        return (payload or {}).get("resumeSchema")
    return spec.resume_schema if spec is not None else None


def payload_from_text(suspend_payload: dict[str, Any], text: str) -> dict[str, Any]:
    """Auto-resume: the chat message as the answer the waiting call expects."""
    kind = suspend_payload.get("kind")
    if kind in ("approval", "plan-approval"):
        return {"approved": bool(_YES.match(text)), "reason": text}
    if kind == "ask-user":
        if suspend_payload.get("mode") == "multi":
            return {"answer": [part.strip() for part in text.split(",") if part.strip()]}
        return {"answer": text}
    if kind == "client-function":
        return {"output": text}
    widget = suspend_payload.get("widget") or {}
    if kind == "widget" and widget.get("kind") == "choice":
        if widget.get("multiple"):
            return {"answer": [part.strip() for part in text.split(",") if part.strip()]}
        return {"answer": text.strip()}
    try:
        value = json.loads(text)
    except ValueError:
        return {"answer": text}
    return value if isinstance(value, dict) else {"answer": value}
