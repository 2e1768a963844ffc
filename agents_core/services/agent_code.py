"""An agent's export document as a Python module that uses the code-first API
(agents_core.definitions): put it in an installed app's `agents.py` or name it in
STUDIO_CODE_MODULES, and the studio syncs the same agent as a code agent.

Code tools and code agents are imported from the module that defines them; studio tools
become `create_tool(kind=..., config=...)` definitions and studio sub-agents `Agent(...)`
definitions. What the code-first API cannot say (a binding's description override, a
requires-approval flag that differs from a code tool's own, a studio tool's model-output
settings) is listed in a comment at the top of the module.
"""

from __future__ import annotations

import importlib
import keyword
import pprint
import re
import sys
from typing import Any

from agents_core.services.agent_io import AGENT_KEYS

_IDENTIFIER = re.compile(r"[^0-9a-zA-Z_]")


def _literal(value: Any, indent: int) -> str:
    text = pprint.pformat(value, width=max(40, 96 - indent), sort_dicts=False)
    return text.replace("\n", "\n" + " " * indent)


def _variable(name: str, taken: set[str]) -> str:
    base = _IDENTIFIER.sub("_", name) or "item"
    if base[0].isdigit() or keyword.iskeyword(base):
        base = f"_{base}"
    candidate, number = base, 2
    while candidate in taken:
        candidate, number = f"{base}_{number}", number + 1
    taken.add(candidate)
    return candidate


def _defining_module(definition: Any) -> tuple[str, str] | None:
    """(module, variable) of a module-level name bound to `definition`."""
    from agents_core.registry import discover_module_names

    execute = getattr(definition, "execute", None)
    names = [getattr(execute, "__module__", None), *discover_module_names()]
    names += [name for name in list(sys.modules) if name not in names]
    for module_name in names:
        if not module_name:
            continue
        module = sys.modules.get(module_name)
        if module is None:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue
        for variable, value in vars(module).items():
            if value is definition and not variable.startswith("_"):
                return module_name, variable
    return None


def _call(function: str, arguments: dict[str, Any]) -> str:
    lines = [f"{function}("]
    for name, value in arguments.items():
        lines.append(f"    {name}={value if isinstance(value, _Code) else _literal(value, 4)},")
    return "\n".join([*lines, ")"])


class _Code(str):
    """Python source to put in a call as it is (a variable), not as a literal."""


def agent_python(document: dict[str, Any]) -> str:
    """The module text for an export document (agents_core.services.agent_io)."""
    from agents_core.registry import get_agent_definition, get_tool_definition

    taken: set[str] = {"Agent", "create_tool"}
    imports: dict[str, list[str]] = {}
    notes: list[str] = []
    tool_vars: dict[str, str] = {}
    blocks: list[str] = []
    studio_tools = {tool["name"]: tool for tool in document.get("tools", [])}
    for name, tool in studio_tools.items():
        tool_vars[name] = _variable(name, taken)
        arguments = {
            "id": name,
            "description": tool["description"],
            "kind": tool["kind"],
            "input_schema": tool["input_schema"],
            "output_schema": tool["output_schema"],
            "execution_mode": tool["execution_mode"],
            "timeout": tool["timeout_seconds"],
            "config": tool["config"],
            "requires_approval": _approval(document, name),
        }
        if tool.get("model_output"):
            notes.append(f"tool {name!r}: its model_output settings {tool['model_output']!r}")
        blocks.append(f"{tool_vars[name]} = {_call('create_tool', arguments)}")

    def imported(definition: Any, what: str) -> str:
        found = _defining_module(definition)
        if found is None:
            raise LookupError(f"The code {what} is not bound to a module-level name.")
        module, variable = found
        imports.setdefault(module, []).append(variable)
        taken.add(variable)
        return variable

    agent_vars: dict[str, str] = {}
    studio_slugs = {entry["slug"] for entry in document["agents"]}
    for entry in reversed(document["agents"]):  # sub-agents are defined before their parents
        tools: dict[str, str] = {}
        for binding in entry["tools"]:
            name = binding["tool"]
            if name not in tool_vars:
                definition = get_tool_definition(name)
                if definition is None:
                    raise LookupError(f"No code tool named {name!r}.")
                tool_vars[name] = imported(definition, f"tool {name!r}")
                if binding["requires_approval"] != definition.requires_approval:
                    notes.append(
                        f"{entry['slug']}: requires_approval of tool key {binding['key']!r}"
                    )
            if binding["description_override"]:
                notes.append(f"{entry['slug']}: the description override of {binding['key']!r}")
            tools[binding["key"]] = _Code(tool_vars[name])
        agents: dict[str, str] = {}
        for binding in entry["subagents"]:
            slug = binding["agent"]
            if slug not in agent_vars and slug not in studio_slugs:
                agent_definition = get_agent_definition(slug)
                if agent_definition is None:
                    raise LookupError(f"No code agent with the slug {slug!r}.")
                agent_vars[slug] = imported(agent_definition, f"agent {slug!r}")
            if binding["description_override"]:
                notes.append(f"{entry['slug']}: the description override of agent-{binding['key']}")
            agents[binding["key"]] = _Code(agent_vars[slug])
        agent_vars[entry["slug"]] = _variable(entry["slug"], taken)
        agent_arguments: dict[str, Any] = {"id": entry["slug"]}
        agent_arguments.update({key: entry[key] for key in AGENT_KEYS})
        agent_arguments["tools"] = _Code(_mapping(tools))
        agent_arguments["agents"] = _Code(_mapping(agents))
        blocks.append(f"{agent_vars[entry['slug']]} = {_call('Agent', agent_arguments)}")
    return _module(document, imports, notes, blocks)


def _approval(document: dict[str, Any], tool_name: str) -> bool:
    flags = [
        binding["requires_approval"]
        for entry in document["agents"]
        for binding in entry["tools"]
        if binding["tool"] == tool_name
    ]
    return any(flags)


def _mapping(values: dict[str, str]) -> str:
    if not values:
        return "{}"
    body = "".join(f"\n        {key!r}: {variable}," for key, variable in values.items())
    return "{" + body + "\n    }"


def _module(
    document: dict[str, Any], imports: dict[str, list[str]], notes: list[str], blocks: list[str]
) -> str:
    head = [
        f'"""Agent {document["agent"]!r}, exported from Agent Studio as code-first definitions."""'
    ]
    if notes:
        head.append("")
        head.append("# The code-first API cannot express these, so they are left out:")
        head += [f"# - {note}" for note in notes]
    head += ["", "from agents_core.definitions import Agent, create_tool"]
    for module in sorted(imports):
        head.append(f"from {module} import {', '.join(sorted(set(imports[module])))}")
    return "\n".join(head) + "\n\n" + "\n\n".join(blocks) + "\n"
