"""The model side of bench.streaming: its local server's OpenAI and Anthropic streams read
through litellm's wrapper and on the run loop's fast path give the same text, tool-call
deltas, finish reason and usage, and the bench's measurement reads each path it names."""

from __future__ import annotations

import math
from typing import Any

import pytest
from aiohttp import web

from bench import _model_cpu, _sse_model


@pytest.fixture
async def bench_server():
    app = web.Application()
    app.router.add_post("/v1/chat/completions", _sse_model.completions)
    app.router.add_post("/v1/messages", _sse_model.messages)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/v1"
    await runner.cleanup()


def _shape(chunks: list[Any]) -> list[tuple]:
    out: list[tuple] = []
    for chunk in chunks:
        usage = getattr(chunk, "usage", None)
        if usage:
            out.append(("usage", usage.prompt_tokens, usage.completion_tokens))
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        if choice.delta.content:
            out.append(("text", choice.delta.content))
        for call in choice.delta.tool_calls or []:
            out.append(("tool", call.index, call.id, call.function.name, call.function.arguments))
        if choice.finish_reason:
            out.append(("finish", choice.finish_reason))
    return out


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
async def test_both_paths_read_the_same_stream(bench_server, protocol):
    import litellm

    from providers import fast_stream

    shapes = []
    for fast in (False, True):
        response = await _model_cpu._http_stream(bench_server, 40, 0, protocol)
        if fast:
            response = fast_stream.reader(response, litellm, _model_cpu.MESSAGES)
            assert isinstance(response, fast_stream.FastStream)
        shapes.append(_shape([chunk async for chunk in response]))
    wrapper, fast_path = shapes
    assert fast_path == wrapper
    assert [kind for kind, *_ in fast_path].count("text") == 20
    arguments = "".join(item[4] or "" for item in fast_path if item[0] == "tool")
    assert arguments.startswith('{"log": "0000020;') and arguments.endswith('0000039;"}')
    assert ("finish", "tool_calls") in fast_path and fast_path[-1][0] == "usage"


@pytest.mark.parametrize("path", ["wrapper", "fast", "transport"])
async def test_the_bench_measures_each_path(bench_server, path):
    us = await _model_cpu.litellm_http_us_per_chunk(bench_server, 20, "anthropic", path)
    assert math.isfinite(us) and us > 0
