"""Writes of agents made in the studio (bindings: agents_core.services.bindings).

Code agents are synced from code (agents_core.registry): their fields are read-only here.
Saves of studio agents are revisions, version-checked when the client names a version, and
refused (423) while another session holds the agent's live edit lock.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from agents_core.editor.services.revisions import tracked_change
from agents_core.models import Agent, Source
from common.exceptions import ApplicationError

AGENT_FIELDS = (
    "name",
    "description",
    "model",
    "instructions",
    "metadata",
    "default_options",
    "notification_policy",
)


def defined_in_code(what: str) -> ApplicationError:
    return ApplicationError(
        f"{what} is defined in code; edit its overrides instead.",
        status_code=403,
        code="defined_in_code",
    )


def agent_ensure_editable(agent: Agent) -> None:
    if agent.source == Source.CODE:
        raise defined_in_code(f"Agent {agent.slug!r}")


def save_or_field_error(instance: Any, field: str, message: str, **save_kwargs: Any) -> None:
    """Save in a savepoint; a unique constraint lost to a concurrent request becomes the
    same field error the up-front check gives."""
    try:
        with transaction.atomic():
            instance.save(**save_kwargs)
    except IntegrityError as exc:
        raise ValidationError({field: message}) from exc


# --- agents ---------------------------------------------------------------------------------
# A slug is unique among one owner's agents and the shared (code) ones: another user's
# agents never make a slug taken, so no answer tells an outsider that a slug exists.
def slug_taken(slug: str) -> str:
    return f"An agent with the slug {slug!r} already exists; pick another one."


def agent_slug_taken(*, owner: Any, slug: str) -> bool:
    return Agent.objects.namespace_of(owner).filter(slug=slug).exists()


@transaction.atomic
def agent_create(*, owner: Any, slug: str, name: str, **fields: Any) -> Agent:
    unknown = set(fields) - set(AGENT_FIELDS)
    if unknown:
        raise TypeError(f"agent_create() got unexpected fields {sorted(unknown)}")
    if agent_slug_taken(owner=owner, slug=slug):
        raise ValidationError({"slug": slug_taken(slug)})
    agent = Agent(slug=slug, name=name, owner=owner, source=Source.STUDIO, **fields)
    save_or_field_error(agent, "slug", slug_taken(slug), force_insert=True)
    return agent


def agent_update(
    *,
    agent: Agent,
    user: Any,
    data: dict[str, Any],
    lock_id: int | None,
    version: int | None = None,
) -> Agent:
    """Apply the given fields (a PUT sends all of them, a PATCH some) as an editor save.

    With `version` (the one the client started from) a stale save raises Conflict (409)
    and nothing is written; without it the save is accepted. Either way the version is
    bumped and a revision records who changed which fields, before and after; a save that
    changes nothing records nothing and keeps the version.
    """
    agent_ensure_editable(agent)
    data = {field: value for field, value in data.items() if field != "slug"}
    for field in data:
        if field not in AGENT_FIELDS:
            raise TypeError(f"agent_update() cannot set {field!r}")

    def apply() -> None:
        # Only the sent fields: the version was bumped by the editor's checked UPDATE.
        if data:
            Agent.objects.filter(pk=agent.pk).update(**data)

    return tracked_change(
        agent=agent, user=user, version=version, lock_id=lock_id, apply=apply
    ).agent


@transaction.atomic
def agent_delete(*, agent: Agent) -> None:
    """Delete a studio agent with its threads, runs and bindings."""
    agent_ensure_editable(agent)
    agent.delete()
