"""Who owns each field of an agent: code, or the editor (docs/editor.md).

`field_ownership` is the one decision. The admin, the studio page, the REST API and the
run (agents_core.overrides) all ask it, so a field is never editable on one surface and
code-owned on another.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CODE = "code"
EDITOR = "editor"

# Every field an editor surface knows about. "tools" is tool membership (which tools the
# agent has); "tool_descriptions" the descriptions the model sees for them.
FIELDS = ("id", "name", "description", "model", "instructions", "tools", "tool_descriptions")
# What a code agent's editor policy can open; the rest always comes from code.
POLICY_FIELDS = ("instructions", "tools", "tool_descriptions")
# A studio agent is its owner's, but its id stays fixed: URLs, threads and runs name it.
STUDIO_FIXED = ("id",)


def _policy_grants(policy: Any) -> set[str]:
    """The fields an `editor` policy opens on a code agent."""
    if policy is None or policy is True:
        return {"instructions", "tools", "tool_descriptions"}
    if policy is False or not isinstance(policy, Mapping):
        return set()
    granted = set()
    if policy.get("instructions") is True:
        granted.add("instructions")
    tools = policy.get("tools", False)
    if tools is True:
        granted |= {"tools", "tool_descriptions"}
    elif isinstance(tools, Mapping) and tools.get("description") is True:
        granted.add("tool_descriptions")
    return granted


def field_ownership(agent: Any) -> dict[str, str]:
    """{field: "code" | "editor"} for every field in FIELDS.

    `agent` is an Agent row (anything with `is_code` and `editor_policy`).
    """
    if not agent.is_code:
        return {name: CODE if name in STUDIO_FIXED else EDITOR for name in FIELDS}
    granted = _policy_grants(agent.editor_policy)
    return {name: EDITOR if name in granted else CODE for name in FIELDS}


def is_editable(agent: Any, field: str) -> bool:
    return field_ownership(agent).get(field) == EDITOR
