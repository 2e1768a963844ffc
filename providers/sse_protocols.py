"""The two protocols the run loop's fast path reads (providers/fast_stream.py), parsed from
the provider's server-sent events into the chunks the loop reads of litellm's: OpenAI's
chat completions and Anthropic's Messages, as litellm maps each (its finish reasons, its
usage, its Anthropic tool names, the errors the openai SDK raises)."""

from __future__ import annotations

import json
import ssl
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


NOTHING: tuple[Chunk, ...] = ()  # what an event the loop reads nothing of gives


class SSESplitter:
    """Splits a body's bytes, as they arrive, into the data of its server-sent events (the
    `data:` lines of an event joined; other fields and comments skipped)."""

    __slots__ = ("buffer", "data")

    def __init__(self) -> None:
        self.buffer = b""
        self.data: list[bytes] = []

    def feed(self, raw: bytes) -> list[bytes]:
        if b"\n" not in raw:
            self.buffer += raw
            return []
        *lines, self.buffer = (self.buffer + raw).split(b"\n")
        out = []
        data = self.data
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if data:
                    out.append(data[0] if len(data) == 1 else b"\n".join(data))
                    data.clear()
            elif line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
        return out

    def end(self) -> list[bytes]:
        """What a body that ends without a blank line after its last event leaves."""
        line = self.buffer.rstrip(b"\r")
        if line.startswith(b"data:"):
            self.data.append(line[5:].lstrip(b" "))
        return [b"\n".join(self.data)] if self.data else []


class OpenAIParser:
    """OpenAI's chunks: `data: {...}` each, `data: [DONE]` at the end. An event with an
    `error` raises what the openai SDK raises for it (litellm then maps it). `stream`: the
    FastStream being read (its response, model, `usage`)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.model: str | None = stream.model
        self.usage: Any = None
        self.text: list[str] = []
        self.finished = False  # the provider gave its finish reason
        self.done = False  # its end marker was read

    def feed(self, data: bytes) -> Any:
        if data.startswith(b"[DONE]"):
            self.done = True
            return NOTHING
        event = _loads(data)
        if isinstance(event, dict) and event.get("error"):
            raise _openai_error(self.stream.http, event)
        self.model = event.get("model") or self.model
        if event.get("usage"):
            self.usage = event["usage"]
        choices = event.get("choices")
        if not choices:
            return NOTHING
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
                    self.text.append(arguments)
        if content:
            self.text.append(content)
        reason = choice.get("finish_reason")
        if reason:
            self.finished = True
        if content or calls or reason:
            return (Chunk([Choice(Delta(content, calls), reason)], self.model),)
        return NOTHING

    def last(self) -> Chunk:
        """The chunk with the usage, once the stream is read (litellm's error if it ended
        before its finish reason)."""
        stream = self.stream
        if not self.finished:
            raise stream.wrapper._stream_eof_error()
        reported = stream.litellm.Usage(**self.usage) if self.usage else None
        return Chunk([], self.model, stream.usage(reported, self.text))


class AnthropicParser:
    """Anthropic's events (message_start, content_block_start/delta/stop, message_delta,
    message_stop, ping, error), as litellm's Anthropic stream maps them: tool_use blocks
    numbered from 0 with their names mapped back, text and tool input deltas, a tool call
    without input as `{}`, the stop reason as OpenAI's finish reason, the usage through its
    Anthropic iterator's `_handle_usage` (cache tokens included). An event whose JSON does
    not parse is accumulated with the ones after it until they make whole values, with
    litellm's own accumulator (its Anthropic stream does the same). Thinking and
    server-side tool blocks carry nothing the loop reads."""

    def __init__(self, stream: Any) -> None:
        from litellm.litellm_core_utils.core_helpers import map_finish_reason

        self.map_finish_reason = map_finish_reason
        self.stream = stream
        self.inner = stream.wrapper.completion_stream
        self.names = self.inner.tool_name_reverse_map or {}
        self.model: str | None = stream.model
        self.index = -1
        self.block: str | None = None
        self.arguments_seen = False
        self.received: dict[str, Any] = {}
        self.text: list[str] = []
        self.finished = False
        self.done = False
        self.accumulator: Any = None

    def feed(self, data: bytes) -> Any:
        if self.accumulator is None:
            try:
                event = _loads(data)
            except json.JSONDecodeError:
                self.accumulator = self.inner._json_buffer
            else:
                chunk = self.event(event)
                return NOTHING if chunk is None else (chunk,)
        self.accumulator.append(data.decode())
        out = []
        if self.accumulator.could_close_json():
            found, value = self.accumulator.pop_next_value()
            while found:
                chunk = self.event(value) if isinstance(value, dict) else None
                if chunk is not None:
                    out.append(chunk)
                found, value = self.accumulator.pop_next_value()
        return out

    def event(self, event: dict[str, Any]) -> Chunk | None:
        kind = event.get("type")
        model = self.model
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            part = delta.get("type")
            if part == "text_delta":
                content = delta.get("text") or ""
                self.text.append(content)
                return Chunk([Choice(Delta(content, None), None)], model)
            if part == "input_json_delta" and self.block == "tool_use":
                arguments = delta.get("partial_json") or ""
                self.arguments_seen = self.arguments_seen or bool(arguments)
                self.text.append(arguments)
                call = ToolCallDelta(self.index, None, Function(None, arguments))
                return Chunk([Choice(Delta(None, [call]), None)], model)
        elif kind == "content_block_start":
            start = event.get("content_block") or {}
            self.block = start.get("type")
            if self.block == "text" and start.get("text"):
                self.text.append(start["text"])
                return Chunk([Choice(Delta(start["text"], None), None)], model)
            if self.block == "tool_use":
                self.index += 1
                self.arguments_seen = False
                name = self.names.get(start.get("name"), start.get("name"))
                call = ToolCallDelta(self.index, start.get("id"), Function(name, ""))
                return Chunk([Choice(Delta(None, [call]), None)], model)
        elif kind == "content_block_stop":
            block, self.block = self.block, None
            if block == "tool_use" and not self.arguments_seen:
                call = ToolCallDelta(self.index, None, Function(None, "{}"))
                return Chunk([Choice(Delta(None, [call]), None)], model)
        elif kind == "message_delta":
            self.received.update(event.get("usage") or {})
            reason = (event.get("delta") or {}).get("stop_reason") or "stop"
            self.finished = True
            return Chunk([Choice(Delta(None, None), self.map_finish_reason(reason))], model)
        elif kind == "message_start":
            message = event.get("message") or {}
            self.model = message.get("model") or model
            self.received.update(message.get("usage") or {})
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            from litellm.llms.anthropic.common_utils import AnthropicError

            error = event.get("error") or {}
            raise AnthropicError(message=error.get("message") or str(event), status_code=500)
        return None

    def last(self) -> Chunk:
        """The chunk with the usage, once the stream is read (litellm's error if it ended
        before its finish reason)."""
        if not self.finished:
            raise self.stream.wrapper._stream_eof_error()
        received = self.received
        reported = self.inner._handle_usage(anthropic_usage_chunk=received) if received else None
        return Chunk([], self.model, self.stream.usage(reported, self.text))


def openai_transport_error(http: Any, exc: Exception) -> Exception:
    """A failure to read an OpenAI stream's body as the openai SDK raises it (a timeout as
    APITimeoutError, any other transport failure as APIConnectionError), or `exc`."""
    import openai

    if isinstance(exc, _sdk_errors("timeout_exceptions", httpx.TimeoutException)):
        return openai.APITimeoutError(request=http.request)
    if isinstance(exc, _sdk_errors("request_exceptions", httpx.RequestError, ssl.SSLError)):
        return openai.APIConnectionError(request=http.request)
    return exc


def _sdk_errors(name: str, *default: type[BaseException]) -> tuple[type[BaseException], ...]:
    """The exception classes the openai SDK's stream reader maps (its `_httpx2` helpers,
    which know the transports it may run on), or `default` where it has none."""
    try:
        from openai import _httpx2
    except ImportError:
        return default
    found = getattr(_httpx2, name, None)
    return tuple(found()) if callable(found) else default


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
