"""Process-wide counters of the runtime's own work (read by bench/streaming.py)."""

from __future__ import annotations

import json
import os
from collections import defaultdict

_counters: dict[str, float] = defaultdict(float)


def add(name: str, value: float = 1.0) -> None:
    _counters[name] += value


def snapshot() -> dict[str, float]:
    return dict(_counters)


def dump() -> None:
    """Write the counters to $STUDIO_RUNTIME_STATS_FILE when it is set (benchmarks)."""
    path = os.environ.get("STUDIO_RUNTIME_STATS_FILE")
    if path:
        with open(path, "w") as handle:
            json.dump(snapshot(), handle)
