"""Agents as JSON documents: export, import (with a preview and renames) and duplicate.

The document (format "agent-studio.agent", version 1):

    {"format": "agent-studio.agent", "version": 1, "agent": "<slug of the exported agent>",
     "agents": [{"slug", "name", "description", "model", "instructions", "metadata",
                 "default_options", "notification_policy",
                 "tools": [{"key", "tool", "description_override", "requires_approval"}],
                 "subagents": [{"key", "agent", "description_override"}]}, ...],
     "tools": [{"name", "description", "kind", "input_schema", "output_schema",
                "execution_mode", "timeout_seconds", "config", "model_output"}, ...]}

`agents` holds the exported agent first, then the studio agents it reaches as sub-agents;
`tools` the studio tools they bind. Code agents and code tools are referenced by slug or
name only: they exist wherever the same code runs. Credentials are never exported.
A code agent is exported as the studio sees it: its instructions and tool membership
with the editor's overrides applied.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from rest_framework.serializers import Serializer

from agents_core.models import Agent, Source
from agents_core.overrides import (
    effective_instructions,
    effective_subagent_bindings,
    effective_tool_bindings,
    effective_tool_description,
)
from agents_core.serializers import (
    SubAgentInputSerializer,
    ToolBindingInputSerializer,
)
from agents_core.services.agent_documents import (
    FORMAT,
    VERSION,
    check_shape,
    document_errors,
    document_problem,
    invalid_document,
    renamed_entries,
    validated_entries,
)
from agents_core.services.agents import (
    AGENT_FIELDS,
    agent_create,
    agent_slug_taken,
    slug_taken,
)
from agents_core.services.bindings import SUBAGENT, TOOL, BindingKind, binding_create
from common.exceptions import Conflict
from tools_app.models import Tool
from tools_app.services.tools import TOOL_FIELDS, tool_create

# What an agent entry and a tool entry hold besides the slug, the bindings and the name.
AGENT_KEYS = AGENT_FIELDS
TOOL_KEYS = tuple(field for field in TOOL_FIELDS if field != "name")
# Sections other apps add to the exported agent's document (evals: its test cases), so that
# agents_core imports none of them: name -> (export(agent=, owner=) -> value or None,
# load(agent=, owner=, value=, path=) creating what it holds, or raising an error whose
# JSON paths start with `path`).
SECTIONS: dict[str, tuple[Callable[..., Any], Callable[..., None]]] = {}


def document_section_register(
    name: str, *, export: Callable[..., Any], load: Callable[..., None]
) -> None:
    SECTIONS[name] = (export, load)


# --- export ---------------------------------------------------------------------------------
def _agent_entry(agent: Agent) -> dict[str, Any]:
    entry: dict[str, Any] = {"slug": agent.slug}
    entry.update({key: getattr(agent, key) for key in AGENT_KEYS})
    entry["instructions"] = effective_instructions(agent)
    entry["tools"] = [
        {
            "key": binding.key,
            "tool": binding.tool.name,
            "description_override": _description_override(binding),
            "requires_approval": binding.requires_approval,
        }
        for binding in effective_tool_bindings(agent)
    ]
    entry["subagents"] = [
        {
            "key": binding.key,
            "agent": binding.child.slug,
            "description_override": binding.description_override,
        }
        for binding in effective_subagent_bindings(agent)
    ]
    return entry


def _description_override(binding: Any) -> str:
    description = effective_tool_description(binding)
    return "" if description == binding.tool.description else description


def _tool_entry(tool: Any) -> dict[str, Any]:
    return {"name": tool.name, **{key: getattr(tool, key) for key in TOOL_KEYS}}


def agent_document(*, agent: Agent, deep: bool = True, owner: Any = None) -> dict[str, Any]:
    """The export document of `agent`; with `deep`, its studio sub-agents (recursively) and
    the studio tools all of them bind come along, otherwise they are references. With an
    `owner`, the registered sections hold what that user keeps about the agent."""
    agents: dict[str, dict[str, Any]] = {}
    tools: dict[str, dict[str, Any]] = {}
    queue = [agent]
    while queue:
        current = queue.pop(0)
        if current.slug in agents:
            continue
        agents[current.slug] = _agent_entry(current)
        if not deep:
            break
        for binding in effective_tool_bindings(current):
            if binding.tool.source == Source.STUDIO:
                tools.setdefault(binding.tool.name, _tool_entry(binding.tool))
        for subagent in effective_subagent_bindings(current):
            if subagent.child.source == Source.STUDIO:
                queue.append(subagent.child)
    document = {
        "format": FORMAT,
        "version": VERSION,
        "agent": agent.slug,
        "agents": list(agents.values()),
        "tools": list(tools.values()),
    }
    for name, (export, _) in SECTIONS.items() if owner is not None else ():
        if (value := export(agent=agent, owner=owner)) is not None:
            document[name] = value
    return document


# --- import ---------------------------------------------------------------------------------
class _Preview(Exception):
    """Rolls back a dry run once everything was created and checked."""


def _free_name(taken: Any, name: str, sep: str) -> str:
    for number in itertools.count(2):
        candidate = f"{name[:60]}{sep}{number}"
        if not taken(candidate):
            return candidate
    raise AssertionError("unreachable")


def _check_clashes(*, owner: Any, agents: list[dict], tools: list[dict]) -> None:
    """Only the owner's own names and the shared (code) ones clash: another user's never
    do, so a 409 names nothing an outsider could not see anyway."""

    # One query for each kind (an import may hold thousands); one per suggestion.
    agents_taken = set(
        Agent.objects.namespace_of(owner)
        .filter(slug__in=[entry["slug"] for entry in agents])
        .values_list("slug", flat=True)
    )
    tools_taken = set(
        Tool.objects.namespace_of(owner)
        .filter(name__in=[tool["name"] for tool in tools])
        .values_list("name", flat=True)
    )

    def agent_taken(slug: str) -> bool:
        return slug in agents_taken or agent_slug_taken(owner=owner, slug=slug)

    def tool_taken(name: str) -> bool:
        return name in tools_taken or Tool.objects.namespace_of(owner).filter(name=name).exists()

    clashes = [
        {
            "kind": "agent",
            "name": entry["slug"],
            "path": f"$.document.agents[{index}].slug",
            "suggestion": _free_name(agent_taken, entry["slug"], "-"),
        }
        for index, entry in enumerate(agents)
        if entry["slug"] in agents_taken
    ] + [
        {
            "kind": "tool",
            "name": tool["name"],
            "path": f"$.document.tools[{index}].name",
            "suggestion": _free_name(tool_taken, tool["name"], "_"),
        }
        for index, tool in enumerate(tools)
        if tool["name"] in tools_taken
    ]
    if clashes:
        names = ", ".join(repr(c["name"]) for c in clashes)
        raise Conflict(
            f"Already taken: {names}. Import again with `renames` "
            '({"agents": {old: new}, "tools": {old: new}}) to create them under new names.',
            code="name_clash",
            extra={"clashes": clashes},
        )


def import_size(document: Any) -> int:
    """How many agents and tools the document holds (what an import's progress counts);
    a document of the wrong shape is refused with the path of the problem."""
    agents, tools = check_shape(document)
    return len(agents) + len(tools)


def agent_import(
    *,
    owner: Any,
    document: Any,
    renames: dict[str, Any] | None = None,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Create the document's studio tools and agents with their bindings, all or nothing.

    Returns what was (or, with `dry_run`, would be) created. A slug or tool name already
    taken is refused (409, `clashes` with a free name to suggest for each); `renames` maps
    old names to new ones. Every other problem is a 400 naming its JSON path. `progress`
    is called with the count of tools created and agents created and bound so far.
    """
    if renames is not None and not isinstance(renames, dict):
        raise document_problem("$.renames", "must be an object.")
    agents, tools = validated_entries(*renamed_entries(document, renames or {}))
    _check_clashes(owner=owner, agents=agents, tools=tools)
    plan = {
        "agent": agents[0]["slug"],
        "agents": [
            {
                "slug": entry["slug"],
                "name": entry["name"],
                "tools": [b.get("key") or b.get("tool") for b in entry["tools"]],
                "subagents": [b.get("key") or b.get("agent") for b in entry["subagents"]],
            }
            for entry in agents
        ],
        "tools": [tool["name"] for tool in tools],
    }
    try:
        with transaction.atomic():
            created = _create_all(
                owner=owner, agents=agents, tools=tools, progress=progress or _no_progress
            )
            for name, (_, load) in SECTIONS.items():
                if name in document:
                    load(
                        agent=created, owner=owner, value=document[name], path=f"$.document.{name}"
                    )
            if dry_run:
                raise _Preview
    except _Preview:
        pass
    return plan


def _no_progress(done: int) -> None:
    return None


def _create_all(
    *, owner: Any, agents: list[dict], tools: list[dict], progress: Callable[[int], None]
) -> Agent:
    """Create everything; returns the document's first (the exported) agent. An agent is
    created with its tool bindings (the tools exist by then); sub-agent bindings follow
    once every agent exists."""

    for count, tool in enumerate(tools, start=1):
        tool_create(owner=owner, **tool)
        progress(count)
    created = []
    for index, entry in enumerate(agents):
        fields = {k: v for k, v in entry.items() if k not in ("tools", "subagents")}
        created.append(agent_create(owner=owner, **fields))
        _bind(owner=owner, agent=created[-1], entry=entry, path=f"$.document.agents[{index}]")
        progress(len(tools) + index + 1)
    for index, (agent, entry) in enumerate(zip(created, agents, strict=True)):
        _bind(
            owner=owner,
            agent=agent,
            entry=entry,
            path=f"$.document.agents[{index}]",
            subagents=True,
        )
    return created[0]


def _bind(
    *, owner: Any, agent: Agent, entry: dict[str, Any], path: str, subagents: bool = False
) -> None:
    """The agent's tool bindings, or with `subagents` its sub-agent bindings."""
    step: tuple[str, type[Serializer], BindingKind] = (
        ("subagents", SubAgentInputSerializer, SUBAGENT)
        if subagents
        else ("tools", ToolBindingInputSerializer, TOOL)
    )
    key, serializer_class, kind = step
    for index, binding in enumerate(entry[key]):
        where = f"{path}.{key}[{index}]"
        serializer = serializer_class(data=binding)
        if not serializer.is_valid():
            raise invalid_document(document_errors(serializer.errors, where))
        data = dict(serializer.validated_data)
        target = data.pop(kind.target_field)
        try:
            binding_create(kind=kind, agent=agent, user=owner, target=target, lock_id=None, **data)
        except ValidationError as exc:
            raise invalid_document(document_errors(exc.message_dict, where)) from exc


def agent_duplicate(*, agent: Agent, owner: Any, slug: str, name: str) -> Agent:
    """A studio copy of any agent the owner can see (code agents included): the same
    settings, bound to the same tools and sub-agents."""
    if agent_slug_taken(owner=owner, slug=slug):
        raise ValidationError({"slug": slug_taken(slug)})
    document = agent_document(agent=agent, deep=False)
    document["agents"][0].update(slug=slug, name=name)
    agent_import(owner=owner, document=document)
    return Agent.objects.get(slug=slug, owner=owner)
