"""Where the run loop stops reading litellm's stream, and the usage it reports.

litellm's stream wrapper hands out the provider's last chunk, and then, on the next read,
assembles the whole response from every chunk (`stream_chunk_builder`), prices it and
runs its success callbacks before it says the stream is over. That work feeds litellm's
logging callbacks, its cache and its budget; the studio uses none of them (it assembles
the answer itself as it streams), and it costs more CPU than the stream it follows, all
of it when the stream ends: when many chats end together it takes most of a run worker's
CPU (docs/runs.md, "usage").

So the loop stops reading once litellm has handed out its last chunk, and closes the
stream (`close`), when nothing is lost by it:
- litellm says the chunk was its last (`sent_last_chunk`) and will send no usage chunk
  after it (`send_stream_usage`, which `stream_options={"include_usage": True}` asks for);
- the provider reported its usage in the stream (litellm puts it on the last chunk as the
  hidden `usage`). When it did not, litellm's assembly estimates it by counting tokens, so
  the loop reads on and takes that estimate;
- nothing is configured that reads litellm's assembled response: callbacks, a cache, a
  budget.

Even so, the wrapper walks every chunk of the stream as it hands out its last one: the
usage it hides on that chunk is summed over its list of chunks (`_set_final_chunk_usage`),
and its finish chunk looks back over the list for a service tier, each look a pydantic
attribute miss of a few microseconds. A hundred streams ending together spend a few
hundred milliseconds of the event loop that carries every other stream on it. So, on a
stream the loop stops reading at its last chunk, the wrapper's list keeps only what those
walks read (`KeptChunks`): the chunks that carry more than their choices (usage, a service
tier) and the last two (litellm's check for a model repeating itself compares them).
When the provider reports no usage after all, the loop gives the wrapper back its whole
list before it reads on, for litellm's count.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

logger = logging.getLogger(__name__)

# How long `close` waits for what a provider sends after its last chunk.
DRAIN_SECONDS = 5.0


def reported_usage(chunk: Any) -> Any:
    """The usage litellm put on a final chunk (the provider's), or None: absent, or
    litellm's placeholder for a provider that reported none (`UnreportedUsage`)."""
    usage = (getattr(chunk, "_hidden_params", None) or {}).get("usage")
    if usage is None or type(usage).__name__ == "UnreportedUsage":
        return None
    return usage


def wants_assembly(litellm: Any) -> bool:
    """Is anything configured that reads litellm's assembled response?"""
    return bool(
        getattr(litellm, "callbacks", None)
        or getattr(litellm, "success_callback", None)
        or getattr(litellm, "_async_success_callback", None)
        or getattr(litellm, "cache", None) is not None
        or getattr(litellm, "max_budget", 0)
    )


def read_to_the_end(response: Any, litellm: Any) -> bool:
    """Must the loop read `response` until litellm ends it? Decided once per stream: the
    configuration and the kind of stream do not change while it runs."""
    return bool(getattr(response, "send_stream_usage", True)) or wants_assembly(litellm)


class KeptChunks(list[Any]):
    """litellm's list of a stream's chunks (`CustomStreamWrapper.chunks`) that keeps, of the
    chunks before the last two, only those with fields beyond the declared ones (the usage,
    a service tier: pydantic's extras); `every` has every chunk (module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.every: list[Any] = []

    def append(self, chunk: Any) -> None:
        self.every.append(chunk)
        if len(self) >= 2 and getattr(self[-2], "__pydantic_extra__", None) == {}:
            del self[-2]
        super().append(chunk)


def keep_less(response: Any, to_the_end: bool) -> None:
    """Give litellm's wrapper `response` a KeptChunks list when the loop stops reading it at
    its last chunk (`to_the_end` from `read_to_the_end`) and it has not listed any yet."""
    if to_the_end or type(response).__name__ != "CustomStreamWrapper":
        return
    if getattr(response, "chunks", None) == [] and type(response.chunks) is list:
        response.chunks = KeptChunks()


def keep_all(response: Any) -> None:
    """Give litellm's wrapper back every chunk of its stream (undoes `keep_less`)."""
    chunks = getattr(response, "chunks", None)
    if isinstance(chunks, KeptChunks):
        response.chunks = chunks.every


def is_last(response: Any, chunk: Any) -> bool:
    """Has litellm handed out its last chunk, with the provider's usage on it?"""
    return getattr(response, "sent_last_chunk", False) is True and (
        reported_usage(chunk) is not None
    )


async def stop_at(response: Any, chunk: Any, to_the_end: bool) -> bool:
    """Is `chunk` where the loop stops reading `response` (`to_the_end` from
    `read_to_the_end`)? If so, the stream is closed."""
    if to_the_end or getattr(response, "sent_last_chunk", False) is not True:
        return False
    if reported_usage(chunk) is None:
        keep_all(response)  # litellm counts the tokens over every chunk when it ends
        return False
    await close(response)
    return True


async def close(response: Any) -> None:
    """Close a stream the loop stopped reading. Whatever the provider still sends after the
    last chunk (`[DONE]`, a stop event) is read first, from the provider's stream under
    litellm's wrapper (litellm does not process it): closed before its end, an HTTP
    response takes its connection down with it, and the run's next model call would
    connect again (TLS included, for a remote provider)."""
    stream = getattr(response, "completion_stream", None)
    try:
        if stream is not None and hasattr(stream, "__aiter__"):
            async with asyncio.timeout(DRAIN_SECONDS):
                async for _ in stream:
                    pass
    except Exception:  # noqa: BLE001 - a provider that fails now: closed all the same
        logger.debug("The rest of a model stream could not be read", exc_info=True)
    finally:
        await response.aclose()
