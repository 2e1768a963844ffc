"""A model server on 127.0.0.1 for bench.streaming, speaking OpenAI's chat completions
(`/v1/chat/completions`) and Anthropic's Messages (`/v1/messages`): it streams `n` chunks
as server-sent events, half text and half the arguments of one tool call, one write per
chunk (each reaches the client as its own read, as a real model's do). OpenAI's end with
the usage when `stream_options.include_usage` asks for it, then `[DONE]`; Anthropic's carry
theirs in message_start and message_delta, then message_stop.

    python -m bench._sse_model <port>

bench.streaming starts it as a process of its own, so that the CPU it measures in its own
process is the client's alone: litellm's over the real HTTP path, as the run loop reads
an `openai/...` model.
"""

from __future__ import annotations

import asyncio
import json
import sys

from aiohttp import web

GAP = 0.001  # seconds between chunks: each arrives alone, and wakes the client, as a real one
# A request may ask for its own gap ("gap" in the body: litellm's extra_body): bench.streaming
# paces the streams it measures litellm with as the chats it compares them with are paced.


def _event(delta: dict | None, finish: str | None = None, **extra: object) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "bench",
        "choices": choices,
        **extra,
    }
    return f"data: {json.dumps(body)}\n\n".encode()


def events(n: int, include_usage: bool) -> list[bytes]:
    out = [_event({"role": "assistant", "content": f"{i:07d};"}) for i in range(n // 2)]
    out.append(
        _event(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_bench",
                        "type": "function",
                        "function": {"name": "bench_sink", "arguments": '{"log": "'},
                    }
                ]
            }
        )
    )
    out += [
        _event({"tool_calls": [{"index": 0, "function": {"arguments": f"{i:07d};"}}]})
        for i in range(n // 2, n)
    ]
    out.append(_event({"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}))
    out.append(_event({}, "tool_calls"))
    if include_usage:  # as OpenAI does: a last chunk with no choices
        out.append(
            _event(None, usage={"prompt_tokens": 1, "completion_tokens": n, "total_tokens": n + 1})
        )
    out.append(b"data: [DONE]\n\n")
    return out


def _anthropic_event(name: str, **data: object) -> bytes:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()


def anthropic_events(n: int) -> list[bytes]:
    """The same answer as `events` in Anthropic's stream: a text block, then a tool_use
    block whose input arrives in input_json_delta pieces."""
    message = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "bench",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    text = {"type": "text", "text": ""}
    tool = {"type": "tool_use", "id": "toolu_bench", "name": "bench_sink", "input": {}}

    def delta(index: int, kind: str, key: str, value: str) -> bytes:
        body = {"type": kind, key: value}
        return _anthropic_event("content_block_delta", index=index, delta=body)

    out = [
        _anthropic_event("message_start", message=message),
        _anthropic_event("content_block_start", index=0, content_block=text),
    ]
    out += [delta(0, "text_delta", "text", f"{i:07d};") for i in range(n // 2)]
    out.append(_anthropic_event("content_block_stop", index=0))
    out.append(_anthropic_event("content_block_start", index=1, content_block=tool))
    out.append(delta(1, "input_json_delta", "partial_json", '{"log": "'))
    out += [delta(1, "input_json_delta", "partial_json", f"{i:07d};") for i in range(n // 2, n)]
    out.append(delta(1, "input_json_delta", "partial_json", '"}'))
    out.append(_anthropic_event("content_block_stop", index=1))
    out.append(
        _anthropic_event(
            "message_delta",
            delta={"stop_reason": "tool_use", "stop_sequence": None},
            usage={"output_tokens": n},
        )
    )
    out.append(_anthropic_event("message_stop"))
    return out


async def _stream(request: web.Request, anthropic: bool) -> web.StreamResponse:
    body = await request.json()
    n = int(body.get("max_tokens") or 100)  # the chunks to stream
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    gap = float(body.get("gap", GAP))
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for event in anthropic_events(n) if anthropic else events(n, include_usage):
        await response.write(event)
        await asyncio.sleep(gap)
    await response.write_eof()
    return response


async def completions(request: web.Request) -> web.StreamResponse:
    return await _stream(request, anthropic=False)


async def messages(request: web.Request) -> web.StreamResponse:
    return await _stream(request, anthropic=True)


def main() -> None:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_post("/v1/messages", messages)
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)


if __name__ == "__main__":
    main()
