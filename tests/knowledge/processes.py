"""The processes a test's worker started, read from /proc (no psutil here)."""

from __future__ import annotations

from pathlib import Path

PARSER = "knowledge.parsing.isolated"


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def parser_children(pid: int) -> list[int]:
    """The document parsers `pid` is running now (living, not yet reaped)."""
    parsers = []
    for child in children(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if PARSER.encode() in cmdline and state != "Z":
            parsers.append(child)
    return parsers


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
