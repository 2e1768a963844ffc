"""A code tool the recovery tests load into their Celery workers (STUDIO_CODE_MODULES).

`rec_journal` appends what it sees (its idempotency key, its attempt, its process) to a
journal file named in its input, then sleeps: the tests kill its worker mid-sleep, or
check that nobody else starts it while it sleeps.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from agents_core.definitions import create_tool


def _journal(data: dict[str, Any], context: Any) -> dict[str, Any]:
    entry = {"key": context.idempotency_key, "attempt": context.attempt, "pid": os.getpid()}
    with open(data["journal"], "a") as journal:
        journal.write(json.dumps({**entry, "event": "start"}) + "\n")
    time.sleep(data["sleep"])
    with open(data["journal"], "a") as journal:
        journal.write(json.dumps({**entry, "event": "end"}) + "\n")
    return {"key": context.idempotency_key, "attempt": context.attempt}


rec_journal = create_tool(
    id="rec_journal",
    description="Writes its idempotency key and attempt to a journal, then sleeps.",
    execution_mode="async",
    timeout=60,
    input_schema={
        "type": "object",
        "properties": {"journal": {"type": "string"}, "sleep": {"type": "number"}},
        "required": ["journal", "sleep"],
    },
    execute=_journal,
)


def journal_entries(path: str, event: str = "start") -> list[dict[str, Any]]:
    if not os.path.exists(path):
        return []
    with open(path) as journal:
        entries = [json.loads(line) for line in journal if line.strip()]
    return [entry for entry in entries if entry["event"] == event]
