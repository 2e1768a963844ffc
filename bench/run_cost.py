"""What a run costs whatever its length, and how fast a burst of messages starts its runs.

    python -m bench.run_cost [--runs 40] [--streams 100] [--executor inline,worker]
                             [--baseline <commit>] [--rounds 2]

Two parts, each printed beside its baseline:

1. In this process (the inline executor, no Daphne): `--runs` chats of the bench agent
   (bench/_streaming_agent.py: 2 deltas, a tool call, a second model call; the offline
   provider without delay), one after the other, each started with `run_start` and
   executed to its end. Measured: the process's CPU per run (every thread), the SQL
   statements per run (run_start included), and the floor: the same model calls, as the
   run sent them (recorded through the run observer seam), made again with bare litellm
   and read as the loop reads them. `studio_ms` is the run's CPU minus that floor.

       part=inline_run runs=<> cpu_ms_per_run=<> queries_per_run=<> litellm_floor_ms=<>
           studio_ms_per_run=<> cpu_over_floor=<>

2. Daphne with the Redis layer and real websockets, as bench.streaming runs it, for each
   executor: `--streams` clients open their sockets, then all send a message at once (2
   deltas each). Measured: from each message to its `run-start` and to its first delta
   (the run's loop at work), p50 and p99, and the studio's CPU per run (all its processes,
   litellm's share included). Baseline: the same sockets' round trip for a frame that
   makes one query and answers (`get-partial`), sent all at once the same way.

       part=burst executor=<> streams=<N> start_p50_ms=<> start_p99_ms=<> first_delta_p50_ms=<>
           first_delta_p99_ms=<> roundtrip_p50_ms=<> roundtrip_p99_ms=<> cpu_ms_per_run=<>

With `--baseline <commit>` (e.g. the commit before a change) both parts run twice in the
same run, once with the studio's code at that commit (exported with `git archive` into
.studio/, as bench.streaming does) and once with this checkout's, each line marked
`tree=baseline:<commit>` or `tree=current`, and a `ratio ... current/baseline` line per
part (below 1 is better). The in-process part then runs in a child process per tree
(`--rounds` times each, the order alternating; the medians are compared); the burst
starts each tree's Daphne (and run workers) in turn against the same clients.

Uses the databases and Redis of bench.streaming (DATABASE_URL, REDIS_URL).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench._run_cost_trees import inline_side_by_side, ratio
from bench._streaming_clients import percentile
from bench._streaming_studio import (
    ROOT,
    baseline_tree,
    cpu_seconds,
    free_port,
    setup,
    start_studio,
    stop_processes,
)

OPTIONS = {"providerOptions": {"studio": {"delay": 0.0, "stamp": 2}}}


class _Requests:
    """A run observer that keeps what each model call was sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def model_call_started(self, run_id: str, *, step: int, request: dict[str, Any]) -> None:
        self.sent.append(dict(request))


class _Statements:
    """Counts the SQL statements of every connection (every thread's) while on."""

    def __init__(self) -> None:
        self.count = 0
        self.on = False
        self.lock = threading.Lock()

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if self.on:
            with self.lock:
                self.count += 1
        return execute(sql, params, many, context)

    def install(self) -> None:
        from django.db import connections
        from django.db.backends.signals import connection_created

        def add(sender: Any, connection: Any, **kwargs: Any) -> None:
            if self not in connection.execute_wrappers:
                connection.execute_wrappers.append(self)

        connection_created.connect(add, weak=False)
        for connection in connections.all():
            add(None, connection)


async def _bare(litellm: Any, request: dict[str, Any]) -> None:
    from providers import model_stream

    response = await litellm.acompletion(**request)
    to_the_end = model_stream.read_to_the_end(response, litellm)
    async for chunk in response:
        if await model_stream.stop_at(response, chunk, to_the_end):
            break


async def _inline(user: Any, runs: int) -> dict[str, float]:
    from asgiref.sync import sync_to_async

    from agents_core.models import Agent
    from agents_core.runtime.execution import active
    from agents_core.runtime.run import observers
    from agents_core.runtime.run.model_step import litellm_module
    from agents_core.services.runs import run_start
    from agents_core.services.threads import thread_create

    agent = await sync_to_async(Agent.objects.get)(slug="bench-streamer")
    requests = _Requests()
    observers.register(requests)
    statements = _Statements()
    await sync_to_async(statements.install)()
    threads = [await sync_to_async(thread_create)(user=user, agent=agent) for _ in range(runs + 3)]

    async def one(thread: Any) -> None:
        await sync_to_async(run_start)(thread=thread, message="go", user=user, options=OPTIONS)
        await active.wait_idle(60)

    for thread in threads[:3]:  # warm-up: imports, first connections, caches
        await one(thread)
    requests.sent.clear()
    statements.on, started = True, time.process_time()
    for thread in threads[3:]:
        await one(thread)
    cpu = (time.process_time() - started) / runs
    statements.on = False
    observers.unregister(requests)
    litellm = await litellm_module(offline=True)
    sent = requests.sent
    for request in sent[:4]:
        await _bare(litellm, request)
    started = time.process_time()
    for request in sent:
        await _bare(litellm, request)
    floor = (time.process_time() - started) / runs
    return {
        "cpu_ms": cpu * 1000,
        "queries": statements.count / runs,
        "floor_ms": floor * 1000,
        "calls": len(sent) / runs,
    }


class _Socket:
    def __init__(self, thread_id: str) -> None:
        self.thread_id = thread_id
        self.roundtrip_ms = float("nan")
        self.start_ms = float("nan")
        self.first_ms = float("nan")

    async def open(self, base: str, cookie: str, gate: asyncio.Semaphore) -> None:
        import websockets

        url = base.replace("http", "ws") + f"/ws/threads/{self.thread_id}/"
        async with gate:
            self.ws = await websockets.connect(
                url,
                additional_headers={"Cookie": cookie, "Origin": base},
                max_size=None,
                ping_interval=None,
                open_timeout=60,
            )

    async def roundtrip(self, go: asyncio.Event) -> None:
        await go.wait()
        sent = time.time()
        await self.ws.send(json.dumps({"type": "get-partial", "toolCallId": "none"}))
        await self.ws.recv()
        self.roundtrip_ms = (time.time() - sent) * 1000

    async def chat(self, go: asyncio.Event) -> None:
        await go.wait()
        sent = time.time()
        await self.ws.send(json.dumps({"type": "chat", "text": "go", "options": OPTIONS}))
        async with asyncio.timeout(120):
            async for message in self.ws:
                event = json.loads(message)
                at = (time.time() - sent) * 1000
                if event["type"] == "run-start" and self.start_ms != self.start_ms:
                    self.start_ms = at
                elif event["type"] == "text-delta" and self.first_ms != self.first_ms:
                    self.first_ms = at
                elif event["type"] in ("run-finish", "run-error"):
                    break
        await self.ws.close()


def _burst(user: Any, cookie: str, base: str, pids: list[int], streams: int) -> dict[str, Any]:
    from agents_core.models import Agent
    from agents_core.services.threads import thread_create

    agent = Agent.objects.get(slug="bench-streamer")
    sockets = [_Socket(str(thread_create(user=user, agent=agent).pk)) for _ in range(streams)]

    async def go() -> float:
        gate = asyncio.Semaphore(10)
        await asyncio.gather(*(s.open(base, cookie, gate) for s in sockets))
        await asyncio.sleep(0.5)
        ready = asyncio.Event()
        trips = asyncio.gather(*(s.roundtrip(ready) for s in sockets))
        ready.set()
        await trips
        await asyncio.sleep(0.5)
        before = sum(cpu_seconds(pid) for pid in pids)
        ready = asyncio.Event()
        chats = asyncio.gather(*(s.chat(ready) for s in sockets))
        ready.set()
        await chats
        await asyncio.sleep(1.0)  # what the runs' ends leave (titles, spans) is theirs too
        return sum(cpu_seconds(pid) for pid in pids) - before

    cpu = asyncio.run(go())
    return {
        "start": [s.start_ms for s in sockets],
        "first": [s.first_ms for s in sockets],
        "roundtrip": [s.roundtrip_ms for s in sockets],
        "cpu_ms": cpu * 1000 / streams,
        "missing": sum(1 for s in sockets if s.start_ms != s.start_ms),
    }


def _start(
    executor: str, port: int, stats: str, workers: int, fixed: bool, root: Path = ROOT
) -> tuple[list[Any], int]:
    """The studio's processes (from the code at `root`), given three minutes to listen (a
    machine loaded by other suites takes more than bench.streaming's one to start Daphne),
    then tried again."""
    for attempt in range(2):
        try:
            return start_studio(executor, port, stats, workers, root=root, seconds=180), port
        except TimeoutError as exc:
            print(f"# start attempt {attempt + 1} failed: {exc}", file=sys.stderr, flush=True)
            port = port + 1 if fixed else free_port()
    raise TimeoutError(f"the studio ({executor}) did not start")


def _inline_line(result: dict[str, float], runs: int) -> str:
    studio = result["cpu_ms"] - result["floor_ms"]
    return (
        f"part=inline_run runs={runs} cpu_ms_per_run={result['cpu_ms']:.1f} "
        f"queries_per_run={result['queries']:.1f} "
        f"model_calls_per_run={result['calls']:.1f} "
        f"litellm_floor_ms={result['floor_ms']:.1f} studio_ms_per_run={studio:.1f} "
        f"cpu_over_floor={result['cpu_ms'] / result['floor_ms']:.2f}"
    )


def _burst_lines(
    args: argparse.Namespace, user: Any, cookie: str, executor: str, root: Path
) -> dict[int, dict[str, float]]:
    """The burst at each N with the code at `root`: the printed figures by N."""
    port = args.port or free_port()
    stats = str(ROOT / ".studio" / f"bench-run-cost-stats-{port}.json")
    procs, port = _start(executor, port, stats, args.workers, bool(args.port), root)
    found: dict[int, dict[str, float]] = {}
    try:
        base = f"http://127.0.0.1:{port}"
        _burst(user, cookie, base, [p.pid for p in procs], 5)  # warm-up: imports
        for streams in [int(n) for n in args.streams.split(",")]:
            line = _burst(user, cookie, base, [p.pid for p in procs], streams)
            figures = {
                f"{name}_p{int(q * 100)}_ms": percentile(line[key], q)
                for key, name in (
                    ("start", "start"),
                    ("first", "first_delta"),
                    ("roundtrip", "roundtrip"),
                )
                for q in (0.5, 0.99)
            }
            figures["cpu_ms_per_run"] = line["cpu_ms"]
            figures["no_run_start"] = line["missing"]
            found[streams] = figures
            shown = " ".join(
                f"{key}={value:.1f}" if key == "cpu_ms_per_run" else f"{key}={value:.0f}"
                for key, value in figures.items()
            )
            tree = f" tree={args.label}" if args.label else ""
            print(f"part=burst executor={executor}{tree} streams={streams} {shown}", flush=True)
    finally:
        stop_processes(procs)
    return found


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--runs", type=int, default=40)
    options.add_argument("--streams", default="100")
    options.add_argument("--executor", default="inline,worker")
    options.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    options.add_argument("--parts", default="inline_run,burst")
    options.add_argument(
        "--port", type=int, default=0, help="Daphne's port (the next ones on a retry); 0: any free"
    )
    options.add_argument(
        "--baseline", help="a commit to measure beside this checkout (ratios current/baseline)"
    )
    options.add_argument(
        "--rounds", type=int, default=2, help="with --baseline: in-process rounds per tree"
    )
    args = options.parse_args()
    args.label = ""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.environ["STUDIO_BENCH_LAYER"] = "pubsub"
    trees = [("current", ROOT)]
    if args.baseline:
        trees.insert(0, (f"baseline:{args.baseline}", baseline_tree(args.baseline)))
    user, cookie = setup()
    print(f"# load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    if "inline_run" in args.parts:
        if len(trees) == 1:
            print(_inline_line(asyncio.run(_inline(user, args.runs)), args.runs), flush=True)
        else:
            inline_side_by_side(trees, args.runs, max(1, args.rounds))
    if "burst" not in args.parts:
        return
    (ROOT / ".studio").mkdir(exist_ok=True)
    for executor in args.executor.split(","):
        lines = {}
        for label, root in trees:
            args.label = label if len(trees) > 1 else ""
            lines[label] = _burst_lines(args, user, cookie, executor, root)
        if len(trees) == 2:
            base, current = lines[trees[0][0]], lines["current"]
            for streams, now in current.items():
                before = base[streams]
                print(
                    f"ratio part=burst executor={executor} streams={streams} current/baseline "
                    + " ".join(
                        f"{key}={ratio(now[key], before[key])}"
                        for key in (
                            "start_p50_ms",
                            "start_p99_ms",
                            "first_delta_p99_ms",
                            "cpu_ms_per_run",
                        )
                    )
                    + f" (load average {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
    print(f"# load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main()
