"""Patch lists (what IncrementalJSONParser.feed returns, runtime/run/partial_json.py), and the
deltas a run produces within one pass of its event loop joined into one event
(runtime/bus/events.py): their texts concatenated, their patches merged, then compacted before
the event is numbered, sent and stored."""

from __future__ import annotations

import copy
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
        copied = dict(patch)
        if isinstance(copied["value"], dict | list):
            # compact_patches fills container values in place: this list gets its own.
            copied["value"] = copy.copy(copied["value"])
        into.append(copied)


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


def join_delta(held: dict[str, Any], event: dict[str, Any]) -> bool:
    """Fold the delta `event` into `held` (the delta before it, not sent yet) when both
    continue one thing: text of one step of the run, or the input of one tool call. Returns
    whether it did. `held` becomes the joined event (its sender does not keep it); its
    first join gives it a patch list of its own, so the lists the parser returned (which
    the tool's `on_input_delta` hook saw) stay as they were."""
    kind = event["type"]
    if kind != held["type"] or held.get("hidden") or event.get("hidden"):
        return False
    if kind == "text-delta":
        if event.get("step") != held.get("step") or event.keys() != held.keys():
            return False
        held["textDelta"] += event["textDelta"]
        return True
    if kind != "tool-input-delta" or event["toolCallId"] != held["toolCallId"]:
        return False
    if "argsTextDelta" in held and "argsTextDelta" in event:
        held["argsTextDelta"] += event["argsTextDelta"]
        if "_joined" not in held:
            own: list[dict[str, Any]] = []
            merge_patches(own, held["patches"])
            held["patches"], held["_joined"] = own, True
        merge_patches(held["patches"], event["patches"])
        return True
    if held.get("transformed") and event.get("transformed"):
        # Each carries the whole display value (one set of the root): the last is current.
        held["patches"] = event["patches"]
        return True
    return False


def sendable_delta(held: dict[str, Any]) -> dict[str, Any]:
    """The held delta as it is sent: joined patches compacted."""
    if held.pop("_joined", False):
        held["patches"] = compact_patches(held["patches"])
    return held
