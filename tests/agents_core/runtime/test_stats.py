"""The runtime's counters file (benchmarks): written at most once per DUMP_SECONDS, the
last counters never lost."""

from __future__ import annotations

import json
import time

from agents_core.runtime.execution import stats


def test_many_dumps_write_once_then_once_more_with_the_latest_counters(tmp_path, monkeypatch):
    path = tmp_path / "stats.json"
    monkeypatch.setenv("STUDIO_RUNTIME_STATS_FILE", str(path))
    monkeypatch.setattr(stats, "DUMP_SECONDS", 0.2)
    monkeypatch.setattr(stats, "_written", [0.0, False])
    writes: list[float] = []
    original = stats._write

    def counting(*args, **kwargs) -> None:
        writes.append(json.loads(path.read_text())["test-dumps"] if path.exists() else 0)
        original(*args, **kwargs)

    monkeypatch.setattr(stats, "_write", counting)
    base = stats.snapshot().get("test-dumps", 0)
    for _ in range(50):  # a hundred runs ending together, as it were
        stats.add("test-dumps")
        stats.dump()
    assert len(writes) == 1  # the first at once, the rest left to the timer
    assert json.loads(path.read_text())["test-dumps"] == base + 1
    deadline = time.monotonic() + 5
    while len(writes) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.05)
    assert len(writes) == 2
    assert json.loads(path.read_text())["test-dumps"] == base + 50
