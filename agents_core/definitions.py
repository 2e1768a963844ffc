"""The code-first API, mirroring Mastra's (docs/agents.md); the tool half lives in
tools_app.definitions and is re-exported here.

    from agents_core.definitions import Agent, create_tool

    weather = create_tool(
        id="weather_lookup",
        description="Current weather for a city",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                      "required": ["city"]},
        execute=lambda input, context: {"city": input["city"], "temp_c": 21},
    )
    assistant = Agent(id="assistant", name="Assistant", instructions="Be brief.",
                      tools={"weather": weather})

Put definitions in an installed app's `tools.py` / `agents.py` (or a module named in
settings.STUDIO_CODE_MODULES); they are discovered when Django starts and synced into
the database as code-owned rows (agents_core.registry).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from providers.catalog import fallback_problems, valid_model_string
from providers.model_endpoints import agent_model_errors
from providers.options import call_option_problems, message_option_problems
from tools_app.definitions import (
    DefinitionError,
    Schema,
    ToolDefinition,
    create_tool,
    fingerprint,
    schema_to_json_schema,
)

__all__ = [
    "Agent",
    "DefinitionError",
    "Schema",
    "ToolDefinition",
    "create_tool",
    "fingerprint",
    "schema_to_json_schema",
]

SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_EDITOR_KEYS = {"instructions", "tools"}


def validate_editor_policy(editor: Any) -> Any:
    """`None` (all editable), `False` (nothing), or {"instructions": bool, "tools": ...}."""
    if editor is None or editor is False:
        return editor
    if editor is True:
        return None
    if not isinstance(editor, Mapping):
        raise DefinitionError("editor must be False or a dict like {'instructions': True}.")
    unknown = set(editor) - _EDITOR_KEYS
    if unknown:
        raise DefinitionError(f"editor has unknown keys: {sorted(unknown)}")
    tools = editor.get("tools", False)
    if isinstance(tools, Mapping):
        if set(tools) - {"description"}:
            raise DefinitionError("editor['tools'] may only be a bool or {'description': bool}.")
    elif not isinstance(tools, bool):
        raise DefinitionError("editor['tools'] must be a bool or {'description': bool}.")
    if not isinstance(editor.get("instructions", False), bool):
        raise DefinitionError("editor['instructions'] must be a bool.")
    return dict(editor)


def _checked_options(message: Mapping, path: str) -> Mapping:
    """A system message whose providerOptions are all known (providers/options.py)."""
    problems = message_option_problems(message.get("providerOptions"), f"{path}.providerOptions")
    if problems:
        raise DefinitionError("; ".join(problems))
    return message


def validate_instructions(instructions: Any) -> Any:
    """A string, a list of strings, a system message, or a list of system messages."""

    def is_message(value: Any) -> bool:
        return (
            isinstance(value, Mapping)
            and value.get("role", "system") == "system"
            and isinstance(value.get("content"), str)
            and set(value) <= {"role", "content", "providerOptions"}
        )

    if isinstance(instructions, str):
        return instructions
    if is_message(instructions):
        return _checked_options(instructions, "$")
    if isinstance(instructions, list) and all(isinstance(item, str) for item in instructions):
        return instructions
    if isinstance(instructions, list) and all(is_message(item) for item in instructions):
        for index, item in enumerate(instructions):
            _checked_options(item, f"$[{index}]")
        return instructions
    raise DefinitionError(
        "instructions must be a string, a list of strings, a system message "
        "{role: 'system', content, providerOptions?}, or a list of system messages."
    )


@dataclass(eq=False)
class Agent:
    """An agent defined in code."""

    id: str
    name: str
    instructions: Any = ""
    model: str | None = None
    description: str = ""
    tools: dict[str, ToolDefinition] = field(default_factory=dict)
    agents: dict[str, Agent] = field(default_factory=dict)
    hooks: dict[str, Callable[..., Any]] = field(default_factory=dict)
    default_options: dict[str, Any] = field(default_factory=dict)
    editor: Any = None
    notification_policy: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not SLUG.match(self.id or ""):
            raise DefinitionError(f"Agent id {self.id!r} must be a slug (a-z, 0-9, - and _).")
        self.instructions = validate_instructions(self.instructions)
        self.editor = validate_editor_policy(self.editor)
        if self.model is not None and not valid_model_string(self.model):
            raise DefinitionError(f"Agent {self.id!r}: model must look like 'provider/model'.")
        for key, tool in self.tools.items():
            if not isinstance(tool, ToolDefinition):
                raise DefinitionError(f"Agent {self.id!r}: tools[{key!r}] is not a tool.")
        for key, agent in self.agents.items():
            if not isinstance(agent, Agent):
                raise DefinitionError(f"Agent {self.id!r}: agents[{key!r}] is not an Agent.")
        unknown_hooks = set(self.hooks) - {"before_tool_call", "after_tool_call"}
        if unknown_hooks:
            raise DefinitionError(f"Agent {self.id!r}: unknown hooks {sorted(unknown_hooks)}.")
        problems = call_option_problems(self.default_options.get("providerOptions"))
        problems += fallback_problems(self.default_options.get("fallbacks"))
        if problems:
            raise DefinitionError(f"Agent {self.id!r}: default_options {'; '.join(problems)}.")
        errors = agent_model_errors(
            model=self.resolved_model(),
            metadata=self.metadata,
            default_options=self.default_options,
        )
        if errors:
            details = "; ".join(
                f"{name} {text}" for name, texts in errors.items() for text in texts
            )
            raise DefinitionError(f"Agent {self.id!r}: its model call would be refused: {details}.")

    def resolved_model(self) -> str:
        from django.conf import settings

        return self.model or settings.STUDIO_DEFAULT_MODEL

    def fingerprint_data(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "instructions": self.instructions,
            "model": self.resolved_model(),
            "tools": {key: tool.id for key, tool in self.tools.items()},
            "agents": {key: agent.id for key, agent in self.agents.items()},
            "default_options": self.default_options,
            "editor": self.editor,
            "notification_policy": self.notification_policy
            if not callable(self.notification_policy)
            else "callable",
            "metadata": self.metadata,
        }
