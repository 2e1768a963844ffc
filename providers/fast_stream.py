"""The model's stream read straight from the provider's HTTP response, for the two protocols
most calls speak: OpenAI's chat completions and Anthropic's Messages, over server-sent events.

litellm stays the gateway: it maps the options, builds and sends the request (URL, headers,
body, key), through the same client and to the same checked base as every other call
(providers/gate.py), and turns a refusal (401, 429, 5xx, a connection refused)
into its exception types before any chunk is read. What it hands back is its stream
wrapper (`CustomStreamWrapper`) over the provider's response; its per-chunk work (a
pydantic chunk per event, its checks, its logging bookkeeping, the assembly of the whole
response at the end) is most of a streamed chat's CPU, and the run loop reads none of what
it adds. So `reader` takes the HTTP response from under the wrapper, before anything has
read it, and `FastStream` parses its events (providers/sse_protocols.py, with the standard
library's `json`) into
slotted chunks of the shape the loop reads from litellm's (`choices[0].delta.content`, the
tool-call deltas by index with their id and name, `finish_reason`, `usage`, `model`), and
one last chunk with the usage as litellm reports it (its `Usage`; counted with its
`token_counter` when the provider reported none, as its own assembly does).

A failure in the middle of the stream (a malformed event, an error event, a connection that
drops before the finish reason) goes through the wrapper's own error path, so it raises the
exception litellm would have raised (`MidStreamFallbackError`, or the mapped 4xx).

Everything else keeps litellm's wrapper: other providers, the offline `studio/scripted`, a
response litellm already started reading, litellm's Responses-API bridge or a faked stream
(anything but the openai SDK's stream or litellm's Anthropic stream under the wrapper), a
JSON mode or response format (litellm rewrites those answers), and any configured
callback, cache or budget (they read litellm's assembled response: providers/model_stream.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx

from providers.model_stream import DRAIN_SECONDS, wants_assembly
from providers.sse_protocols import (
    AnthropicParser,
    Chunk,
    OpenAIParser,
    SSESplitter,
    openai_transport_error,
)

PROVIDERS = ("openai", "anthropic")
# What the fast path uses of litellm's wrapper and of its Anthropic stream: a release without
# them keeps litellm's wrapper.
_WRAPPER_NEEDS = ("_log_stream_failure_and_raise", "_stream_eof_error", "sent_first_chunk")
_ANTHROPIC_NEEDS = ("_response", "_json_buffer", "_handle_usage", "tool_name_reverse_map")


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


class FastStream:
    """litellm's stream read without its wrapper (module docstring). Iterate it once."""

    # The loop reads it to its end (providers/model_stream.py): the stream ends itself.
    send_stream_usage = True
    completion_stream = None

    def __init__(self, wrapper: Any, http: Any, litellm: Any, messages: list[Any]) -> None:
        self.wrapper = wrapper
        self.http = http
        self.litellm = litellm
        self.messages = messages
        self.provider: str = wrapper.custom_llm_provider
        self.model: str = wrapper.model

    def __aiter__(self) -> AsyncIterator[Chunk]:
        return self._read()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def _read(self) -> AsyncIterator[Chunk]:
        """The chunks of the provider's events, with litellm's mapping of a failure; once
        its end marker (`[DONE]`, message_stop) is read, what follows it is read to the
        body's end, so that the connection goes back to the pool for the run's next call."""
        wrapper, http = self.wrapper, self.http
        parser = (AnthropicParser if self.provider == "anthropic" else OpenAIParser)(self)
        split = SSESplitter()
        raw = http.aiter_raw()
        try:
            async for piece in raw:
                for data in split.feed(piece):
                    for chunk in parser.feed(data):
                        wrapper.sent_first_chunk = True
                        yield chunk
                    if parser.done:
                        break
                if parser.done:
                    async with asyncio.timeout(DRAIN_SECONDS):
                        async for _ in raw:
                            pass
                    break
            else:
                for data in split.end():
                    for chunk in parser.feed(data):
                        yield chunk
            yield parser.last()
        except GeneratorExit:
            raise
        except Exception as exc:  # noqa: BLE001 - mapped by litellm's own stream error path
            if parser.finished and isinstance(exc, (httpx.ReadError, httpx.RemoteProtocolError)):
                yield parser.last()  # litellm, too, ends a stream cut after its finish reason
                return
            if self.provider == "openai":
                exc = openai_transport_error(http, exc)
            await http.aclose()
            await wrapper.aclose()
            wrapper._log_stream_failure_and_raise(exc)
        finally:
            await http.aclose()

    def usage(self, reported: Any, text: list[str]) -> Any:
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
