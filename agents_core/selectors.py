"""Reads of agents_core."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from agents_core.models import Agent, AgentTool, SubAgent


def agent_list(*, user) -> QuerySet[Agent]:
    """Live agents the user may see, with their bindings prefetched."""
    return (
        Agent.objects.live()
        .visible_to(user)
        .prefetch_related(
            Prefetch("tool_bindings", queryset=AgentTool.objects.select_related("tool")),
            Prefetch("subagent_bindings", queryset=SubAgent.objects.select_related("child")),
        )
    )


def agent_get(*, user, slug: str) -> Agent | None:
    return agent_list(user=user).filter(slug=slug).first()
