"""Checks of an export document before anything is created (agents_core/services/agent_io.py):
its shape, renames applied to every reference, and each entry validated by the serializers
of the REST API, every problem with its JSON path."""

from __future__ import annotations

from typing import Any

from agents_core.serializers import AgentInputSerializer
from common.exceptions import ApplicationError
from tools_app.serializers import ToolInputSerializer

FORMAT = "agent-studio.agent"
VERSION = 1


def document_problem(path: str, message: str) -> ApplicationError:
    return ApplicationError(
        f"{path}: {message}",
        code="invalid_document",
        extra={"errors": [{"path": path, "message": message}]},
    )


def document_errors(errors: Any, path: str) -> list[dict[str, str]]:
    if isinstance(errors, dict):
        return [
            item
            for key, value in errors.items()
            for item in document_errors(
                value, path if key == "non_field_errors" else f"{path}.{key}"
            )
        ]
    if isinstance(errors, list) and errors and not isinstance(errors[0], dict | list):
        return [{"path": path, "message": str(message)} for message in errors]
    if isinstance(errors, list):
        return [
            item
            for index, value in enumerate(errors)
            for item in document_errors(value, f"{path}[{index}]")
        ]
    return [{"path": path, "message": str(errors)}]


def invalid_document(errors: list[dict[str, str]]) -> ApplicationError:
    first = errors[0]
    return ApplicationError(
        f"{first['path']}: {first['message']}", code="invalid_document", extra={"errors": errors}
    )


def list_of_objects(document: dict[str, Any], key: str, *, required: bool) -> list[dict]:
    value = document.get(key, None if required else [])
    if not isinstance(value, list) or (required and not value):
        raise document_problem(
            f"$.document.{key}", "must be a non-empty list." if required else "must be a list."
        )
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise document_problem(f"$.document.{key}[{index}]", "must be an object.")
    return value


def check_shape(document: Any) -> tuple[list[dict], list[dict]]:
    if not isinstance(document, dict):
        raise document_problem("$.document", "must be an exported agent (a JSON object).")
    if document.get("format") != FORMAT:
        raise document_problem(
            "$.document.format", f"must be {FORMAT!r}: export an agent to get one."
        )
    if document.get("version") != VERSION:
        raise document_problem("$.document.version", f"must be {VERSION}.")
    agents = list_of_objects(document, "agents", required=True)
    tools = list_of_objects(document, "tools", required=False)
    for index, entry in enumerate(agents):
        for key in ("tools", "subagents"):
            if not isinstance(entry.get(key, []), list) or not all(
                isinstance(item, dict) for item in entry.get(key, [])
            ):
                raise document_problem(
                    f"$.document.agents[{index}].{key}", "must be a list of objects."
                )
    return agents, tools


def renamed_entries(document: dict[str, Any], renames: dict[str, Any]) -> tuple[list, list]:
    """The document's agents and tools with `renames` ({"agents": {old: new}, "tools":
    {old: new}}) applied to their names and to every reference to them."""
    agents, tools = check_shape(document)
    agent_names = renames.get("agents") or {}
    tool_names = renames.get("tools") or {}
    for what, mapping in (("agents", agent_names), ("tools", tool_names)):
        if not isinstance(mapping, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()
        ):
            raise document_problem(f"$.renames.{what}", "must map old names to new names.")
    agents = [
        {
            **entry,
            "slug": agent_names.get(entry.get("slug"), entry.get("slug")),
            "tools": [
                {**b, "tool": tool_names.get(b.get("tool"), b.get("tool"))}
                for b in entry.get("tools", [])
            ],
            "subagents": [
                {**b, "agent": agent_names.get(b.get("agent"), b.get("agent"))}
                for b in entry.get("subagents", [])
            ],
        }
        for entry in agents
    ]
    tools = [{**tool, "name": tool_names.get(tool.get("name"), tool.get("name"))} for tool in tools]
    return agents, tools


def validated_entries(agents: list[dict], tools: list[dict]) -> tuple[list[dict], list[dict]]:

    errors: list[dict[str, str]] = []
    clean_agents, clean_tools = [], []
    for index, entry in enumerate(agents):
        fields = {k: v for k, v in entry.items() if k not in ("tools", "subagents")}
        serializer = AgentInputSerializer(data=fields)
        if serializer.is_valid():
            clean_agents.append({**serializer.validated_data, **binding_lists(entry)})
        else:
            errors += document_errors(serializer.errors, f"$.document.agents[{index}]")
    for index, entry in enumerate(tools):
        tool_serializer = ToolInputSerializer(
            data={k: v for k, v in entry.items() if k != "credentials"}
        )
        if tool_serializer.is_valid():
            clean_tools.append(tool_serializer.validated_data)
        else:
            errors += document_errors(tool_serializer.errors, f"$.document.tools[{index}]")
    if errors:
        raise invalid_document(errors)
    return clean_agents, clean_tools


def binding_lists(entry: dict[str, Any]) -> dict[str, Any]:
    return {"tools": entry.get("tools", []), "subagents": entry.get("subagents", [])}
