"""Line diffs of editor documents: a unified diff, and a per-line form for the UI."""

from __future__ import annotations

import difflib
import json
from typing import Any


def as_text(value: Any) -> str:
    """Strings stay as they are; anything else is shown as indented JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def line_diff(old: str, new: str, *, label: str = "") -> dict[str, Any]:
    """{"unified": "...", "lines": [{"op", "old", "new", "text"}]} with 1-based line numbers.

    `op` is "equal", "delete" (only in old) or "insert" (only in new); a replaced block
    shows its deletions before its insertions, as a reader expects.
    """
    old_lines, new_lines = old.splitlines(), new.splitlines()
    unified = "\n".join(
        difflib.unified_diff(
            old_lines, new_lines, fromfile=f"a/{label}", tofile=f"b/{label}", lineterm=""
        )
    )
    lines: list[dict[str, Any]] = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            lines += [
                {"op": "equal", "old": i1 + n + 1, "new": j1 + n + 1, "text": old_lines[i1 + n]}
                for n in range(i2 - i1)
            ]
            continue
        lines += [
            {"op": "delete", "old": i + 1, "new": None, "text": old_lines[i]} for i in range(i1, i2)
        ]
        lines += [
            {"op": "insert", "old": None, "new": j + 1, "text": new_lines[j]} for j in range(j1, j2)
        ]
    return {"unified": unified, "lines": lines}


def document_diff(
    before: dict[str, Any], after: dict[str, Any], *, code: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """One entry per changed field; dict fields (tool descriptions) diff per key.

    `code` holds a code agent's code values ({"instructions", "tool_descriptions"}): an
    override that appears is diffed against the code value it replaces, and one that goes
    away against the code value that comes back, so the diff shows what the editor changed
    rather than the whole text as new.
    """
    code = code or {}
    code_descriptions = code.get("tool_descriptions") or {}
    entries = []
    for field in sorted(set(before) | set(after)):
        old, new = before.get(field), after.get(field)
        if old == new:
            continue
        if field == "tool_descriptions":
            entries += _description_entries(old or {}, new or {}, code_descriptions)
            continue
        note = None
        if field == "instructions" and (old is None or new is None):
            # A code agent's override appearing or going away, not text typed from nothing.
            note = "override added" if old is None else "override removed: back to code"
            old = code.get("instructions") if old is None else old
            new = code.get("instructions") if new is None else new
        entry = {"field": field, **line_diff(as_text(old), as_text(new), label=field)}
        if note:
            entry["note"] = note
        entries.append(entry)
    return entries


def _description_entries(
    old: dict[str, Any], new: dict[str, Any], code: dict[str, Any]
) -> list[dict[str, Any]]:
    entries = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) == new.get(key):
            continue
        path = f"tool_descriptions.{key}"
        was = old[key] if key in old else code.get(key)
        now = new[key] if key in new else code.get(key)
        entry = {"field": path, **line_diff(as_text(was), as_text(now), label=path)}
        if key not in old or key not in new:
            entry["note"] = "override added" if key not in old else "back to code"
        entries.append(entry)
    return entries
