"""Who may edit an agent, read its revisions and break its edit lock; the REST check for
binding writes on a code agent (editor policy first, then the change permission)."""

from __future__ import annotations

import json
from typing import Any

from agents_core.editor.policy import EDITOR, field_ownership
from agents_core.models import Agent
from common.exceptions import ApplicationError


class Forbidden(ApplicationError):
    status_code: int = 403


def can_edit(*, user: Any, agent: Agent) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    if agent.is_code:
        return user.has_perm("agents_core.change_agent")
    return agent.owner_id == user.pk


def can_view_revisions(*, user: Any, agent: Agent) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    if agent.is_code:
        return user.has_perm("agents_core.view_agent") or user.has_perm("agents_core.change_agent")
    return agent.owner_id == user.pk


def can_break_lock(*, user: Any) -> bool:
    return user.has_perm("agents_core.break_editlock")


def require_edit(*, user: Any, agent: Agent) -> None:
    if not can_edit(user=user, agent=agent):
        raise Forbidden("You may not edit this agent.", code="permission_denied")


_WRITE_WHAT = {
    "tools": "tool membership (adding, removing or changing its tools and sub-agents)",
    "tool_descriptions": "tool descriptions",
}


def binding_write_check(*, user: Any, agent: Agent, fields: set[str]) -> None:
    """Refuse (403) a REST write of an agent's tool or sub-agent bindings unless the agent's
    editor policy opens every policy field it touches and the user may edit the agent.

    `fields` are policy fields: "tools" (membership: which tools and sub-agents, under
    which keys) and "tool_descriptions". Sub-agents are tools to the model (`agent-<key>`),
    so the same two fields govern them. A studio agent is its owner's: everything is open.
    """
    ownership = field_ownership(agent)
    closed = [name for name in ("tools", "tool_descriptions") if name in fields]
    closed = [name for name in closed if ownership[name] != EDITOR]
    if closed:
        raise Forbidden(
            f"Agent {agent.slug!r} is defined in code and its editor policy "
            f"(editor={json.dumps(agent.editor_policy)}) keeps "
            f"{' and '.join(_WRITE_WHAT[name] for name in closed)} in code.",
            code="editor_policy",
            extra={"policy": agent.editor_policy, "forbidden": closed},
        )
    if not can_edit(user=user, agent=agent):
        raise Forbidden(
            f"Changing the tools of agent {agent.slug!r} (defined in code) needs the "
            "'Can change agent' permission (agents_core.change_agent).",
            code="permission_denied",
        )
