"""The two protocols the run loop's fast path reads (runtime/fast_stream.py), parsed from
the provider's server-sent events into the chunks the loop reads of litellm's: OpenAI's
chat completions and Anthropic's Messages, as litellm maps each (its finish reasons, its
usage, its Anthropic tool names, the errors the openai SDK raises)."""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx

_loads = json.loads


class Function:
    __slots__ = ("arguments", "name")

    def __init__(self, name: str | None, arguments: str | None) -> None:
        self.name = name
        self.arguments = arguments


class ToolCallDelta:
    __slots__ = ("function", "id", "index")

    def __init__(self, index: int, call_id: str | None, function: Function) -> None:
        self.index = index
        self.id = call_id
        self.function = function


class Delta:
    __slots__ = ("content", "tool_calls")

    def __init__(self, content: str | None, tool_calls: list[ToolCallDelta] | None) -> None:
        self.content = content
        self.tool_calls = tool_calls


class Choice:
    __slots__ = ("delta", "finish_reason")

    def __init__(self, delta: Delta, finish_reason: str | None) -> None:
        self.delta = delta
        self.finish_reason = finish_reason


class Chunk:
    """One chunk as the run loop reads it (the attributes it reads of litellm's)."""

    __slots__ = ("choices", "model", "usage")

    def __init__(self, choices: list[Choice], model: str | None, usage: Any = None) -> None:
        self.choices = choices
        self.model = model
        self.usage = usage


async def sse_data(http: Any) -> AsyncIterator[bytes]:
    """The data of each server-sent event of `http`'s body (its `data:` lines joined)."""
    buffer = b""
    data: list[bytes] = []
    async for raw in http.aiter_raw():
        buffer += raw
        if b"\n" not in raw:
            continue
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if data:
                    yield data[0] if len(data) == 1 else b"\n".join(data)
                    data = []
            elif line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
    if buffer.endswith(b"\r"):
        buffer = buffer[:-1]
    if buffer.startswith(b"data:"):
        data.append(buffer[5:].lstrip(b" "))
    if data:
        yield b"\n".join(data)


async def openai_chunks(stream: Any, events: AsyncIterator[bytes]) -> AsyncIterator[Chunk]:
    """`stream`: the FastStream being read (its wrapper, response, model, `finished`,
    `usage`). OpenAI's chunks: `data: {...}` per chunk, `data: [DONE]` at the end. An event with
    an `error` raises what the openai SDK raises for it (litellm then maps it)."""
    model: str | None = stream.model
    usage = None
    text: list[str] = []
    async for data in events:
        if data.startswith(b"[DONE]"):
            break
        event = _loads(data)
        if isinstance(event, dict) and event.get("error"):
            raise _openai_error(stream.http, event)
        model = event.get("model") or model
        if event.get("usage"):
            usage = event["usage"]
        choices = event.get("choices")
        if not choices:
            continue
        choice = choices[0]
        delta = choice.get("delta") or {}
        content = delta.get("content")
        calls = None
        if delta.get("tool_calls"):
            calls = []
            for call in delta["tool_calls"]:
                function = call.get("function") or {}
                arguments = function.get("arguments")
                calls.append(
                    ToolCallDelta(
                        call.get("index") or 0,
                        call.get("id"),
                        Function(function.get("name"), arguments),
                    )
                )
                if arguments:
                    text.append(arguments)
        if content:
            text.append(content)
        reason = choice.get("finish_reason")
        if reason:
            stream.finished = True
        if content or calls or reason:
            yield Chunk([Choice(Delta(content, calls), reason)], model)
    else:
        if not stream.finished:
            raise stream.wrapper._stream_eof_error()
    reported = stream.litellm.Usage(**usage) if usage else None
    yield Chunk([], model, stream.usage(reported, text))


async def anthropic_chunks(
    stream: Any, events: AsyncIterator[dict[str, Any]]
) -> AsyncIterator[Chunk]:
    """Anthropic's events (message_start, content_block_start/delta/stop,
    message_delta, message_stop, ping, error), as litellm's Anthropic stream maps them:
    tool_use blocks numbered from 0 with their names mapped back, text and tool input
    deltas, the stop reason as OpenAI's finish reason, the usage through its Anthropic
    iterator's `_handle_usage` (cache tokens included). Thinking and server-side tool
    blocks carry nothing the loop reads."""
    from litellm.litellm_core_utils.core_helpers import map_finish_reason
    from litellm.llms.anthropic.common_utils import AnthropicError

    inner = stream.wrapper.completion_stream
    names = inner.tool_name_reverse_map or {}
    model: str | None = stream.model
    index = -1
    block = None
    arguments_seen = False
    received: dict[str, Any] = {}
    text: list[str] = []
    async for event in events:
        kind = event.get("type")
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            part = delta.get("type")
            if part == "text_delta":
                content = delta.get("text") or ""
                text.append(content)
                yield Chunk([Choice(Delta(content, None), None)], model)
            elif part == "input_json_delta" and block == "tool_use":
                arguments = delta.get("partial_json") or ""
                arguments_seen = arguments_seen or bool(arguments)
                text.append(arguments)
                call = ToolCallDelta(index, None, Function(None, arguments))
                yield Chunk([Choice(Delta(None, [call]), None)], model)
        elif kind == "content_block_start":
            start = event.get("content_block") or {}
            block = start.get("type")
            if block == "text" and start.get("text"):
                text.append(start["text"])
                yield Chunk([Choice(Delta(start["text"], None), None)], model)
            elif block == "tool_use":
                index += 1
                arguments_seen = False
                name = names.get(start.get("name"), start.get("name"))
                call = ToolCallDelta(index, start.get("id"), Function(name, ""))
                yield Chunk([Choice(Delta(None, [call]), None)], model)
        elif kind == "content_block_stop":
            if block == "tool_use" and not arguments_seen:  # a call without input: {}
                call = ToolCallDelta(index, None, Function(None, "{}"))
                yield Chunk([Choice(Delta(None, [call]), None)], model)
            block = None
        elif kind == "message_delta":
            received.update(event.get("usage") or {})
            reason = (event.get("delta") or {}).get("stop_reason") or "stop"
            stream.finished = True
            yield Chunk([Choice(Delta(None, None), map_finish_reason(reason))], model)
        elif kind == "message_start":
            message = event.get("message") or {}
            model = message.get("model") or model
            received.update(message.get("usage") or {})
        elif kind == "message_stop":
            break
        elif kind == "error":
            error = event.get("error") or {}
            raise AnthropicError(message=error.get("message") or str(event), status_code=500)
    else:
        if not stream.finished:
            raise stream.wrapper._stream_eof_error()
    reported = inner._handle_usage(anthropic_usage_chunk=received) if received else None
    yield Chunk([], model, stream.usage(reported, text))


async def openai_transport(http: Any, events: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """`events`, a failure to read them raised as the openai SDK raises it (a timeout as
    APITimeoutError, any other transport failure as APIConnectionError)."""
    import openai

    try:
        async for data in events:
            yield data
    except _sdk_errors("timeout_exceptions", httpx.TimeoutException) as exc:
        raise openai.APITimeoutError(request=http.request) from exc
    except _sdk_errors("request_exceptions", httpx.RequestError, ssl.SSLError) as exc:
        raise openai.APIConnectionError(request=http.request) from exc


def _sdk_errors(name: str, *default: type[BaseException]) -> tuple[type[BaseException], ...]:
    """The exception classes the openai SDK's stream reader maps (its `_httpx2` helpers,
    which know the transports it may run on), or `default` where it has none."""
    try:
        from openai import _httpx2
    except ImportError:
        return default
    found = getattr(_httpx2, name, None)
    return tuple(found()) if callable(found) else default


async def anthropic_events(events: AsyncIterator[bytes], wrapper: Any) -> AsyncIterator[Any]:
    """The decoded events of an Anthropic stream. An event whose JSON does not parse is
    accumulated with the ones after it until they make whole values, with litellm's own
    accumulator (its Anthropic stream does the same for a provider that splits them)."""
    buffer = None
    async for data in events:
        if buffer is None:
            try:
                yield _loads(data)
                continue
            except json.JSONDecodeError:
                buffer = wrapper.completion_stream._json_buffer
        buffer.append(data.decode())
        if buffer.could_close_json():
            found, value = buffer.pop_next_value()
            while found:
                if isinstance(value, dict):
                    yield value
                found, value = buffer.pop_next_value()


def _openai_error(http: Any, event: dict[str, Any]) -> Exception:
    """What the openai SDK raises for an error event in a stream (litellm maps it)."""
    import openai

    error = event["error"]
    message = error.get("message") if isinstance(error, dict) else None
    return openai.APIError(
        message=message or "An error occurred during streaming",
        request=http.request,
        body=error,
    )
