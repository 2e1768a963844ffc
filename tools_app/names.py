"""Tool names the studio keeps for itself (no Django imports: code definitions use it
before the app registry is ready)."""

from __future__ import annotations

# The studio's own pages use these (/tools/new/ creates a tool): no tool may take them.
RESERVED_TOOL_NAMES = frozenset({"new"})
RESERVED_MESSAGE = "{name!r} is reserved by the studio (its page /tools/new/); choose another name."
