"""Concurrent preview chats against one Daphne process on the Redis channel layer.

    python -m bench.streaming [--streams 1,10,50,100] [--rate 30] [--seconds 8]
                              [--executor inline,worker] [--layer pubsub|core]

For each run executor, starts Daphne (studio.asgi) as a subprocess with REDIS_URL set
(channels_redis): `inline` executes the runs in Daphne's event loop; `worker` executes them
in one run worker process (`manage.py execute_runs`) and Daphne only relays the events. N
websocket clients (the `websockets` package) each start a chat with the offline provider
in benchmark mode: it yields `rate` deltas per second (half text, half tool-argument), each
stamped `<index>@<unix time>;` when the provider yields it. One line per executor and N:

    executor=<> streams=<N> rate=<deltas/s each> delivered=<events> lost=<count> p50_ms=<>
    p99_ms=<> studio_us_per_delta=<> litellm_us_per_delta=<> litellm_offline_us_per_delta=<>
    provider_us_per_delta=<> studio_over_litellm=<> studio_over_litellm_offline=<>
    studio_ms_per_run=<> all_in_us_per_delta=<> litellm_unpaced_us_per_delta=<>
    studio_over_litellm_unpaced=<>

then one line per N comparing the executors (`ratio ... p99_inline/p99_worker=<>`).

latency = client receive time - provider yield time, per delta. lost = deltas yielded
but never received (plus sequence gaps, reported on stderr).

litellm_us_per_delta is the model client's CPU per chunk as a real model costs it: litellm
over its real HTTP path, against an OpenAI-compatible server on 127.0.0.1 that streams
one chunk per write (bench/_sse_model.py, a process of its own), read as the run loop
reads an `openai/...` model, transport included; studio_over_litellm compares the
studio's cost with it. It is measured as the studio's is, under the same load: N streams
at once, `rate` chunks a second each, the marginal CPU per chunk (streams of 2 chunks
taken out). The pace matters: a chunk that comes 33 ms after the last finds the process
idle and its caches cold, and costs litellm about twice what one that comes 1 ms after
does (at 1 stream, 1.7-1.8 ms against 1.0-1.2 ms here). litellm_unpaced_us_per_delta is
the one-stream, 1 ms-apart figure of litellm's own HTTP path, and
studio_over_litellm_unpaced compares with it.
litellm_offline_us_per_delta is what litellm's stream wrapper costs per chunk over the
offline provider that the chats of the bench use (litellm over the provider minus the
provider alone), read as the run loop reads it: up to litellm's last chunk, without the
assembly of the whole response litellm would do after it (see
agents_core/runtime/model_stream.py; what that assembly would add per chunk is on stderr).
It and provider_us_per_delta are taken out of the studio's cost; studio_over_litellm_offline
compares with it. Both are measured in this process right after the phases of the line,
at the pace and concurrency of the phase (as the run workers read them in it).
provider_us_per_delta is the offline provider's own CPU per chunk: it stands in for the
model and its transport, so making and stamping a chunk and the event loop's wake-up for
each paced chunk (where a real model's chunk arrives on a socket) are its share.
The stderr line after it ends with the cores litellm and the provider alone need at N
chats of `rate` deltas (N x rate x their CPU per chunk): where that nears the machine's
cores, every process waits for CPU and the latency is the queue's, whatever the studio does.
studio_us_per_delta is what one more delta costs the studio's processes (Daphne and the
run workers): parse, coalesce, persist (PostgreSQL), publish (Redis), consumer and
websocket send. It is the CPU of the phase minus the CPU of the same chats with 2 deltas
each (a second, short phase), per extra delta, minus litellm's and the provider's shares;
the CPU the processes spend idle (polls, heartbeats, timers; measured for a few seconds
before the first phase) is taken out of each phase for its duration, since it grows with
the time a phase lasts, not with its deltas.
That short phase's CPU per chat is studio_ms_per_run (setup, memory, saving the step, the
tool call and the second model call, litellm's fixed cost included); all_in_us_per_delta
is the phase's CPU per delta with nothing taken out but litellm's and the provider's
per-chunk shares.

Each executor runs with one worker process per core by default (--workers).

Uses DATABASE_URL (default postgres://postgres@127.0.0.1:5432/studio_bench, created and
migrated if needed) and REDIS_URL (default redis://127.0.0.1:6379/14).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STAMP = re.compile(r"(\d{7})@(\d+\.\d+);")
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/studio_bench"


def _environment() -> dict[str, str]:
    os.environ.setdefault("DATABASE_URL", DEFAULT_DB)
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/14")
    os.environ.setdefault("SECRET_KEY", "bench-" + secrets.token_hex(16))
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench._settings"
    os.environ["STUDIO_CODE_MODULES"] = "bench._streaming_agent"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("STUDIO_CHANNEL_PREFIX", f"bench-{os.getpid()}")
    return dict(os.environ)


def ensure_database(url: str) -> None:
    import psycopg
    from dj_database_url import parse

    config = parse(url)
    if "postgresql" not in config["ENGINE"]:
        return
    admin = psycopg.connect(
        host=config["HOST"] or "127.0.0.1",
        port=config["PORT"] or 5432,
        user=config["USER"] or "postgres",
        dbname="postgres",
        autocommit=True,
    )
    with admin:
        exists = admin.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [config["NAME"]]
        ).fetchone()
        if not exists:
            admin.execute(f'CREATE DATABASE "{config["NAME"]}"')


def setup() -> tuple[Any, str]:
    import django

    env = _environment()
    ensure_database(env["DATABASE_URL"])
    django.setup()
    from django.contrib.auth import (
        BACKEND_SESSION_KEY,
        HASH_SESSION_KEY,
        SESSION_KEY,
        get_user_model,
    )
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    user, _ = get_user_model().objects.get_or_create(username="bench-streaming")
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.save()
    return user, f"sessionid={session.session_key}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_listening(proc: subprocess.Popen, port: int, log: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{_name(proc)} exited; see {log}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise TimeoutError(f"{_name(proc)} did not listen")


def _name(proc: subprocess.Popen) -> str:
    return " ".join(str(arg) for arg in proc.args[1:3])


def _start(executor: str, port: int, stats_file: str, workers: int) -> list[subprocess.Popen]:
    """Daphne, and with the worker executor its run workers: [daphne, worker...]."""
    env = {
        **os.environ,
        "STUDIO_RUNTIME_STATS_FILE": stats_file,
        "PYTHONPATH": str(ROOT),
        "STUDIO_RUN_EXECUTOR": executor,
    }
    commands = [
        [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "studio.asgi:application",
        ]
    ]
    if executor == "worker":
        commands += [
            [sys.executable, "manage.py", "execute_runs", "--name", f"bench-{number}"]
            for number in range(workers)
        ]
    (ROOT / ".studio").mkdir(exist_ok=True)
    procs = []
    for number, command in enumerate(commands):
        log = ROOT / ".studio" / f"bench-{executor}-{number}-{port}.log"
        with open(log, "wb") as handle:
            procs.append(
                subprocess.Popen(
                    command, cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT
                )
            )
    wait_listening(procs[0], port, str(log))
    return procs


def stop_processes(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


TOOLS = [{"type": "function", "function": {"name": "bench_sink", "parameters": {}}}]
MESSAGES = [{"role": "user", "content": "go"}]


async def _read(response: Any, to_the_end: bool = False) -> int:
    """Read a litellm stream as the run loop does (agents_core/runtime/model_stream.py), or
    to its end; the chunks read."""
    import litellm

    from agents_core.runtime import model_stream

    count = 0
    to_the_end = to_the_end or model_stream.read_to_the_end(response, litellm)
    async for chunk in response:
        count += 1
        if await model_stream.stop_at(response, chunk, to_the_end):
            break
    return count


def _http_stream(base: str, chunks: int, gap: float | None = None) -> Any:
    """A litellm stream over the real HTTP path (bench/_sse_model.py), asked for as the run
    loop asks an `openai/...` model (include_usage); `gap`: the server's pause between
    chunks (its default, 1 ms, when None)."""
    import litellm

    return litellm.acompletion(
        model="openai/bench",
        api_base=base,
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
    from agents_core.runtime import offline

    return offline._handler.astreaming(
        "scripted", MESSAGES, optional_params={"stamp": chunks, "tools": TOOLS, "delay": delay}
    )


async def _cpu_reading(stream: Any, to_the_end: bool = False) -> tuple[float, int]:
    """CPU of this process to open a stream and read it as the run loop does; the chunks."""
    started = time.process_time()
    response = await stream if asyncio.iscoroutine(stream) else stream
    count = await _read(response, to_the_end)
    return time.process_time() - started, count


async def _litellm_http_us_per_chunk(base: str, chunks: int = 1000) -> float:
    """CPU per chunk of one litellm stream over the real HTTP path, chunks 1 ms apart, the
    transport and the request included."""
    best = float("inf")
    for _ in range(3):
        cpu, count = await _cpu_reading(_http_stream(base, chunks))
        best = min(best, cpu / count * 1e6)
    return best


async def _paced_us_per_chunk(
    open_stream: Any, streams: int, chunks: int, repeats: int = 3, to_the_end: bool = False
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
            *(_cpu_reading(open_stream(n), to_the_end) for _ in range(streams))
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


async def _model_us_per_chunk(
    base: str | None, streams: int, rate: float
) -> tuple[float, float, float]:
    """CPU per chunk, at `streams` streams of `rate` chunks a second, of (litellm over the
    real HTTP path, litellm over the offline provider, the offline provider alone); the
    first is NaN without a `base` to measure it against.

    The provider stands in for the model and its transport: its share is making and
    stamping the chunks and the wake-up of the event loop each paced chunk costs (where a
    real model's chunk arrives on a socket). litellm's share over it is what its stream
    wrapper adds on top, read as the run loop reads it. Both are taken out of the studio's
    cost, measured at the pace and concurrency the run workers read them at in the phase."""
    chunks = paced_chunks(streams)
    delay = 1 / rate
    http = float("nan")
    if base is not None:
        http = await _paced_us_per_chunk(lambda n: _http_stream(base, n, delay), streams, chunks)
    through = await _paced_us_per_chunk(lambda n: _offline_stream(n, delay), streams, chunks)
    alone = await _paced_us_per_chunk(
        lambda n: _provider_stream(n, delay), streams, chunks, to_the_end=True
    )
    return http, max(0.0, through - alone), alone


async def _assembly_us_per_chunk(chunks: int = 3000) -> float:
    """What litellm's assembly of the whole response after its last chunk (which the run
    loop skips; agents_core/runtime/model_stream.py) would add per chunk."""
    read = whole = float("inf")
    for _ in range(3):
        cpu, count = await _cpu_reading(_offline_stream(chunks, 0))
        read = min(read, cpu / count * 1e6)
        cpu, count = await _cpu_reading(_offline_stream(chunks, 0), to_the_end=True)
        whole = min(whole, cpu / count * 1e6)
    return max(0.0, whole - read)


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


def _phase(
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
    # for the phase, as the run processes keep theirs (agents_core/runtime/heap.py).
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


def idle_cpu_per_second(pids: list[int], seconds: int = 6) -> float:
    """CPU the processes spend per second with nothing to do (polls, heartbeats, timers):
    it grows with the time a phase takes, not with its deltas. The median of a few
    one-second windows: the first may still hold the warm-up's tail (runs finishing,
    connections closing), which once counted as a third of a core of "idle"."""
    windows = []
    before = sum(cpu_seconds(pid) for pid in pids)
    for _ in range(seconds):
        time.sleep(1)
        after = sum(cpu_seconds(pid) for pid in pids)
        windows.append(after - before)
        before = after
    return sorted(windows)[len(windows) // 2]


def _marginal_by_process(result: dict[str, Any], fixed: dict[str, Any]) -> list[int]:
    """What one more delta cost each process (the long phase minus the short one)."""
    extra = max(1, result["deltas"] - fixed["deltas"])
    return [
        round((long - short) * 1e6 / extra)
        for long, short in zip(result["per_process"], fixed["per_process"], strict=True)
    ]


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--streams", default="1,10,50,100")
    options.add_argument("--rate", type=float, default=30.0)
    options.add_argument("--seconds", type=float, default=8.0)
    options.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 2,
        help="run worker processes of the worker executor (default: one per core)",
    )
    options.add_argument(
        "--stagger", type=float, default=0.0, help="spread the chats' starts over this many seconds"
    )
    options.add_argument(
        "--executor",
        default="inline,worker",
        help="run executors to compare: inline (in Daphne), worker (a run worker process)",
    )
    options.add_argument(
        "--layer",
        choices=["core", "pubsub"],
        default="pubsub",
        help="channels_redis layer: pubsub (the studio's default) or core",
    )
    args = options.parse_args()
    # Stopped by SIGTERM, it still stops the processes it started (the finally blocks):
    # left running, a run worker of a stopped bench claims the next bench's runs.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.environ["STUDIO_BENCH_LAYER"] = args.layer
    user, cookie = setup()
    (ROOT / ".studio").mkdir(exist_ok=True)
    model_port = free_port()
    # The studio processes started below may send model calls to this server and no other
    # (the operator's list of model servers; agents_core/runtime/model_endpoints.py).
    os.environ["STUDIO_MODEL_API_BASES"] = f"http://127.0.0.1:{model_port}"
    model_log = ROOT / ".studio" / f"bench-sse-model-{model_port}.log"
    with open(model_log, "wb") as handle:
        model = subprocess.Popen(
            [sys.executable, "-m", "bench._sse_model", str(model_port)],
            cwd=ROOT,
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_listening(model, model_port, str(model_log))
        _run(args, user, cookie, f"http://127.0.0.1:{model_port}/v1")
    finally:
        stop_processes([model])


def _run(args: argparse.Namespace, user: Any, cookie: str, model_base: str) -> None:
    counts = [int(n) for n in args.streams.split(",")]
    p99: dict[tuple[str, int], float] = {}
    for executor in args.executor.split(","):
        for line in measure_executor(
            executor=executor,
            counts=counts,
            rate=args.rate,
            seconds=args.seconds,
            workers=args.workers,
            stagger=args.stagger,
            user=user,
            cookie=cookie,
            model_base=model_base,
        ):
            p99[(executor, line["streams"])] = line["result"]["p99"]
            _print_line(executor, line, args.rate, args.layer)
    executors = args.executor.split(",")
    if len(executors) == 2:
        first, second = executors
        for streams in counts:
            ratio = p99[(first, streams)] / max(p99[(second, streams)], 1e-9)
            print(f"ratio streams={streams} p99_{first}/p99_{second}={ratio:.2f}", flush=True)


def measure_executor(
    *,
    executor: str,
    counts: list[int],
    rate: float,
    seconds: float,
    workers: int,
    stagger: float,
    user: Any,
    cookie: str,
    model_base: str | None,
) -> Iterator[dict[str, Any]]:
    """Start the studio with one run executor and measure the chats at each N of `counts`,
    one after the other; yield one line of measurements per N (the processes stop when the
    generator ends or is closed). Without `model_base` (no bench._sse_model server) the
    litellm-over-HTTP figures and the assembly estimate are NaN and not measured."""
    asyncio.run(_assembly_us_per_chunk(300))  # imports and first calls
    if model_base is not None:
        asyncio.run(_litellm_http_us_per_chunk(model_base, 100))
    port = free_port()
    stats_file = str(ROOT / ".studio" / f"bench-runtime-stats-{port}.json")
    procs = _start(executor, port, stats_file, workers)
    pids = [proc.pid for proc in procs]
    base = f"http://127.0.0.1:{port}"
    try:
        # Warm up: the first chat imports litellm where runs execute (seconds of CPU).
        for attempt in range(3):
            try:
                _phase(user, cookie, base, pids, len(pids), 50, 1)
                break
            except Exception as exc:  # noqa: BLE001
                print(f"# warm-up attempt {attempt + 1} failed: {exc}", file=sys.stderr)
        idle = idle_cpu_per_second(pids)
        print(
            f"# executor={executor}: idle CPU {idle * 100:.1f}% of a core (taken out "
            f"of studio_us_per_delta per second of each phase)",
            file=sys.stderr,
            flush=True,
        )
        for streams in counts:
            result = _phase(user, cookie, base, pids, streams, rate, seconds, stagger)
            # The same chats with 2 deltas each: what a run costs whatever its length
            # (setup, memory, saving the step, the tool call, the second model call).
            fixed = _phase(user, cookie, base, pids, streams, rate, 2 / rate, stagger)
            # Measured now, between the phases: a shared machine's speed drifts.
            http_us, litellm_us, provider_us = asyncio.run(
                _model_us_per_chunk(model_base, streams, rate)
            )
            unpaced_us = assembly_us = float("nan")
            if model_base is not None:
                unpaced_us = asyncio.run(_litellm_http_us_per_chunk(model_base))
                assembly_us = asyncio.run(_assembly_us_per_chunk())
            model_us = litellm_us + provider_us
            studio_us = (
                result["cpu"] - idle * result["wall"] - fixed["cpu"] + idle * fixed["wall"]
            ) * 1e6 / (result["deltas"] - fixed["deltas"]) - model_us
            yield {
                "streams": streams,
                "result": result,
                "fixed": fixed,
                "http_us": http_us,
                "litellm_us": litellm_us,
                "provider_us": provider_us,
                "unpaced_us": unpaced_us,
                "assembly_us": assembly_us,
                "model_us": model_us,
                "studio_us": studio_us,
                "all_in_us": result["cpu"] * 1e6 / result["deltas"] - model_us,
                "ms_per_run": fixed["cpu"] * 1000 / streams,
            }
    finally:
        stop_processes(procs)


def _print_line(executor: str, line: dict[str, Any], rate: float, layer: str) -> None:
    result, fixed, streams = line["result"], line["fixed"], line["streams"]
    studio_us, http_us, litellm_us = line["studio_us"], line["http_us"], line["litellm_us"]
    print(
        f"executor={executor} streams={streams} rate={rate:g} "
        f"delivered={result['delivered']} lost={result['lost']} "
        f"p50_ms={result['p50']:.1f} p99_ms={result['p99']:.1f} "
        f"studio_us_per_delta={studio_us:.0f} "
        f"litellm_us_per_delta={http_us:.0f} "
        f"litellm_offline_us_per_delta={litellm_us:.0f} "
        f"provider_us_per_delta={line['provider_us']:.0f} "
        f"studio_over_litellm={studio_us / http_us:.2f} "
        f"studio_over_litellm_offline={studio_us / litellm_us:.2f} "
        f"studio_ms_per_run={line['ms_per_run']:.1f} "
        f"all_in_us_per_delta={line['all_in_us']:.0f} "
        f"litellm_unpaced_us_per_delta={line['unpaced_us']:.0f} "
        f"studio_over_litellm_unpaced={studio_us / line['unpaced_us']:.2f}",
        flush=True,
    )
    print(
        f"#  layer={layer}; {result['deltas']} deltas in "
        f"{result['wall']:.1f} s; studio CPU {result['cpu']:.1f} s "
        f"({result['cpu'] / result['wall'] * 100:.0f}% of a core; by process "
        f"{[round(c / result['wall'] * 100) for c in result['per_process']]}%; "
        f"the clients {result['clients_cpu'] / result['wall'] * 100:.0f}%); "
        f"marginal us per delta by process (Daphne first, litellm and the "
        f"provider in the workers' or inline Daphne's) "
        f"{_marginal_by_process(result, fixed)}; "
        f"sequence gaps "
        f"seen by clients: {result['gaps']}; run errors: "
        f"{len(result['errors'])} {result['errors'][:1]}; from a message to its "
        f"run-start p50/max ms {percentile(result['start_ms'], 0.5):.0f}/"
        f"{max(result['start_ms'], default=float('nan')):.0f}; p99 ms second by "
        f"second: {result['p99_by_second']}; litellm and the provider alone "
        f"need {streams * rate * line['model_us'] / 1e6:.2f} of the machine's "
        f"{os.cpu_count()} cores at this rate; litellm's assembly of the whole "
        f"response, which the run loop skips, would add {line['assembly_us']:.0f} us "
        f"per chunk",
        file=sys.stderr,
        flush=True,
    )


if __name__ == "__main__":
    main()
