"""The agent bench.streaming chats with (loaded through STUDIO_CODE_MODULES, which also
gives the processes that execute its runs the offline provider's `stamp` mode)."""

from __future__ import annotations

import bench.offline_stamps  # noqa: F401 - registers the offline provider's `stamp` mode
from agents_core.definitions import Agent, create_tool

bench_sink = create_tool(
    id="bench_sink",
    description="Receives a long log (benchmarks).",
    input_schema={"type": "object", "properties": {"log": {"type": "string"}}, "required": ["log"]},
    execute=lambda data, context=None: {"ok": True, "chars": len(data["log"])},
)

bench_streamer = Agent(
    id="bench-streamer",
    name="Bench streamer",
    model="studio/scripted",
    instructions="Stream.",
    tools={"bench_sink": bench_sink},
    default_options={"maxSteps": 2},
)
