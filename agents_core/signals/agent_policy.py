"""An agent's own notification policy: read for any visible agent, set for studio agents."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from agents_core.editor.services.revisions import tracked_change
from agents_core.models import Agent
from agents_core.selectors import agent_get
from agents_core.signals.policy import (
    ACTIONS,
    PRIORITIES,
    policy_code_function,
    policy_table,
    policy_validate,
)
from common.exceptions import ApplicationError, NotFound


def agent_visible(*, user, slug: str) -> Agent:  # noqa: ANN001
    agent = agent_get(user=user, slug=slug)
    if agent is None:
        raise NotFound(f"No agent with the slug {slug!r}.", code="not_found")
    return agent


def agent_policy_editable(*, agent: Agent, user) -> bool:  # noqa: ANN001
    return not agent.is_code and agent.owner_id == user.pk


def agent_policy_json(*, agent: Agent, user) -> dict[str, Any]:  # noqa: ANN001
    return {
        "agent": agent.slug,
        "policy": agent.notification_policy or {},
        "table": policy_table(agent=agent),
        "codeFunction": policy_code_function(agent) is not None,
        "editable": agent_policy_editable(agent=agent, user=user),
        "actions": list(ACTIONS),
        "priorities": list(PRIORITIES),
    }


@transaction.atomic
def agent_notification_policy_set(
    *,
    agent: Agent,
    user,  # noqa: ANN001
    policy: Any,
    lock_id: int | None,
) -> Agent:
    """Replace a studio agent's policy (code agents take theirs from code); refused (423)
    while another session holds the agent's edit lock."""
    if agent.is_code:
        raise ApplicationError(
            "This agent is defined in code; its notification policy is set in code.",
            status_code=403,
            code="code_owned",
        )
    if agent.owner_id != user.pk:
        raise ApplicationError(
            "Only the agent's owner can change its policy.", status_code=403, code="forbidden"
        )
    policy = policy_validate(policy)
    # A save like any other of the agent: the version moves and a revision records it.
    tracked_change(
        agent=agent,
        user=user,
        lock_id=lock_id,
        apply=lambda: Agent.objects.filter(id=agent.id).update(notification_policy=policy),
    )
    agent.refresh_from_db()
    return agent
