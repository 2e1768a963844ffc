"""Editor writes: override saves under the editor policy, versions, revisions, locks.

The version check and the write are one atomic statement:
`UPDATE agent SET version = version + 1 WHERE id = %s AND version = %s`. On PostgreSQL a
second writer that started from the same version blocks on the row until the first
commits, then re-evaluates the WHERE against the new row, matches nothing, and is refused
with a Conflict carrying the current values. Locks are an aid on top; the version check is
the guarantee (DESIGN.md section 10).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agents_core.definitions import DefinitionError, valid_model_string, validate_instructions
from agents_core.editor.policy import field_ownership
from agents_core.models import (
    Agent,
    AgentTool,
    EditLock,
    EditorOverride,
    LockEnd,
    Revision,
    RevisionKind,
    Source,
)
from studio.exceptions import ApplicationError, Conflict

BINDING_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# Payload key -> the policy field it writes. Keys outside these maps are refused (400);
# keys that map to a code-owned field are stripped and reported.
_ROW_KEYS = {
    name: name
    for name in ("id", "name", "description", "model", "instructions", "tool_descriptions")
}
CODE_KEYS = {**_ROW_KEYS, "tools_removed": "tools", "tools_added": "tools"}
# A studio agent's settings that its revisions record beside the editor document.
STUDIO_RECORDED_FIELDS = ("metadata", "default_options", "notification_policy")
STUDIO_KEYS = {**_ROW_KEYS, "tools": "tools"}


class Locked(ApplicationError):
    status_code = 423


class Forbidden(ApplicationError):
    status_code = 403


@dataclass
class SaveResult:
    agent: Agent
    revision: Revision | None
    stripped: list[str] = field(default_factory=list)


# --- permissions --------------------------------------------------------------------------
def can_edit(*, user, agent: Agent) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    if agent.is_code:
        return user.has_perm("agents_core.change_agent")
    return agent.owner_id == user.pk


def can_view_revisions(*, user, agent: Agent) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    if agent.is_code:
        return user.has_perm("agents_core.view_agent") or user.has_perm("agents_core.change_agent")
    return agent.owner_id == user.pk


def can_break_lock(*, user) -> bool:
    return user.has_perm("agents_core.break_editlock")


def _require_edit(user, agent: Agent) -> None:
    if not can_edit(user=user, agent=agent):
        raise Forbidden("You may not edit this agent.", code="permission_denied")


_WRITE_WHAT = {
    "tools": "tool membership (adding, removing or changing its tools and sub-agents)",
    "tool_descriptions": "tool descriptions",
}


def binding_write_check(*, user, agent: Agent, fields: set[str]) -> None:
    """Refuse (403) a REST write of an agent's tool or sub-agent bindings unless the agent's
    editor policy opens every policy field it touches and the user may edit the agent.

    `fields` are policy fields: "tools" (membership: which tools and sub-agents, under
    which keys) and "tool_descriptions". Sub-agents are tools to the model (`agent-<key>`),
    so the same two fields govern them. A studio agent is its owner's: everything is open.
    """
    ownership = field_ownership(agent)
    closed = [name for name in ("tools", "tool_descriptions") if name in fields]
    closed = [name for name in closed if ownership[name] != "editor"]
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


# --- documents ----------------------------------------------------------------------------
def payload_keys(agent: Agent) -> dict[str, str]:
    return CODE_KEYS if agent.is_code else STUDIO_KEYS


def editable_keys(agent: Agent) -> list[str]:
    ownership = field_ownership(agent)
    return [key for key, name in payload_keys(agent).items() if ownership[name] == "editor"]


def editor_document(agent: Agent) -> dict[str, Any]:
    """What an editor save writes: a code agent's stored override, a studio agent's row."""
    if agent.is_code:
        override = EditorOverride.objects.filter(agent=agent).first()
        if override is None:
            return {
                "instructions": None,
                "tool_descriptions": {},
                "tools_removed": [],
                "tools_added": {},
            }
        return override.as_document()
    bindings = list(AgentTool.objects.filter(agent=agent).select_related("tool"))
    return {
        "name": agent.name,
        "description": agent.description,
        "model": agent.model,
        "instructions": agent.instructions,
        "tool_descriptions": {
            b.key: b.description_override for b in bindings if b.description_override
        },
        "tools": {b.key: b.tool.name for b in bindings},
    }


def revision_document(agent: Agent) -> dict[str, Any]:
    """What a revision records: the editor document plus the parts of the agent that other
    writes change (the REST API's bindings on a code agent, a studio agent's settings).

    The extra keys are recorded so that every save shows its before and after; a restore
    applies the editor document's keys and reports the others as not restored.
    """
    from agents_core.models import SubAgent

    agent = Agent.objects.get(pk=agent.pk)  # the row as it is now, inside the save
    document = editor_document(agent)
    if agent.is_code:
        tools = AgentTool.objects.filter(agent=agent, source=Source.STUDIO).select_related("tool")
        subagents = SubAgent.objects.filter(parent=agent, source=Source.STUDIO).select_related(
            "child"
        )
        document["studio_tools"] = {
            b.key: {
                "tool": b.tool.name,
                "description": b.description_override,
                "requires_approval": b.requires_approval,
                "position": b.position,
            }
            for b in tools
        }
        document["studio_subagents"] = {
            s.key: {
                "agent": s.child.slug,
                "description": s.description_override,
                "position": s.position,
            }
            for s in subagents
        }
    else:
        for name in STUDIO_RECORDED_FIELDS:
            document[name] = getattr(agent, name)
    return document


def split_payload(*, agent: Agent, data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(the allowed changes, the stripped keys). Unknown keys are a 400, never dropped."""
    keys = payload_keys(agent)
    unknown = sorted(set(data) - set(keys) - {"version"})
    if unknown:
        raise ApplicationError(
            f"Unknown fields: {', '.join(unknown)}. "
            f"Editable here: {', '.join(editable_keys(agent)) or 'nothing'}.",
            code="unknown_fields",
            extra={"unknown": unknown},
        )
    ownership = field_ownership(agent)
    allowed = {k: v for k, v in data.items() if k in keys and ownership[keys[k]] == "editor"}
    stripped = sorted(k for k in data if k in keys and ownership[keys[k]] != "editor")
    return allowed, stripped


def _field_error(name: str, message: str) -> ApplicationError:
    return ApplicationError(message, code="invalid", extra={name: [message]})


def _validate(agent: Agent, changes: dict[str, Any], user) -> dict[str, Any]:
    from tools_app.models import Tool

    clean = dict(changes)
    if "instructions" in clean and not (agent.is_code and clean["instructions"] is None):
        try:
            clean["instructions"] = validate_instructions(clean["instructions"])
        except DefinitionError as exc:
            raise _field_error("instructions", str(exc)) from exc
    if "name" in clean and (not isinstance(clean["name"], str) or not clean["name"].strip()):
        raise _field_error("name", "The name must be a non-empty string.")
    if "description" in clean and not isinstance(clean["description"], str):
        raise _field_error("description", "The description must be a string.")
    if "model" in clean and not (
        isinstance(clean["model"], str) and valid_model_string(clean["model"])
    ):
        raise _field_error("model", "The model must look like 'provider/model'.")
    for name in ("name", "model"):  # longer than the column: a 400 here, not a DataError
        limit = Agent._meta.get_field(name).max_length
        if len(clean.get(name) or "") > limit:
            raise _field_error(name, f"The {name} is longer than {limit} characters.")
    descriptions = clean.get("tool_descriptions", {})
    if not isinstance(descriptions, dict) or not all(
        isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in descriptions.items()
    ):
        raise _field_error(
            "tool_descriptions", "tool_descriptions maps a tool key to a string (or null to reset)."
        )
    removed = clean.get("tools_removed", [])
    if not isinstance(removed, list) or not all(isinstance(k, str) for k in removed):
        raise _field_error("tools_removed", "tools_removed is a list of tool keys.")
    for name in ("tools_added", "tools"):
        mapping = clean.get(name, {})
        if not isinstance(mapping, dict):
            raise _field_error(name, f"{name} maps a tool key to a tool name.")
        for key, tool_name in mapping.items():
            if not BINDING_KEY.match(key) or not isinstance(tool_name, str):
                raise _field_error(
                    name, f"{name}: {key!r} must be a key (letters, digits, _ -) naming a tool."
                )
        usable = Tool.objects.live().visible_to(user)
        if agent.is_code:
            # Everyone runs a code agent: only shared tools may join it, never a private one
            # (it would run with its owner's credentials for every user).
            usable = usable.filter(source=Source.CODE)
        missing = set(mapping.values()) - set(
            usable.filter(name__in=mapping.values()).values_list("name", flat=True)
        )
        if missing:
            raise _field_error(
                name, f"No tools you can add here named: {', '.join(sorted(missing))}."
            )
    return clean


def _merge(
    agent: Agent, before: dict[str, Any], changes: dict[str, Any], *, partial: bool
) -> dict[str, Any]:
    """The document after the save. PUT replaces the editable part; PATCH merges."""
    after = dict(before)
    editable = set(editable_keys(agent))
    if not partial:
        if agent.is_code:
            empty = {
                "instructions": None,
                "tool_descriptions": {},
                "tools_removed": [],
                "tools_added": {},
            }
            after.update({k: v for k, v in empty.items() if k in editable})
        else:
            required = sorted(editable - set(changes) - {"tool_descriptions"})
            if required:
                raise ApplicationError(
                    "A PUT sends the whole document; use PATCH to change some fields.",
                    extra={name: ["This field is required."] for name in required},
                )
            after["tool_descriptions"] = {}
    for key, value in changes.items():
        if key == "tool_descriptions" and partial:
            merged = dict(after.get("tool_descriptions") or {})
            merged.update(value)
            after[key] = merged
        else:
            after[key] = value
    # A null description means "reset to code"; empty entries are not kept.
    after["tool_descriptions"] = {
        k: v for k, v in (after.get("tool_descriptions") or {}).items() if v
    }
    _check_keys(agent, after)
    return after


def _check_keys(agent: Agent, doc: dict[str, Any]) -> None:
    if agent.is_code:
        code_keys = set(AgentTool.objects.filter(agent=agent).values_list("key", flat=True))
        doc["tools_removed"] = sorted(set(doc.get("tools_removed") or []))
        unknown = set(doc["tools_removed"]) - code_keys
        if unknown:
            raise _field_error(
                "tools_removed", f"Not tools of this agent: {', '.join(sorted(unknown))}."
            )
        clash = set(doc.get("tools_added") or {}) & (code_keys - set(doc["tools_removed"]))
        if clash:
            raise _field_error(
                "tools_added", f"Keys already used by code tools: {', '.join(sorted(clash))}."
            )
        keys = (code_keys - set(doc["tools_removed"])) | set(doc.get("tools_added") or {})
    else:
        keys = set(doc.get("tools") or {})
    unknown = set(doc.get("tool_descriptions") or {}) - keys
    if unknown:
        raise _field_error(
            "tool_descriptions", f"Not tools of this agent: {', '.join(sorted(unknown))}."
        )


def _write(agent: Agent, doc: dict[str, Any], user) -> None:
    from tools_app.models import Tool

    if agent.is_code:
        EditorOverride.objects.update_or_create(
            agent=agent,
            defaults={
                "instructions": doc["instructions"],
                "tool_descriptions": doc["tool_descriptions"],
                "tools_removed": doc["tools_removed"],
                "tools_added": doc["tools_added"],
                "updated_by": user,
            },
        )
        return
    Agent.objects.filter(pk=agent.pk).update(
        name=doc["name"],
        description=doc["description"],
        model=doc["model"],
        instructions=doc["instructions"],
    )
    wanted = doc["tools"]
    AgentTool.objects.filter(agent=agent).exclude(key__in=list(wanted)).delete()
    tools = {t.name: t for t in Tool.objects.filter(name__in=wanted.values())}
    for position, (key, tool_name) in enumerate(wanted.items()):
        AgentTool.objects.update_or_create(
            agent=agent,
            key=key,
            defaults={
                "tool": tools[tool_name],
                "position": position,
                "description_override": doc["tool_descriptions"].get(key, ""),
            },
        )


def conflict_for(agent: Agent, *, version: int) -> Conflict:
    """The 409 a stale save gets: the current values and who changed them last."""
    from agents_core.editor.selectors import editor_state

    current = Agent.objects.get(pk=agent.pk)
    state = editor_state(agent=current)
    last = state["last_change"]
    who = f" by {last['by']}" if last and last["by"] else ""
    return Conflict(
        f"This agent changed since you opened it (you have version {version}, "
        f"it is now version {current.version}{who}). Your save was not applied.",
        code="stale_version",
        extra={"your_version": version, "current": state},
    )


@transaction.atomic
def _commit(
    *,
    agent: Agent,
    user,
    version: int | None,
    kind: str,
    stripped: list[str],
    build=None,
    apply=None,
    also=None,
    restored_from: Revision | None = None,
) -> SaveResult:
    """Check the version and bump it in one UPDATE, then write and record a revision.

    Either `build(before) -> after` computes the new editor document from the one read
    under the row lock (and `_write` stores it), or `apply()` changes the rows itself (a
    REST write of a binding or of a studio agent) and the after document is read back.
    With `build`, `also()` may change rows beside the editor document (a restore of what a
    revision recorded beside it); the after document is then read back too.
    `version=None` (a REST client that named no version) bumps without a check: the save
    is not refused, but it is still serialised on the row and recorded.
    """
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
    before = revision_document(agent)
    written = apply is not None
    if apply is not None:
        apply()
        after = revision_document(agent)
    else:
        after = build(before)
        if also is not None:
            _write(agent, after, user)
            also()
            after, written = revision_document(agent), True
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    if not changed:
        # Nothing to record: undo the bump (same transaction, still holding the lock).
        transaction.set_rollback(True)
        agent.version = new_version - 1
        return SaveResult(agent=agent, revision=None, stripped=stripped)
    if not written:
        _write(agent, after, user)
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
    )
    agent.refresh_from_db()
    return SaveResult(agent=agent, revision=revision, stripped=stripped)


def tracked_change(*, agent: Agent, user, apply, version: int | None = None) -> SaveResult:
    """Run `apply()` (a write outside the editor document) as an editor save: version
    checked (when given) and bumped, and recorded as a revision with before and after."""
    return _commit(
        agent=agent, user=user, version=version, kind=RevisionKind.SAVE, stripped=[], apply=apply
    )


def override_save(
    *, agent: Agent, user, data: dict[str, Any], version: int, partial: bool = True
) -> SaveResult:
    """Save an editor change that started from `version`; code-owned keys are stripped."""
    _require_edit(user, agent)
    changes, stripped = split_payload(agent=agent, data=data)
    changes = _validate(agent, changes, user)
    if not changes and partial:
        if Agent.objects.filter(pk=agent.pk, version=version).exists():
            return SaveResult(agent=agent, revision=None, stripped=stripped)
        raise conflict_for(agent, version=version)
    return _commit(
        agent=agent,
        user=user,
        version=version,
        kind=RevisionKind.SAVE,
        stripped=stripped,
        build=lambda before: _merge(agent, before, changes, partial=partial),
    )


def override_reset(
    *, agent: Agent, user, field: str, version: int, key: str | None = None
) -> SaveResult:
    """Drop a code agent's override of one field (or one tool's description)."""
    _require_edit(user, agent)
    if not agent.is_code:
        raise ApplicationError("Only code agents have code values to reset to.", code="not_code")
    if field == "instructions":
        changes: dict[str, Any] = {"instructions": None}
    elif field == "tool_descriptions":
        changes = {"tool_descriptions": {key: None}} if key else {}
    elif field == "tools":
        changes = {"tools_removed": [], "tools_added": {}}
    else:
        raise _field_error("field", "field must be instructions, tool_descriptions or tools.")
    _, stripped = split_payload(agent=agent, data=changes)
    if stripped:
        raise Forbidden(f"Code owns {field} of this agent; there is no override to reset.")

    def build(before: dict[str, Any]) -> dict[str, Any]:
        if field == "tool_descriptions" and not key:
            return _merge(
                agent,
                before,
                {"tool_descriptions": dict.fromkeys(before["tool_descriptions"])},
                partial=True,
            )
        return _merge(agent, before, changes, partial=True)

    return _commit(
        agent=agent, user=user, version=version, kind=RevisionKind.RESET, stripped=[], build=build
    )


def revision_restore(*, revision: Revision, user, version: int) -> SaveResult:
    """Make the agent what it was after `revision`: a new revision, version-checked.

    The editor document is restored under today's policy (code-owned keys are stripped and
    reported), and so are the parts recorded beside it: a code agent's studio bindings
    when its policy still opens tool membership (else they are reported as not restored),
    a studio agent's settings."""
    from agents_core.services.agents import recorded_parts_restore

    agent = revision.agent
    _require_edit(user, agent)
    keys = payload_keys(agent)
    current = revision_document(agent)
    recorded = {k: v for k, v in revision.after.items() if k not in keys and current.get(k) != v}
    not_restored: list[str] = []
    if agent.is_code and recorded:
        ownership = field_ownership(agent)
        closed = ownership["tools"] != "editor" or (
            ownership["tool_descriptions"] != "editor"
            and any(
                spec.get("description")
                for name in ("studio_tools", "studio_subagents")
                for spec in (recorded.get(name) or {}).values()
            )
        )
        if closed:
            not_restored, recorded = sorted(recorded), {}
    changes, stripped = split_payload(
        agent=agent, data={k: v for k, v in revision.after.items() if k in keys}
    )
    stripped = sorted(stripped + not_restored)
    changes = _validate(agent, changes, user)
    return _commit(
        agent=agent,
        user=user,
        version=version,
        kind=RevisionKind.RESTORE,
        stripped=stripped,
        restored_from=revision,
        build=lambda before: _merge(agent, before, changes, partial=True),
        also=(lambda: recorded_parts_restore(agent=agent, user=user, recorded=recorded))
        if recorded
        else None,
    )


# --- locks --------------------------------------------------------------------------------
def lock_seconds() -> int:
    return int(getattr(settings, "STUDIO_EDITLOCK_SECONDS", 90))


def _open_lock(agent: Agent) -> EditLock | None:
    return (
        EditLock.objects.select_related("holder").filter(agent=agent, ended_at__isnull=True).first()
    )


def _locked_error(lock: EditLock) -> Locked:
    from agents_core.editor.selectors import lock_info

    return Locked(
        f"{lock.holder.get_username()} is editing this agent (since "
        f"{timezone.localtime(lock.acquired_at):%H:%M}).",
        code="locked",
        extra={"lock": lock_info(lock)},
    )


def _end(lock: EditLock, *, by, reason: str, now) -> None:
    lock.ended_at, lock.ended_by, lock.end_reason = now, by, reason
    lock.save(update_fields=["ended_at", "ended_by", "end_reason"])


def _new_lock(agent: Agent, user, now) -> EditLock:
    return EditLock.objects.create(
        agent=agent,
        holder=user,
        acquired_at=now,
        expires_at=now + timedelta(seconds=lock_seconds()),
    )


@transaction.atomic
def lock_take(*, agent: Agent, user) -> EditLock:
    """Take the lock (a new lock session), or take over an expired one (recorded).

    Taking it again while holding it starts a new session too: a page that is being left
    releases its own session by id, and must not release the one the next page took.
    """
    _require_edit(user, agent)
    # Serialize lock changes per agent on the agent row.
    Agent.objects.select_for_update().filter(pk=agent.pk).first()
    now = timezone.now()
    lock = _open_lock(agent)
    if lock is not None and lock.holder_id == user.pk:
        _end(lock, by=user, reason=LockEnd.RELEASED, now=now)
    elif lock is not None:
        if lock.expires_at > now:
            raise _locked_error(lock)
        _end(lock, by=user, reason=LockEnd.TAKEN_OVER, now=now)
    return _new_lock(agent, user, now)


def _extend(lock: EditLock, now) -> EditLock:
    lock.expires_at = now + timedelta(seconds=lock_seconds())
    lock.renewed_at = now
    lock.renew_count += 1
    lock.save(update_fields=["expires_at", "renewed_at", "renew_count"])
    return lock


@transaction.atomic
def lock_renew(*, agent: Agent, user) -> EditLock:
    """The page's heartbeat. Refused once someone else took the lock over or broke it."""
    _require_edit(user, agent)
    Agent.objects.select_for_update().filter(pk=agent.pk).first()
    lock = _open_lock(agent)
    if lock is None or lock.holder_id != user.pk:
        if lock is not None and lock.expires_at > timezone.now():
            raise _locked_error(lock)
        raise Conflict("You no longer hold the edit lock; take it again.", code="lock_lost")
    return _extend(lock, timezone.now())


@transaction.atomic
def lock_release(*, agent: Agent, user, lock_id: int | None = None) -> None:
    """End the user's lock; with `lock_id`, only that session (a page leaving)."""
    Agent.objects.select_for_update().filter(pk=agent.pk).first()
    lock = _open_lock(agent)
    if lock is None or lock.holder_id != user.pk:
        return
    if lock_id is not None and lock.pk != lock_id:
        return
    _end(lock, by=user, reason=LockEnd.RELEASED, now=timezone.now())


@transaction.atomic
def lock_break(*, agent: Agent, user) -> EditLock:
    """Break someone's live lock and take it; needs agents_core.break_editlock."""
    _require_edit(user, agent)
    if not can_break_lock(user=user):
        raise Forbidden(
            "Breaking another editor's lock needs the 'break edit lock' permission.",
            code="permission_denied",
        )
    Agent.objects.select_for_update().filter(pk=agent.pk).first()
    now = timezone.now()
    lock = _open_lock(agent)
    if lock is not None and lock.holder_id == user.pk:
        return _extend(lock, now)
    if lock is not None:
        reason = LockEnd.BROKEN if lock.expires_at > now else LockEnd.TAKEN_OVER
        _end(lock, by=user, reason=reason, now=now)
    return _new_lock(agent, user, now)
