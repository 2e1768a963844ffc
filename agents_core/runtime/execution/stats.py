"""Process-wide counters of the runtime's own work (read by bench/streaming.py)."""

from __future__ import annotations

import json
import os
import threading
import time
from collections import defaultdict

_counters: dict[str, float] = defaultdict(float)
_written = [0.0, False]  # when the file was last written; whether a write is due
_lock = threading.Lock()
DUMP_SECONDS = 1.0


def add(name: str, value: float = 1.0) -> None:
    _counters[name] += value


def snapshot() -> dict[str, float]:
    return dict(_counters)


def dump() -> None:
    """Write the counters to $STUDIO_RUNTIME_STATS_FILE when it is set (benchmarks), at most
    once per DUMP_SECONDS: each run calls it when it ends, on the event loop, and a hundred
    runs ending together wrote the file a hundred times there. A call within the interval
    leaves the write to a timer thread at its end."""
    path = os.environ.get("STUDIO_RUNTIME_STATS_FILE")
    if not path:
        return
    with _lock:
        wait = _written[0] + DUMP_SECONDS - time.monotonic()
        if wait > 0:
            if not _written[1]:
                _written[1] = True
                timer = threading.Timer(wait, _write, (path,))
                timer.daemon = True
                timer.start()
            return
        _written[0] = time.monotonic()
    _write(path, due=False)


def _write(path: str, due: bool = True) -> None:
    with _lock:
        if due:
            _written[:] = [time.monotonic(), False]
        counters = snapshot()
    with open(path, "w") as handle:
        json.dump(counters, handle)
