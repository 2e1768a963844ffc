"""Editor reads: what an editor page shows, revisions with diffs, lock details."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone

from agents_core import overrides
from agents_core.editor.diff import document_diff
from agents_core.editor.policy import field_ownership
from agents_core.editor.services.documents import code_values, editable_keys, editor_document
from agents_core.editor.services.permissions import (
    Forbidden,
    binding_write_check,
    can_break_lock,
    can_edit,
    can_view_revisions,
)
from agents_core.models import Agent, AgentTool, EditLock, Revision


def lock_info(lock: EditLock | None) -> dict[str, Any] | None:
    if lock is None:
        return None
    return {
        "id": lock.pk,
        "holder": lock.holder.get_username(),
        "holder_id": lock.holder_id,
        "acquired_at": lock.acquired_at.isoformat(),
        "expires_at": lock.expires_at.isoformat(),
        "renewed_at": lock.renewed_at.isoformat() if lock.renewed_at else None,
        "renew_count": lock.renew_count,
        "expired": lock.expires_at <= timezone.now(),
    }


def lock_current(*, agent: Agent) -> EditLock | None:
    """The open lock row, expired or not (an expired one can be taken over)."""
    return (
        EditLock.objects.select_related("holder").filter(agent=agent, ended_at__isnull=True).first()
    )


def revision_list(*, agent: Agent) -> QuerySet[Revision]:
    return Revision.objects.select_related("author").filter(agent=agent)


def revision_info(revision: Revision) -> dict[str, Any]:
    return {
        "id": revision.pk,
        "version": revision.version,
        "kind": revision.kind,
        "author": revision.author.get_username() if revision.author else None,
        "created_at": revision.created_at.isoformat(),
        "fields": revision.fields,
        "stripped": revision.stripped,
        "restored_from": revision.restored_from_id,
    }


def revision_detail(revision: Revision) -> dict[str, Any]:
    # An override that appears or goes away is diffed against the code value it replaced
    # (recorded with the revision; older revisions have none: today's code values).
    code = revision.code_values or code_values(
        revision.agent, {**revision.before, **revision.after}
    )
    return {
        **revision_info(revision),
        "before": revision.before,
        "after": revision.after,
        "diff": document_diff(revision.before, revision.after, code=code),
    }


def last_change(*, agent: Agent) -> dict[str, Any] | None:
    revision = revision_list(agent=agent).first()
    if revision is None:
        return None
    return {
        "version": revision.version,
        "by": revision.author.get_username() if revision.author else None,
        "at": revision.created_at.isoformat(),
        "kind": revision.kind,
    }


def _tools(agent: Agent, document: dict[str, Any]) -> list[dict[str, Any]]:
    bindings = list(AgentTool.objects.filter(agent=agent).select_related("tool"))
    effective = {b.key: b for b in overrides.effective_tool_bindings(agent)}
    stored = document.get("tool_descriptions") or {}
    rows = []
    for binding in bindings + [b for b in effective.values() if b.pk is None]:
        active = binding.key in effective
        shown = effective.get(binding.key, binding)
        description = overrides.effective_tool_description(shown)
        rows.append(
            {
                "key": binding.key,
                "tool": binding.tool.name,
                "origin": "added" if binding.pk is None else binding.source,
                "active": active,
                "code_description": binding.tool.description,
                "description": description,
                "overridden": (stored.get(binding.key) == description)
                if agent.is_code
                else bool(binding.description_override),
                "stored_override": stored.get(binding.key),
            }
        )
    return rows


def editor_state(*, agent: Agent) -> dict[str, Any]:
    """Everything an editor surface shows; the body of GET .../overrides/ and of a 409."""
    agent = Agent.objects.get(pk=agent.pk)  # fresh: version and the cached override
    document = editor_document(agent)
    effective = overrides.effective_instructions(agent)
    override = overrides.agent_override(agent)
    stored = override.instructions if override else None
    return {
        "agent": agent.slug,
        "name": agent.name,
        "model": agent.model,
        "description": agent.description,
        "source": agent.source,
        "version": agent.version,
        "policy": agent.editor_policy,
        "ownership": field_ownership(agent),
        "editable": editable_keys(agent),
        "overrides": document,
        "instructions": {
            "code": agent.instructions if agent.is_code else None,
            "effective": effective,
            "overridden": agent.is_code and stored is not None and effective == stored,
            "stored_override": stored,
        },
        "tools": _tools(agent, document),
        "last_change": last_change(agent=agent),
        "lock": lock_info(lock_current(agent=agent)),
    }


def agents_open_to_tool_changes(*, user, agents) -> set[str]:
    """Slugs of the agents whose tools and sub-agents `user` may add and remove through the
    REST API: the same rule the API enforces (editor policy, then permission)."""
    open_slugs = set()
    for agent in agents:
        try:
            binding_write_check(user=user, agent=agent, fields={"tools"})
        except Forbidden:
            continue
        open_slugs.add(agent.slug)
    return open_slugs


def editor_page_config(*, agent: Agent, user) -> dict[str, Any]:
    """What the studio's agent editor page needs to start (rendered as JSON in the page)."""
    seconds = settings.STUDIO_EDITLOCK_SECONDS
    return {
        "slug": agent.slug,
        "username": user.get_username(),
        "canEdit": can_edit(user=user, agent=agent),
        # Tool membership (tools and sub-agents) open to this user on this agent.
        "toolsOpen": bool(agents_open_to_tool_changes(user=user, agents=[agent])),
        "canBreak": can_break_lock(user=user),
        "canViewRevisions": can_view_revisions(user=user, agent=agent),
        # Renew well before expiry, so one late heartbeat does not lose the lock.
        "heartbeatMs": max(1, seconds // 3) * 1000,
        "pollMs": 10_000,
        "urls": {
            "overrides": reverse("agent-overrides", kwargs={"slug": agent.slug}),
            "reset": reverse("agent-overrides-reset", kwargs={"slug": agent.slug}),
            "lock": reverse("agent-lock", kwargs={"slug": agent.slug}),
            "lockBreak": reverse("agent-lock-break", kwargs={"slug": agent.slug}),
            "revisions": reverse("agent-revisions", kwargs={"slug": agent.slug}),
            "tools": reverse("tool-list"),
            "agent": reverse("agent-detail", kwargs={"slug": agent.slug}),
            "agents": reverse("agent-list"),
            "agentTools": reverse("agent-tool-list", kwargs={"slug": agent.slug}),
            "agentSubagents": reverse("agent-subagent-list", kwargs={"slug": agent.slug}),
            "preview": reverse("agent-instructions-preview", kwargs={"slug": agent.slug}),
            "export": reverse("agent-export", kwargs={"slug": agent.slug}),
            "duplicate": reverse("frontend:agent-new") + f"?duplicate={agent.slug}",
            "home": reverse("frontend:home"),
        },
    }
