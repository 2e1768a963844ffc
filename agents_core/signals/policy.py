"""The notification delivery policy: what happens to a notification of a priority, from a
source, while the thread is active (a run is running) or idle.

Actions:
- `now`: into the running run before its next model call; an idle thread wakes.
- `summary`: (active) a short summary now, the full notification when the thread is idle.
- `digest`: the inbox keeps it until the digest job groups it with the thread's others.
- `persist`: written to the thread (and its subscribers) without waking the model.

An agent may set its own policy: a dict stored on Agent.notification_policy (the studio
UI and API edit it for studio agents; code sets it in the definition), or, in code only,
a function `policy(notification: dict, *, active: bool) -> action | None` (None falls
back to the table). The dict:

    {"priority": {"low": "now", "high": {"active": "now", "idle": "now"}},
     "source": {"ci": "digest", "pager": {"urgent": {"active": "now"}}}}
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from common.exceptions import ApplicationError

logger = logging.getLogger(__name__)

PRIORITIES = ("low", "medium", "high", "urgent")
STATES = ("active", "idle")
ACTIONS = ("now", "summary", "digest", "persist")

DEFAULT_POLICY: dict[str, dict[str, str]] = {
    "urgent": {"active": "now", "idle": "now"},
    "high": {"active": "summary", "idle": "now"},
    "medium": {"active": "digest", "idle": "now"},
    "low": {"active": "digest", "idle": "digest"},
}


class PolicyError(Exception):
    """A policy function failed or answered something that is not an action."""


def _states(value: Any, path: str, errors: list[dict[str, str]]) -> dict[str, str]:
    """An action string (both states) or {"active": action, "idle": action}."""
    if isinstance(value, str):
        value = {state: value for state in STATES}
    if not isinstance(value, dict) or not value or set(value) - set(STATES):
        errors.append({"path": path, "message": "must be an action or {active, idle}."})
        return {}
    for state, action in value.items():
        if action not in ACTIONS:
            errors.append(
                {"path": f"{path}.{state}", "message": f"must be one of {', '.join(ACTIONS)}."}
            )
    return dict(value)


def _by_priority(value: Any, path: str, errors: list[dict[str, str]]) -> dict[str, Any]:
    if not isinstance(value, dict):
        errors.append({"path": path, "message": "must be an object keyed by priority."})
        return {}
    result = {}
    for priority, entry in value.items():
        if priority not in PRIORITIES:
            errors.append({"path": f"{path}.{priority}", "message": "unknown priority."})
            continue
        result[priority] = _states(entry, f"{path}.{priority}", errors)
    return result


def policy_validate(policy: Any) -> dict[str, Any]:
    """The normalized policy dict, or an ApplicationError listing every bad path."""
    if policy in (None, ""):
        return {}
    errors: list[dict[str, str]] = []
    if not isinstance(policy, dict) or set(policy) - {"priority", "source"}:
        raise ApplicationError(
            "A notification policy is an object with 'priority' and/or 'source'.",
            code="invalid_policy",
            extra={"errors": [{"path": "$", "message": "unknown keys or not an object"}]},
        )
    result: dict[str, Any] = {}
    if "priority" in policy:
        result["priority"] = _by_priority(policy["priority"], "$.priority", errors)
    if "source" in policy:
        sources = policy["source"]
        if not isinstance(sources, dict):
            errors.append({"path": "$.source", "message": "must be an object keyed by source."})
            sources = {}
        result["source"] = {}
        for source, entry in sources.items():
            path = f"$.source.{source}"
            if isinstance(entry, dict) and set(entry) <= set(PRIORITIES) and entry:
                result["source"][source] = _by_priority(entry, path, errors)
            else:
                states = _states(entry, path, errors)
                result["source"][source] = {priority: states for priority in PRIORITIES}
    if errors:
        raise ApplicationError(
            "The notification policy is not valid.", code="invalid_policy", extra={"errors": errors}
        )
    return result


def _table_action(policy: dict[str, Any], *, source: str, priority: str, state: str) -> str:
    for layer in (policy.get("source", {}).get(source, {}), policy.get("priority", {})):
        action = layer.get(priority, {}).get(state)
        if action:
            return action
    return DEFAULT_POLICY[priority][state]


def policy_code_function(agent) -> Callable[..., Any] | None:  # noqa: ANN001
    if not agent.is_code:
        return None
    from agents_core.registry import get_agent_definition

    definition = get_agent_definition(agent.slug)
    policy = getattr(definition, "notification_policy", None)
    return policy if callable(policy) else None


def policy_decide(*, agent, notification: dict[str, Any], active: bool) -> str:  # noqa: ANN001
    """The action for a notification on a thread of this agent, active or idle."""
    state = "active" if active else "idle"
    function = policy_code_function(agent)
    if function is not None:
        try:
            action = function(dict(notification), active=active)
        except Exception as exc:  # a user's policy function: any failure is reported
            raise PolicyError(f"{agent.slug} notification policy raised {exc!r}") from exc
        if action is not None:
            if action not in ACTIONS or (action == "summary" and not active):
                raise PolicyError(f"{agent.slug} notification policy answered {action!r}")
            return action
    try:
        table = policy_validate(agent.notification_policy)
    except ApplicationError:
        logger.warning("Agent %s has an invalid notification policy; using the default.", agent)
        table = {}
    action = _table_action(
        table, source=notification.get("source", ""), priority=notification["priority"], state=state
    )
    # A summary only makes sense while a run is going; idle means full delivery now.
    return "now" if action == "summary" and not active else action


def policy_table(*, agent) -> dict[str, dict[str, str]]:  # noqa: ANN001
    """The effective per-priority table (without source rules) for display."""
    table = policy_validate(agent.notification_policy) if agent.notification_policy else {}
    return {
        priority: {
            state: _table_action(table, source="", priority=priority, state=state)
            for state in STATES
        }
        for priority in PRIORITIES
    }
