"""The client side of bench.streaming: websocket clients that each chat with the bench's
agent and time every stamped delta from the provider's yield to its arrival, and one phase
of N such chats against the running studio, with the CPU its processes spent meanwhile."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import re
import time
from typing import Any

from bench._streaming_studio import cpu_seconds

STAMP = re.compile(r"(\d{7})@(\d+\.\d+);")


class Client:
    def __init__(self, thread_id: str) -> None:
        self.thread_id = thread_id
        self.latencies: list[float] = []
        # (received at, latency ms, event type, delta index, yielded at)
        self.timeline: list[tuple[float, float, str, int, float]] = []
        self.stamps: set[int] = set()
        self.events = 0
        self.gaps = 0
        self.error = ""
        self.start_ms: float | None = None  # from sending the message to its run-start
        self.last_seq = 0  # the last seq received

    async def connect(self, base: str, cookie: str, gate: asyncio.Semaphore) -> None:
        import websockets

        url = base.replace("http", "ws") + f"/ws/threads/{self.thread_id}/"
        headers = {"Cookie": cookie, "Origin": base}
        # Handshakes a few at a time: Daphne drops a socket not accepted within 5 s.
        async with gate:
            self.ws = await websockets.connect(
                url, additional_headers=headers, max_size=None, ping_interval=None, open_timeout=60
            )

    async def chat(
        self,
        base: str,
        cookie: str,
        rate: float,
        deltas: int,
        timeout: float,
        start_after: float = 0.0,
    ) -> None:
        async with self.ws as ws:
            await asyncio.sleep(start_after)
            await ws.send(
                json.dumps(
                    {
                        "type": "chat",
                        "text": "go",
                        "options": {
                            "providerOptions": {"studio": {"delay": 1 / rate, "stamp": deltas}}
                        },
                    }
                )
            )
            sent = time.time()
            last_seq = 0
            async with asyncio.timeout(timeout):
                async for message in ws:
                    received = time.time()
                    event = json.loads(message)
                    self.events += 1
                    seq = event.get("seq")
                    if seq is not None:
                        if seq != last_seq + 1 and last_seq:
                            self.gaps += 1
                        last_seq = seq
                        self.last_seq = seq
                    if event["type"] == "run-start" and self.start_ms is None:
                        self.start_ms = (received - sent) * 1000
                    text = event.get("textDelta") or event.get("argsTextDelta") or ""
                    for index, stamp in STAMP.findall(text):
                        self.stamps.add(int(index))
                        self.latencies.append((received - float(stamp)) * 1000)
                        self.timeline.append(
                            (received, self.latencies[-1], event["type"], int(index), float(stamp))
                        )
                    if event["type"] in ("run-finish", "run-error"):
                        if event["type"] == "run-error":
                            self.error = event.get("error", "")
                        return


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def phase(
    user: Any,
    cookie: str,
    base: str,
    pids: list[int],
    streams: int,
    rate: float,
    seconds: float,
    stagger: float = 0.0,
) -> dict[str, Any]:
    from agents_core.models import Agent
    from agents_core.services.threads import thread_create

    agent = Agent.objects.get(slug="bench-streamer")
    clients = [Client(str(thread_create(user=user, agent=agent).pk)) for _ in range(streams)]
    deltas = int(rate * seconds)
    cpu_before = [cpu_seconds(pid) for pid in pids]  # includes the handshakes (a few ms each)
    clients_cpu = time.process_time()

    async def go() -> None:
        gate = asyncio.Semaphore(10)
        await asyncio.gather(*(c.connect(base, cookie, gate) for c in clients))
        results = await asyncio.gather(
            *(
                c.chat(base, cookie, rate, deltas, seconds * 10 + 60, stagger * n / len(clients))
                for n, c in enumerate(clients)
            ),
            return_exceptions=True,
        )
        for client, result in zip(clients, results, strict=True):
            if isinstance(result, BaseException):
                # Counted: what it did not receive is lost.
                client.error = f"{type(result).__name__}: {result}"

    # The clients share this process with what the benchmark imported to measure litellm
    # (about 460,000 objects): a full collection of them took 200-290 ms and stalled every
    # client at once, which counted as the studio's latency. Out of the collector's sight
    # for the phase, as the run processes keep theirs (agents_core/runtime/execution/heap.py).
    gc.collect()
    gc.freeze()
    started = time.monotonic()
    try:
        asyncio.run(go())
    finally:
        wall = time.monotonic() - started
        gc.unfreeze()
    per_process = [cpu_seconds(pid) - before for pid, before in zip(pids, cpu_before, strict=True)]
    cpu = sum(per_process)
    clients_cpu = time.process_time() - clients_cpu
    latencies = [lat for c in clients for lat in c.latencies]
    # Every event a client received is stored once its run ended.
    from django.db.models import Count

    from agents_core.models import StreamEvent

    stored = {
        str(thread_id): count
        for thread_id, count in StreamEvent.objects.filter(
            thread_id__in=[c.thread_id for c in clients]
        )
        .values_list("thread_id")
        .annotate(Count("id"))
    }
    unstored = sum(max(0, c.last_seq - stored.get(c.thread_id, 0)) for c in clients)
    timeline = sorted(point for c in clients for point in c.timeline)
    windows: dict[int, list[float]] = {}
    if timeline:
        first = timeline[0][0]
        for at, latency, *_ in timeline:
            windows.setdefault(int(at - first), []).append(latency)
    if os.environ.get("BENCH_STREAMING_DUMP") and deltas > 2:
        with open(os.environ["BENCH_STREAMING_DUMP"], "w") as handle:
            json.dump(timeline, handle)
    return {
        "deltas": deltas * streams,
        "delivered": sum(c.events for c in clients),
        "lost": sum(deltas - len(c.stamps) for c in clients),
        "gaps": sum(c.gaps for c in clients),
        "unstored": unstored,
        "errors": [c.error for c in clients if c.error],
        "p50": percentile(latencies, 0.5),
        "p99": percentile(latencies, 0.99),
        "start_ms": sorted(c.start_ms for c in clients if c.start_ms is not None),
        "cpu": cpu,
        "wall": wall,
        "per_process": per_process,
        "clients_cpu": clients_cpu,
        "p99_by_second": [round(percentile(windows[k], 0.99)) for k in sorted(windows)],
    }
