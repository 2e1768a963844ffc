"""The model's stream read straight from the provider's HTTP response, for the two protocols
most calls speak: OpenAI's chat completions and Anthropic's Messages, over server-sent events.

litellm stays the gateway: it maps the options, builds and sends the request (URL, headers,
body, key), through the same client and to the same checked base as every other call
(runtime/model_endpoints.py), and turns a refusal (401, 429, 5xx, a connection refused)
into its exception types before any chunk is read. What it hands back is its stream
wrapper (`CustomStreamWrapper`) over the provider's response; its per-chunk work (a
pydantic chunk per event, its checks, its logging bookkeeping, the assembly of the whole
response at the end) is most of a streamed chat's CPU, and the run loop reads none of what
it adds. So `reader` takes the HTTP response from under the wrapper, before anything has
read it, and `FastStream` parses its events with the standard library's `json` into
slotted chunks of the shape the loop reads from litellm's (`choices[0].delta.content`, the
tool-call deltas by index with their id and name, `finish_reason`, `usage`, `model`), and
one last chunk with the usage as litellm reports it (its `Usage`; counted with its
`token_counter` when the provider reported none, as its own assembly does).

A failure in the middle of the stream (a malformed event, an error event, a connection that
drops before the finish reason) goes through the wrapper's own error path, so it raises the
exception litellm would have raised (`MidStreamFallbackError`, or the mapped 4xx).

Everything else keeps litellm's wrapper: other providers, litellm's offline provider, a
response litellm already started reading, a JSON mode or response format (litellm rewrites
those answers), and any configured callback, cache or budget (they read litellm's assembled
response: runtime/model_stream.py).
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx

from agents_core.runtime.model_stream import DRAIN_SECONDS, wants_assembly

PROVIDERS = ("openai", "anthropic")
# What the fast path uses of litellm's wrapper and of its Anthropic stream: a release without
# them keeps litellm's wrapper.
_WRAPPER_NEEDS = ("_log_stream_failure_and_raise", "_stream_eof_error", "sent_first_chunk")
_ANTHROPIC_NEEDS = ("_response", "_json_buffer", "_handle_usage", "tool_name_reverse_map")
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


def _http_response(wrapper: Any) -> Any:
    """The provider's HTTP response under litellm's wrapper, when the fast path may read it
    in litellm's place; None otherwise."""
    if type(wrapper).__name__ != "CustomStreamWrapper":
        return None
    provider = getattr(wrapper, "custom_llm_provider", None)
    if provider not in PROVIDERS or getattr(wrapper, "sent_first_chunk", True):
        return None
    if not all(hasattr(wrapper, name) for name in _WRAPPER_NEEDS):
        return None
    inner = getattr(wrapper, "completion_stream", None)
    kind = f"{type(inner).__module__}.{type(inner).__name__}"
    if provider == "openai" and kind == "openai.AsyncStream":
        http = getattr(inner, "response", None)
    elif (
        provider == "anthropic"
        and kind == "litellm.llms.anthropic.chat.handler.ModelResponseIterator"
    ):
        if getattr(inner, "json_mode", False) or getattr(inner, "response_format_schema", None):
            return None
        if not all(hasattr(inner, name) for name in _ANTHROPIC_NEEDS):
            return None
        http = getattr(inner, "_response", None)
    else:
        return None
    if http is None or getattr(http, "is_stream_consumed", True) or http.is_closed:
        return None
    if not http.headers.get("content-type", "").startswith("text/event-stream"):
        return None
    return http


def reader(response: Any, litellm: Any, messages: list[Any]) -> Any:
    """A FastStream over litellm's stream `response` when it qualifies (see the module's
    docstring), else `response` itself. `messages`: what the call sent (for litellm's count
    of the prompt's tokens when the provider reports no usage)."""
    if wants_assembly(litellm):
        return response
    http = _http_response(response)
    if http is None:
        return response
    return FastStream(response, http, litellm, messages)


async def _events(http: Any) -> AsyncIterator[bytes]:
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


class FastStream:
    """litellm's stream read without its wrapper (module docstring). Iterate it once."""

    # The loop reads it to its end (runtime/model_stream.py): the stream ends itself.
    send_stream_usage = True
    completion_stream = None

    def __init__(self, wrapper: Any, http: Any, litellm: Any, messages: list[Any]) -> None:
        self.wrapper = wrapper
        self.http = http
        self.litellm = litellm
        self.messages = messages
        self.provider: str = wrapper.custom_llm_provider
        self.model: str = wrapper.model
        self.finished = False  # the provider gave its finish reason

    def __aiter__(self) -> AsyncIterator[Chunk]:
        if self.provider == "anthropic":
            events = _events(self.http)
            return self._read(self._anthropic(_anthropic_events(events, self.wrapper)), events)
        events = _openai_transport(self.http, _events(self.http))
        return self._read(self._openai(events), events)

    async def aclose(self) -> None:
        await self.http.aclose()

    async def _read(self, chunks: AsyncIterator[Chunk], events: Any) -> AsyncIterator[Chunk]:
        """`chunks`, with litellm's mapping of a failure; once the provider's end marker
        (`[DONE]`, message_stop) is read, what follows it is read to the body's end, so
        that the connection goes back to the pool for the run's next call."""
        wrapper = self.wrapper
        try:
            async for chunk in chunks:
                wrapper.sent_first_chunk = True
                yield chunk
            async with asyncio.timeout(DRAIN_SECONDS):
                async for _ in events:
                    pass
        except GeneratorExit:
            raise
        except Exception as exc:  # noqa: BLE001 - mapped by litellm's own stream error path
            if self.finished and isinstance(exc, (httpx.ReadError, httpx.RemoteProtocolError)):
                return  # litellm, too, ends a stream cut after its finish reason quietly
            await self.http.aclose()
            await wrapper.aclose()
            wrapper._log_stream_failure_and_raise(exc)
        finally:
            await self.http.aclose()

    def _usage(self, reported: Any, text: list[str]) -> Any:
        """litellm's Usage: the provider's, or litellm's count when it reported none."""
        if reported is not None:
            return reported
        litellm = self.litellm
        prompt = litellm.token_counter(model=self.model, messages=self.messages)
        completion = litellm.token_counter(
            model=self.model, text="".join(text), count_response_tokens=True
        )
        return litellm.Usage(
            prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
        )

    async def _openai(self, events: AsyncIterator[bytes]) -> AsyncIterator[Chunk]:
        """OpenAI's chunks: `data: {...}` per chunk, `data: [DONE]` at the end. An event with
        an `error` raises what the openai SDK raises for it (litellm then maps it)."""
        model: str | None = self.model
        usage = None
        text: list[str] = []
        async for data in events:
            if data.startswith(b"[DONE]"):
                break
            event = _loads(data)
            if isinstance(event, dict) and event.get("error"):
                raise _openai_error(self.http, event)
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
                self.finished = True
            if content or calls or reason:
                yield Chunk([Choice(Delta(content, calls), reason)], model)
        else:
            if not self.finished:
                raise self.wrapper._stream_eof_error()
        reported = self.litellm.Usage(**usage) if usage else None
        yield Chunk([], model, self._usage(reported, text))

    async def _anthropic(self, events: AsyncIterator[dict[str, Any]]) -> AsyncIterator[Chunk]:
        """Anthropic's events (message_start, content_block_start/delta/stop,
        message_delta, message_stop, ping, error), as litellm's Anthropic stream maps them:
        tool_use blocks numbered from 0 with their names mapped back, text and tool input
        deltas, the stop reason as OpenAI's finish reason, the usage through its Anthropic
        iterator's `_handle_usage` (cache tokens included). Thinking and server-side tool
        blocks carry nothing the loop reads."""
        from litellm.litellm_core_utils.core_helpers import map_finish_reason
        from litellm.llms.anthropic.common_utils import AnthropicError

        inner = self.wrapper.completion_stream
        names = inner.tool_name_reverse_map or {}
        model: str | None = self.model
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
                self.finished = True
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
            if not self.finished:
                raise self.wrapper._stream_eof_error()
        reported = inner._handle_usage(anthropic_usage_chunk=received) if received else None
        yield Chunk([], model, self._usage(reported, text))


async def _openai_transport(http: Any, events: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
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


async def _anthropic_events(events: AsyncIterator[bytes], wrapper: Any) -> AsyncIterator[Any]:
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
