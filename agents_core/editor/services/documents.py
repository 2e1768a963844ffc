"""The editor document of an agent: what a save writes, what a revision records, how a
payload is split under the policy, validated, merged and stored.

A code agent's document is its stored override (absent keys mean "as in code"); a studio
agent's is its own row and bindings.
"""

from __future__ import annotations

import re
from typing import Any

from agents_core.definitions import DefinitionError, valid_model_string, validate_instructions
from agents_core.editor.policy import EDITOR, field_ownership
from agents_core.models import Agent, AgentTool, EditorOverride, Source, SubAgent
from common.exceptions import ApplicationError
from providers.model_endpoints import agent_model_errors
from tools_app.models import Tool

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


def empty_override() -> dict[str, Any]:
    """A code agent's document with nothing overridden."""
    return {"instructions": None, "tool_descriptions": {}, "tools_removed": [], "tools_added": {}}


def payload_keys(agent: Agent) -> dict[str, str]:
    return CODE_KEYS if agent.is_code else STUDIO_KEYS


def editable_keys(agent: Agent) -> list[str]:
    ownership = field_ownership(agent)
    return [key for key, name in payload_keys(agent).items() if ownership[name] == EDITOR]


def editor_document(agent: Agent) -> dict[str, Any]:
    """What an editor save writes: a code agent's stored override, a studio agent's row."""
    if agent.is_code:
        override = EditorOverride.objects.filter(agent=agent).first()
        if override is None:
            return empty_override()
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
    agent = Agent.objects.get(pk=agent.pk)  # the row as it is now, inside the save
    document = editor_document(agent)
    if not agent.is_code:
        for name in STUDIO_RECORDED_FIELDS:
            document[name] = getattr(agent, name)
        return document
    tools = AgentTool.objects.filter(agent=agent, source=Source.STUDIO).select_related("tool")
    subagents = SubAgent.objects.filter(parent=agent, source=Source.STUDIO).select_related("child")
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
    return document


def code_values(agent: Agent, document: dict[str, Any]) -> dict[str, Any]:
    """A code agent's code values of what its document overrides: the instructions, and
    the tool descriptions the model sees without an override (for editor-added tools, the
    tool's own). What the diff of an override appearing or going away starts from."""
    if not agent.is_code:
        return {}
    descriptions = {
        b.key: b.tool.description
        for b in AgentTool.objects.filter(agent=agent).select_related("tool")
    }
    added = (document.get("tools_added") or {}).items()
    names = {key: name for key, name in added if key not in descriptions}
    shared = Tool.objects.filter(owner__isnull=True, name__in=names.values())
    tools = dict(shared.values_list("name", "description"))
    descriptions.update({key: tools.get(name, "") for key, name in names.items()})
    return {"instructions": agent.instructions, "tool_descriptions": descriptions}


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
    allowed = {k: v for k, v in data.items() if k in keys and ownership[keys[k]] == EDITOR}
    stripped = sorted(k for k in data if k in keys and ownership[keys[k]] != EDITOR)
    return allowed, stripped


def field_error(name: str, message: str) -> ApplicationError:
    return ApplicationError(message, code="invalid", extra={name: [message]})


def _validate_row(clean: dict[str, Any]) -> None:
    if "name" in clean and (not isinstance(clean["name"], str) or not clean["name"].strip()):
        raise field_error("name", "The name must be a non-empty string.")
    if "description" in clean and not isinstance(clean["description"], str):
        raise field_error("description", "The description must be a string.")
    if "model" in clean and not (
        isinstance(clean["model"], str) and valid_model_string(clean["model"])
    ):
        raise field_error("model", "The model must look like 'provider/model'.")
    for name in ("name", "model"):  # longer than the column: a 400 here, not a DataError
        limit = getattr(Agent._meta.get_field(name), "max_length", None)
        if limit is not None and len(clean.get(name) or "") > limit:
            raise field_error(name, f"The {name} is longer than {limit} characters.")


def _validate_tools(agent: Agent, clean: dict[str, Any], user: Any) -> None:
    descriptions = clean.get("tool_descriptions", {})
    if not isinstance(descriptions, dict) or not all(
        isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in descriptions.items()
    ):
        raise field_error(
            "tool_descriptions", "tool_descriptions maps a tool key to a string (or null to reset)."
        )
    removed = clean.get("tools_removed", [])
    if not isinstance(removed, list) or not all(isinstance(k, str) for k in removed):
        raise field_error("tools_removed", "tools_removed is a list of tool keys.")
    for name in ("tools_added", "tools"):
        mapping = clean.get(name, {})
        if not isinstance(mapping, dict):
            raise field_error(name, f"{name} maps a tool key to a tool name.")
        for key, tool_name in mapping.items():
            if not BINDING_KEY.match(key) or not isinstance(tool_name, str):
                raise field_error(
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
            raise field_error(
                name, f"No tools you can add here named: {', '.join(sorted(missing))}."
            )


def validate(agent: Agent, changes: dict[str, Any], user: Any) -> dict[str, Any]:
    """The changes, checked value by value (400 with the field's name on the first problem)."""
    clean = dict(changes)
    if "instructions" in clean and not (agent.is_code and clean["instructions"] is None):
        try:
            clean["instructions"] = validate_instructions(clean["instructions"])
        except DefinitionError as exc:
            raise field_error("instructions", str(exc)) from exc
    _validate_row(clean)
    if "model" in clean:
        # The agent's new model with its saved base and fallbacks: the gate of every save.
        errors = agent_model_errors(
            model=clean["model"], metadata=agent.metadata, default_options=agent.default_options
        )
        if errors:
            name, texts = next(iter(errors.items()))
            raise field_error(name, "; ".join(texts))
    _validate_tools(agent, clean, user)
    return clean


def merge(
    agent: Agent, before: dict[str, Any], changes: dict[str, Any], *, partial: bool
) -> dict[str, Any]:
    """The document after the save. PUT replaces the editable part; PATCH merges."""
    after = dict(before)
    editable = set(editable_keys(agent))
    if not partial:
        if agent.is_code:
            after.update({k: v for k, v in empty_override().items() if k in editable})
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
            raise field_error(
                "tools_removed", f"Not tools of this agent: {', '.join(sorted(unknown))}."
            )
        clash = set(doc.get("tools_added") or {}) & (code_keys - set(doc["tools_removed"]))
        if clash:
            raise field_error(
                "tools_added", f"Keys already used by code tools: {', '.join(sorted(clash))}."
            )
        keys = (code_keys - set(doc["tools_removed"])) | set(doc.get("tools_added") or {})
    else:
        keys = set(doc.get("tools") or {})
    unknown = set(doc.get("tool_descriptions") or {}) - keys
    if unknown:
        raise field_error(
            "tool_descriptions", f"Not tools of this agent: {', '.join(sorted(unknown))}."
        )


def write(agent: Agent, doc: dict[str, Any], user: Any) -> None:
    """Store the document: a code agent's override row, or a studio agent's row and tools."""
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
    usable = Tool.objects.visible_to(agent.owner).filter(name__in=wanted.values())
    tools = {t.name: t for t in usable}
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
