"""What the model side of bench.streaming's chats costs per chunk, measured in this process:
litellm over its real HTTP path (against bench/_sse_model.py), read through its stream
wrapper or on the run loop's fast path (providers/fast_stream.py), for the
OpenAI and the Anthropic protocol; litellm's stream wrapper over the offline provider the
chats use, and that provider alone; each read as the run loop reads a stream
(providers/model_stream.py). The studio's cost is what its processes spend
beyond these shares."""

from __future__ import annotations

import asyncio
import time
from typing import Any

TOOLS = [{"type": "function", "function": {"name": "bench_sink", "parameters": {}}}]
MESSAGES = [{"role": "user", "content": "go"}]


async def _read(response: Any, to_the_end: bool = False, path: str = "wrapper") -> int:
    """Read a litellm stream as the run loop does (providers/model_stream.py), or
    to its end. `path`: through litellm's wrapper; on the run loop's fast path ("fast": an
    error if the stream does not qualify, the bench must not measure one path under the
    other's name); or "transport": the HTTP response's bytes alone, as litellm's client
    delivers them, unparsed (the floor under both). The chunks (or reads) counted."""
    import litellm

    from providers import fast_stream, model_stream

    if path != "wrapper":
        response = fast_stream.reader(response, litellm, MESSAGES)
        if not isinstance(response, fast_stream.FastStream):
            raise RuntimeError("this stream does not qualify for the fast path")
    if path == "transport":
        reads = [raw async for raw in response.http.aiter_raw()]
        await response.aclose()
        return len(reads)
    count = 0
    to_the_end = to_the_end or model_stream.read_to_the_end(response, litellm)
    model_stream.keep_less(response, to_the_end)
    async for chunk in response:
        count += 1
        if await model_stream.stop_at(response, chunk, to_the_end):
            break
    return count


def _http_stream(base: str, chunks: int, gap: float | None = None, protocol: str = "openai") -> Any:
    """A litellm stream over the real HTTP path (bench/_sse_model.py, `base` its /v1), asked
    for as the run loop asks a model at a listed base (include_usage), in `protocol`
    (openai, anthropic); `gap`: the server's pause between chunks (1 ms when None)."""
    import litellm

    # litellm prints its provider list on stdout for a model it has no entry for (bench).
    litellm.suppress_debug_info = True
    return litellm.acompletion(
        model=f"{protocol}/bench",
        api_base=base if protocol == "openai" else base.removesuffix("/v1"),
        api_key="sk-bench",
        messages=MESSAGES,
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
        max_tokens=chunks,
        **({} if gap is None else {"extra_body": {"gap": gap}}),
    )


def _offline_stream(chunks: int, delay: float) -> Any:
    """A litellm stream over the offline provider the chats use (benchmark mode)."""
    import litellm

    import bench.offline_stamps  # noqa: F401 - registers the provider and its `stamp` mode

    return litellm.acompletion(
        model="studio/scripted",
        messages=MESSAGES,
        stream=True,
        tools=TOOLS,
        stamp=chunks,
        delay=delay,
    )


def _provider_stream(chunks: int, delay: float) -> Any:
    """The offline provider's stream alone, without litellm."""
    import bench.offline_stamps  # noqa: F401 - registers the `stamp` mode
    from providers import offline

    return offline._handler.astreaming(
        "scripted", MESSAGES, optional_params={"stamp": chunks, "tools": TOOLS, "delay": delay}
    )


async def _cpu_reading(
    stream: Any, to_the_end: bool = False, path: str = "wrapper"
) -> tuple[float, int]:
    """CPU of this process to open a stream and read it (`_read`); the chunks."""
    started = time.process_time()
    response = await stream if asyncio.iscoroutine(stream) else stream
    count = await _read(response, to_the_end, path)
    return time.process_time() - started, count


async def litellm_http_us_per_chunk(
    base: str, chunks: int = 1000, protocol: str = "openai", path: str = "wrapper"
) -> float:
    """CPU per chunk of one litellm stream over the real HTTP path, chunks 1 ms apart, the
    transport and the request included; read on `path` (`_read`)."""
    best = float("inf")
    for _ in range(3):
        cpu, count = await _cpu_reading(_http_stream(base, chunks, protocol=protocol), path=path)
        best = min(best, cpu / count * 1e6)
    return best


async def http_paths_us_per_chunk(
    base: str,
    streams: int,
    rate: float | None,
    protocol: str,
    paths: tuple[str, ...],
    chunks: int = 0,
) -> list[float]:
    """CPU per chunk over the real HTTP path in `protocol`, read on each of `paths`
    (`_read`), at `streams` streams of `rate` chunks a second (paced as the chats are), or
    unpaced (one stream, chunks 1 ms apart) when `rate` is None; measured one after the
    other in one run. `chunks` per paced stream: `paced_chunks` when 0."""
    if rate is None:
        return [await litellm_http_us_per_chunk(base, protocol=protocol, path=p) for p in paths]
    chunks, gap = chunks or paced_chunks(streams), 1 / rate

    def opener(n: int) -> Any:
        return _http_stream(base, n, gap, protocol)

    return [await _paced_us_per_chunk(opener, streams, chunks, path=p) for p in paths]


async def _paced_us_per_chunk(
    open_stream: Any,
    streams: int,
    chunks: int,
    repeats: int = 3,
    to_the_end: bool = False,
    path: str = "wrapper",
) -> float:
    """CPU per chunk of `streams` streams read at once, paced as `open_stream(chunks)` paces
    them, beyond what the same streams of 2 chunks cost (the request, the connection, the
    first and the last chunks): a marginal cost, measured as studio_us_per_delta is.

    Measured under the load the chats of a phase put on the run workers (as many streams,
    as far apart): a chunk that arrives 33 ms after the last finds the process idle and
    its caches cold, and costs litellm twice what one that arrives 1 ms after does."""

    async def phase(n: int) -> tuple[float, int]:
        started = time.process_time()
        counts = await asyncio.gather(
            *(_cpu_reading(open_stream(n), to_the_end, path) for _ in range(streams))
        )
        return time.process_time() - started, sum(count for _, count in counts)

    best = float("inf")
    for _ in range(repeats):
        long_cpu, long_count = await phase(chunks)
        short_cpu, short_count = await phase(2)
        best = min(best, (long_cpu - short_cpu) / max(1, long_count - short_count) * 1e6)
    return best


def paced_chunks(streams: int) -> int:
    """Chunks per stream of the paced measurements of a model's CPU at `streams` streams."""
    return 90 if streams <= 10 else 60


async def model_us_per_chunk(
    base: str | None, streams: int, rate: float
) -> tuple[float, float, float, float]:
    """CPU per chunk, at `streams` streams of `rate` chunks a second, of (litellm over the
    real HTTP path through its wrapper, the same on the run loop's fast path, litellm over
    the offline provider, the offline provider alone); the first two are NaN without a
    `base` to measure them against.

    The provider stands in for the model and its transport: its share is making and
    stamping the chunks and the wake-up of the event loop each paced chunk costs (where a
    real model's chunk arrives on a socket). litellm's share over it is what its stream
    wrapper adds on top, read as the run loop reads it. Both are taken out of the studio's
    cost, measured at the pace and concurrency the run workers read them at in the phase."""
    chunks = paced_chunks(streams)
    delay = 1 / rate
    http = fast = float("nan")
    if base is not None:
        http, fast = await http_paths_us_per_chunk(
            base, streams, rate, "openai", ("wrapper", "fast")
        )
    through = await _paced_us_per_chunk(lambda n: _offline_stream(n, delay), streams, chunks)
    alone = await _paced_us_per_chunk(
        lambda n: _provider_stream(n, delay), streams, chunks, to_the_end=True
    )
    return http, fast, max(0.0, through - alone), alone


async def assembly_us_per_chunk(chunks: int = 3000) -> float:
    """What litellm's assembly of the whole response after its last chunk (which the run
    loop skips; providers/model_stream.py) would add per chunk."""
    read = whole = float("inf")
    for _ in range(3):
        cpu, count = await _cpu_reading(_offline_stream(chunks, 0))
        read = min(read, cpu / count * 1e6)
        cpu, count = await _cpu_reading(_offline_stream(chunks, 0), to_the_end=True)
        whole = min(whole, cpu / count * 1e6)
    return max(0.0, whole - read)
