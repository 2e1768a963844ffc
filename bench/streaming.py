"""Concurrent preview chats against one Daphne process on the Redis channel layer.

    python -m bench.streaming [--streams 1,10,50,100] [--rate 30] [--seconds 8]
                              [--executor inline,worker] [--layer pubsub|core]
                              [--baseline <commit>]
    python -m bench.streaming --model-only [--streams 1,10,50,100] [--rate 30]

With `--baseline <commit>` (e.g. the commit before a change), each executor is measured
twice in the same run, first with the studio's code at that commit (exported with `git
archive` into .studio/), then with this checkout's, and a `ratio ... baseline` line per
executor and N compares them (p50, p99, CPU per delta all in, CPU per run: current over
baseline). The clients, the database and the model server are the same for both.

For each run executor, starts Daphne (studio.asgi) as a subprocess with REDIS_URL set
(channels_redis): `inline` executes the runs in Daphne's event loop; `worker` executes them
in one run worker process (`manage.py execute_runs`) and Daphne only relays the events. N
websocket clients (the `websockets` package) each start a chat with the offline provider
in benchmark mode: it yields `rate` deltas per second (half text, half tool-argument), each
stamped `<index>@<unix time>;` when the provider yields it. One line per executor and N:

    executor=<> streams=<N> rate=<deltas/s each> delivered=<events> lost=<count> p50_ms=<>
    p99_ms=<> studio_us_per_delta=<> litellm_us_per_delta=<> fast_us_per_delta=<>
    litellm_over_fast=<> litellm_offline_us_per_delta=<>
    provider_us_per_delta=<> studio_over_litellm=<> studio_over_litellm_offline=<>
    studio_ms_per_run=<> all_in_us_per_delta=<> litellm_unpaced_us_per_delta=<>
    studio_over_litellm_unpaced=<> fast_unpaced_us_per_delta=<>

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
fast_us_per_delta (and fast_unpaced_us_per_delta) is the same stream read on the run
loop's fast path (providers/fast_stream.py: litellm sends the request, the loop
parses the provider's events itself), measured right after litellm's, and
litellm_over_fast the ratio. `--model-only` measures just these, without the studio: for
the OpenAI and the Anthropic protocol, unpaced and at `rate` for each N, one line each
(`model protocol=<> streams=<> rate=<> litellm_us_per_chunk=<> fast_us_per_chunk=<>
litellm_over_fast=<> transport_us_per_read=<> loadavg=<>`; the transport figure is the
response's bytes alone as litellm's HTTP client delivers them, the floor under both).
litellm_offline_us_per_delta is what litellm's stream wrapper costs per chunk over the
offline provider that the chats of the bench use (litellm over the provider minus the
provider alone), read as the run loop reads it: up to litellm's last chunk, without the
assembly of the whole response litellm would do after it (see
providers/model_stream.py; what that assembly would add per chunk is on stderr).
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
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench._model_cpu import (
    assembly_us_per_chunk,
    http_paths_us_per_chunk,
    litellm_http_us_per_chunk,
    model_us_per_chunk,
    paced_chunks,
)
from bench._streaming_clients import STAMP, percentile, phase
from bench._streaming_report import print_baseline_ratio, print_line
from bench._streaming_studio import (
    ROOT,
    baseline_tree,
    cpu_seconds,
    ensure_database,
    free_port,
    idle_cpu_by_process,
    idle_cpu_per_second,
    setup,
    start_studio,
    stop_processes,
    wait_listening,
)

# What the other benchmarks (bench/traced.py, bench/vs_mastra.py, bench/_mastra.py) take
# from this one.
__all__ = [
    "ROOT",
    "STAMP",
    "cpu_seconds",
    "ensure_database",
    "free_port",
    "idle_cpu_per_second",
    "main",
    "measure_executor",
    "paced_chunks",
    "percentile",
    "setup",
    "stop_processes",
    "wait_listening",
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
        "--baseline",
        default="",
        help="a commit to measure first, beside this checkout (ratios current/baseline)",
    )
    options.add_argument(
        "--model-only",
        action="store_true",
        help="measure only the model client: litellm's stream wrapper vs the run loop's fast "
        "path, OpenAI and Anthropic protocols, unpaced and at --rate for each of --streams",
    )
    options.add_argument(
        "--protocols",
        default="openai,anthropic",
        help="with --model-only: the model protocols to measure",
    )
    options.add_argument(
        "--model-chunks",
        type=int,
        default=0,
        help="with --model-only: chunks per paced stream (default: as the chats' phases, "
        "90 up to 10 streams, 60 above; more makes the marginal figure steadier at large N, "
        "where the requests' own CPU is most of a phase's)",
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
    (ROOT / ".studio").mkdir(exist_ok=True)
    model_port = free_port()
    # The studio processes started below may send model calls to this server and no other
    # (the operator's list of model servers; providers/gate.py).
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
        if args.model_only:
            model_paths(args, f"http://127.0.0.1:{model_port}/v1")
            return
        user, cookie = setup()
        _run(args, user, cookie, f"http://127.0.0.1:{model_port}/v1")
    finally:
        stop_processes([model])


def model_paths(args: argparse.Namespace, model_base: str) -> None:
    """--model-only: litellm's stream wrapper and the run loop's fast path over litellm's
    real HTTP path, side by side, per protocol: unpaced (one stream, chunks 1 ms apart),
    then at `rate` chunks a second for each N of --streams. One line each, with the load
    average when it was measured. transport_us_per_read is the floor under both: the same
    response's bytes as litellm's HTTP client delivers them, unparsed (one read a chunk)."""
    asyncio.run(litellm_http_us_per_chunk(model_base, 100))  # imports and first calls
    paces: list[tuple[int, float | None]] = [(1, None)]
    paces += [(int(n), args.rate) for n in args.streams.split(",")]
    for protocol in args.protocols.split(","):
        for streams, rate in paces:
            wrapper, fast, transport = asyncio.run(
                http_paths_us_per_chunk(
                    model_base,
                    streams,
                    rate,
                    protocol,
                    ("wrapper", "fast", "transport"),
                    args.model_chunks,
                )
            )
            pace = "unpaced" if rate is None else f"{rate:g}"
            print(
                f"model protocol={protocol} streams={streams} rate={pace} "
                f"litellm_us_per_chunk={wrapper:.0f} fast_us_per_chunk={fast:.0f} "
                f"litellm_over_fast={wrapper / fast:.2f} "
                f"transport_us_per_read={transport:.0f} "
                f"loadavg={os.getloadavg()[0]:.2f}",
                flush=True,
            )


def _run(args: argparse.Namespace, user: Any, cookie: str, model_base: str) -> None:
    counts = [int(n) for n in args.streams.split(",")]
    p99: dict[tuple[str, int], float] = {}
    trees = [("current", ROOT)]
    if args.baseline:
        trees.insert(0, (f"baseline:{args.baseline}", baseline_tree(args.baseline)))
    lines: dict[tuple[str, str, int], dict[str, Any]] = {}
    for executor in args.executor.split(","):
        for label, root in trees:
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
                root=root,
            ):
                lines[(executor, label, line["streams"])] = line
                if label == "current":
                    p99[(executor, line["streams"])] = line["result"]["p99"]
                name = executor if len(trees) == 1 else f"{executor} tree={label}"
                print_line(name, line, args.rate, args.layer)
        if len(trees) == 2:
            for streams in counts:
                print_baseline_ratio(
                    executor,
                    streams,
                    lines[(executor, trees[0][0], streams)],
                    lines[(executor, "current", streams)],
                )
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
    root: Path = ROOT,
) -> Iterator[dict[str, Any]]:
    """Start the studio with one run executor and measure the chats at each N of `counts`,
    one after the other; yield one line of measurements per N (the processes stop when the
    generator ends or is closed). Without `model_base` (no bench._sse_model server) the
    litellm-over-HTTP figures and the assembly estimate are NaN and not measured."""
    asyncio.run(assembly_us_per_chunk(300))  # imports and first calls
    if model_base is not None:
        asyncio.run(litellm_http_us_per_chunk(model_base, 100))
    port = free_port()
    stats_file = str(ROOT / ".studio" / f"bench-runtime-stats-{port}.json")
    procs = start_studio(executor, port, stats_file, workers, root)
    pids = [proc.pid for proc in procs]
    base = f"http://127.0.0.1:{port}"
    try:
        # Warm up: the first chat imports litellm where runs execute (seconds of CPU).
        for attempt in range(3):
            try:
                phase(user, cookie, base, pids, len(pids), 50, 1)
                break
            except Exception as exc:  # noqa: BLE001
                print(f"# warm-up attempt {attempt + 1} failed: {exc}", file=sys.stderr)
        idle_by_process = idle_cpu_by_process(pids)
        idle = sum(idle_by_process)
        shown = ", ".join(f"{cpu * 1000:.2f}" for cpu in idle_by_process)
        print(
            f"# executor={executor}: idle CPU {idle * 100:.2f}% of a core, ms a second by "
            f"process (Daphne first) [{shown}] (taken out of studio_us_per_delta per "
            f"second of each phase)",
            file=sys.stderr,
            flush=True,
        )
        for streams in counts:
            result = phase(user, cookie, base, pids, streams, rate, seconds, stagger)
            # The same chats with 2 deltas each: what a run costs whatever its length
            # (setup, memory, saving the step, the tool call, the second model call).
            fixed = phase(user, cookie, base, pids, streams, rate, 2 / rate, stagger)
            # Measured now, between the phases: a shared machine's speed drifts.
            http_us, fast_us, litellm_us, provider_us = asyncio.run(
                model_us_per_chunk(model_base, streams, rate)
            )
            unpaced_us = fast_unpaced_us = assembly_us = float("nan")
            if model_base is not None:
                unpaced_us = asyncio.run(litellm_http_us_per_chunk(model_base))
                fast_unpaced_us = asyncio.run(litellm_http_us_per_chunk(model_base, path="fast"))
                assembly_us = asyncio.run(assembly_us_per_chunk())
            model_us = litellm_us + provider_us
            studio_us = (
                result["cpu"] - idle * result["wall"] - fixed["cpu"] + idle * fixed["wall"]
            ) * 1e6 / (result["deltas"] - fixed["deltas"]) - model_us
            yield {
                "streams": streams,
                "result": result,
                "fixed": fixed,
                "http_us": http_us,
                "fast_us": fast_us,
                "litellm_us": litellm_us,
                "provider_us": provider_us,
                "unpaced_us": unpaced_us,
                "fast_unpaced_us": fast_unpaced_us,
                "assembly_us": assembly_us,
                "model_us": model_us,
                "studio_us": studio_us,
                "all_in_us": result["cpu"] * 1e6 / result["deltas"] - model_us,
                "ms_per_run": fixed["cpu"] * 1000 / streams,
            }
    finally:
        stop_processes(procs)


if __name__ == "__main__":
    main()
