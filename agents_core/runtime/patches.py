"""Patch lists (what IncrementalJSONParser.feed returns, runtime/partial_json.py): merged
when deltas are coalesced into one event, compacted before an event is stored."""

from __future__ import annotations

from typing import Any


def merge_patches(into: list[dict[str, Any]], patches: list[dict[str, Any]]) -> None:
    """Append `patches` to `into`, joining an append that continues the previous patch's string.

    Used when several deltas are coalesced into one event; equal paths are compared by
    value only when the last patch is a string, so the check stays cheap.
    """
    for patch in patches:
        if into and patch["op"] == "append":
            last = into[-1]
            if isinstance(last["value"], str) and (
                last["path"] is patch["path"] or last["path"] == patch["path"]
            ):
                last["value"] += patch["value"]
                continue
        into.append(dict(patch))


def compact_patches(patches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same changes in fewer bytes: a patch inside a container that an earlier patch
    of the list set is applied to that container's value, consecutive appends to one string
    are joined, and a set that follows a set of the same path replaces it. Applying the
    result in order gives what applying `patches` in order gives. (Mutates the values of
    container sets, which belong to these patches only.)"""
    out: list[dict[str, Any]] = []
    containers: dict[tuple, Any] = {}
    for patch in patches:
        path, op, value = patch["path"], patch["op"], patch["value"]
        parent = containers.get(tuple(path[:-1])) if path else None
        if parent is not None:
            key = path[-1]
            if op == "set":
                if isinstance(parent, list) and key == len(parent):
                    parent.append(value)
                else:
                    parent[key] = value
            else:
                parent[key] = parent[key] + value
        elif (
            out
            and out[-1]["path"] == path
            and (
                op == "set"
                or (out[-1]["op"] in ("set", "append") and isinstance(out[-1]["value"], str))
            )
        ):
            last = out[-1]
            if op == "set":
                last["op"], last["value"] = "set", value
            else:
                last["value"] += value
        else:
            out.append({"op": op, "path": path, "value": value})
        if op == "set":
            containers.pop(tuple(path), None)
            if isinstance(value, dict | list):
                containers[tuple(path)] = value
    return out
