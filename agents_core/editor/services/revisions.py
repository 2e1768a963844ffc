"""Every editor write commits through `commit`: the lock guard, the version check, the
write and its revision, in one transaction.

The version check and the write are one atomic statement:
`UPDATE agent SET version = version + 1 WHERE id = %s AND version = %s`. On PostgreSQL a
second writer that started from the same version blocks on the row until the first
commits, then re-evaluates the WHERE against the new row, matches nothing, and is refused
with a Conflict carrying the current values. Before it, under the same row lock, the lock
guard refuses (423) a write from any session but the holder of a live edit lock; the
version check stays the guarantee underneath.

Every write names its lock session as `lock_id` (None: no session, which is refused
while anyone holds a live lock).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agents_core.editor.humanize import human_time
from agents_core.editor.policy import EDITOR, field_ownership
from agents_core.editor.selectors import editor_state
from agents_core.editor.services import documents
from agents_core.editor.services.locks import lock_guard
from agents_core.editor.services.permissions import Forbidden, require_edit
from agents_core.models import Agent, Revision, RevisionKind
from agents_core.services.binding_rules import recorded_parts_restore
from common.exceptions import ApplicationError, Conflict

Document = dict[str, Any]


@dataclass
class SaveResult:
    agent: Agent
    revision: Revision | None
    stripped: list[str] = field(default_factory=list)


def conflict_for(agent: Agent, *, version: int) -> Conflict:
    """The 409 a stale save gets: the current values and who changed them last."""
    current = Agent.objects.get(pk=agent.pk)
    state = editor_state(agent=current)
    last = current.revisions.select_related("author").first()
    who = ""
    if last is not None:
        by = f" by {last.author.get_username()}" if last.author else ""
        who = f"{by}, {human_time(last.created_at)}"
    return Conflict(
        f"This agent changed since you opened it (you have version {version}, "
        f"it is now version {current.version}{who}). Your save was not applied.",
        code="stale_version",
        extra={"your_version": version, "current": state},
    )


@transaction.atomic
def commit(
    *,
    agent: Agent,
    user: Any,
    version: int | None,
    lock_id: int | None,
    kind: str,
    stripped: list[str],
    build: Callable[[Document], Document] | None = None,
    apply: Callable[[], Any] | None = None,
    also: Callable[[], Any] | None = None,
    restored_from: Revision | None = None,
) -> SaveResult:
    """Guard the lock, check the version and bump it in one UPDATE, write, record a revision.

    Either `build(before) -> after` computes the new editor document from the one read
    under the row lock (and documents.write stores it), or `apply()` changes the rows
    itself (a REST write of a binding or of a studio agent) and the after document is
    read back. With `build`, `also()` may change rows beside the editor document (a
    restore of what a revision recorded beside it); the after document is then read back.
    `version=None` (a REST client that named no version) bumps without a check: the save
    is not refused, but it is still serialised on the row and recorded.
    """
    lock_guard(agent=agent, user=user, lock_id=lock_id)
    rows = Agent.objects.filter(pk=agent.pk)
    if version is not None:
        rows = rows.filter(version=version)
    updated = rows.update(version=F("version") + 1, updated_at=timezone.now())
    if updated != 1:
        if version is None:
            raise ApplicationError("The agent no longer exists.", status_code=404, code="not_found")
        raise conflict_for(agent, version=version)
    # The UPDATE holds the row lock: no other editor can change the document until commit.
    new_version = Agent.objects.values_list("version", flat=True).get(pk=agent.pk)
    before = documents.revision_document(agent)
    written = apply is not None
    if apply is not None:
        apply()
        after = documents.revision_document(agent)
    else:
        if build is None:
            raise TypeError("commit() needs `build` or `apply`.")
        after = build(before)
        if also is not None:
            documents.write(agent, after, user)
            also()
            after, written = documents.revision_document(agent), True
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    if not changed:
        # Nothing to record: undo the bump (same transaction, still holding the lock).
        transaction.set_rollback(True)
        agent.version = new_version - 1
        return SaveResult(agent=agent, revision=None, stripped=stripped)
    if not written:
        documents.write(agent, after, user)
    revision = Revision.objects.create(
        agent=agent,
        version=new_version,
        kind=kind,
        author=user,
        fields=changed,
        before=before,
        after=after,
        stripped=stripped,
        restored_from=restored_from,
        code_values=documents.code_values(agent, {**before, **after}),
    )
    agent.refresh_from_db()
    return SaveResult(agent=agent, revision=revision, stripped=stripped)


def tracked_change(
    *,
    agent: Agent,
    user: Any,
    apply: Callable[[], Any],
    lock_id: int | None,
    version: int | None = None,
) -> SaveResult:
    """Run `apply()` (a write outside the editor document) as an editor save: lock-guarded,
    version checked (when given) and bumped, recorded as a revision with before and after."""
    return commit(
        agent=agent,
        user=user,
        version=version,
        lock_id=lock_id,
        kind=RevisionKind.SAVE,
        stripped=[],
        apply=apply,
    )


def override_save(
    *,
    agent: Agent,
    user: Any,
    data: dict[str, Any],
    version: int,
    lock_id: int | None,
    partial: bool = True,
) -> SaveResult:
    """Save an editor change that started from `version`; code-owned keys are stripped."""
    require_edit(user=user, agent=agent)
    changes, stripped = documents.split_payload(agent=agent, data=data)
    changes = documents.validate(agent, changes, user)
    if not changes and partial:
        if Agent.objects.filter(pk=agent.pk, version=version).exists():
            return SaveResult(agent=agent, revision=None, stripped=stripped)
        raise conflict_for(agent, version=version)
    return commit(
        agent=agent,
        user=user,
        version=version,
        lock_id=lock_id,
        kind=RevisionKind.SAVE,
        stripped=stripped,
        build=lambda before: documents.merge(agent, before, changes, partial=partial),
    )


def _reset_changes(field_name: str, key: str | None) -> dict[str, Any]:
    if field_name == "instructions":
        return {"instructions": None}
    if field_name == "tool_descriptions":
        return {"tool_descriptions": {key: None}} if key else {}
    if field_name == "tools":
        return {"tools_removed": [], "tools_added": {}}
    raise documents.field_error("field", "field must be instructions, tool_descriptions or tools.")


def override_reset(
    *,
    agent: Agent,
    user: Any,
    field: str,
    version: int,
    lock_id: int | None,
    key: str | None = None,
) -> SaveResult:
    """Drop a code agent's override of one field (or one tool's description)."""
    require_edit(user=user, agent=agent)
    if not agent.is_code:
        raise ApplicationError("Only code agents have code values to reset to.", code="not_code")
    changes = _reset_changes(field, key)
    _, stripped = documents.split_payload(agent=agent, data=changes)
    if stripped:
        raise Forbidden(f"Code owns {field} of this agent; there is no override to reset.")

    def build(before: Document) -> Document:
        if field == "tool_descriptions" and not key:
            every = {"tool_descriptions": dict.fromkeys(before["tool_descriptions"])}
            return documents.merge(agent, before, every, partial=True)
        return documents.merge(agent, before, changes, partial=True)

    return commit(
        agent=agent,
        user=user,
        version=version,
        lock_id=lock_id,
        kind=RevisionKind.RESET,
        stripped=[],
        build=build,
    )


def _recorded_parts(agent: Agent, revision: Revision) -> tuple[dict[str, Any], list[str]]:
    """(what the revision recorded beside the editor document and differs now, what of it
    today's policy keeps from being restored)."""
    keys = documents.payload_keys(agent)
    current = documents.revision_document(agent)
    recorded = {k: v for k, v in revision.after.items() if k not in keys and current.get(k) != v}
    if not (agent.is_code and recorded):
        return recorded, []
    ownership = field_ownership(agent)
    closed = ownership["tools"] != EDITOR or (
        ownership["tool_descriptions"] != EDITOR
        and any(
            spec.get("description")
            for name in ("studio_tools", "studio_subagents")
            for spec in (recorded.get(name) or {}).values()
        )
    )
    return ({}, sorted(recorded)) if closed else (recorded, [])


def revision_restore(
    *, revision: Revision, user: Any, version: int, lock_id: int | None
) -> SaveResult:
    """Make the agent what it was after `revision`: a new revision, version-checked.

    The editor document is restored under today's policy (code-owned keys are stripped and
    reported), and so are the parts recorded beside it: a code agent's studio bindings
    when its policy still opens tool membership (else they are reported as not restored),
    a studio agent's settings."""
    agent = revision.agent
    require_edit(user=user, agent=agent)
    keys = documents.payload_keys(agent)
    recorded, not_restored = _recorded_parts(agent, revision)
    changes, stripped = documents.split_payload(
        agent=agent, data={k: v for k, v in revision.after.items() if k in keys}
    )
    changes = documents.validate(agent, changes, user)
    return commit(
        agent=agent,
        user=user,
        version=version,
        lock_id=lock_id,
        kind=RevisionKind.RESTORE,
        stripped=sorted(stripped + not_restored),
        restored_from=revision,
        build=lambda before: documents.merge(agent, before, changes, partial=True),
        also=(lambda: recorded_parts_restore(agent=agent, user=user, recorded=recorded))
        if recorded
        else None,
    )
