"""The offline provider's benchmark mode, `stamp`: each delta carries `<index>@<unix
time>;`, the time the provider yielded it, so a client can measure each delta's latency.

Importing this module registers the mode (providers.offline.MODES). The
processes a benchmark starts import it through STUDIO_CODE_MODULES
(bench/_streaming_agent.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from litellm.types.utils import GenericStreamingChunk

from providers.offline import MODES, Mode, _call_id, _chunk
from providers.offline_script import _tool_names


class _Stamp:
    """Benchmarks: each delta carries `<index>@<unix time>;` so a client can measure latency."""

    def __init__(self) -> None:
        self.index = 0

    def __call__(self) -> str:
        self.index += 1
        return f"{self.index:07d}@{time.time():.6f};"


_STAMP_INDEX = len("0000000@")


def _restamped(text: str) -> str:
    return text[:_STAMP_INDEX] + f"{time.time():.6f};" if text[7:8] == "@" else text


def _restamp(chunk: GenericStreamingChunk) -> GenericStreamingChunk:
    """Benchmarks: a delta's time is when the provider yields it, not when it was made
    (before the wait that sets the rate). A stamp is a whole delta (see `_bench_chunks`)."""
    chunk["text"] = _restamped(chunk["text"])
    if chunk["tool_use"]:
        function = chunk["tool_use"]["function"]
        function["arguments"] = _restamped(function["arguments"])
    return chunk


def _bench_chunks(
    messages: list[dict[str, Any]], params: dict[str, Any]
) -> Iterator[GenericStreamingChunk]:
    """Benchmarks: `stamp` deltas, half as text and half as the argument of the first tool."""
    count = int(params.get("stamp"))
    tools = _tool_names(params.get("tools"))
    after_tools = messages and messages[-1].get("role") == "tool"
    stamp = _Stamp()
    # Like a real provider, each stream ends with its usage (one token per delta).
    if after_tools:
        yield _chunk("done.")
        yield _chunk(finish="stop", usage=_usage(1))
        return
    if not tools:
        for _ in range(count):
            yield _chunk(stamp())
        yield _chunk(finish="stop", usage=_usage(count))
        return
    for _ in range(count // 2):
        yield _chunk(stamp())
    name = next(iter(tools))
    call_id = _call_id(messages, 0)
    yield _chunk(
        tool_use={
            "id": call_id,
            "type": "function",
            "index": 0,
            "function": {"name": name, "arguments": '{"log": "'},
        }
    )
    for _ in range(count - count // 2):
        yield _chunk(
            tool_use={
                "id": None,
                "type": "function",
                "index": 0,
                "function": {"name": None, "arguments": stamp()},
            }
        )
    yield _chunk(
        tool_use={
            "id": None,
            "type": "function",
            "index": 0,
            "function": {"name": None, "arguments": '"}'},
        }
    )
    yield _chunk(finish="tool_calls", usage=_usage(count))


def _usage(completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": 1,
        "completion_tokens": completion_tokens,
        "total_tokens": completion_tokens + 1,
    }


MODES["stamp"] = Mode(chunks=_bench_chunks, on_yield=_restamp)
