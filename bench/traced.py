"""What recording traces costs: the chats of bench.streaming, traced and untraced, side by
side.

    python -m bench.traced [--streams 10,100] [--rate 30] [--seconds 8]
                           [--executor inline] [--rounds 2]

For each round, the studio is started twice with the same executor: with traces recorded
(STUDIO_TRACES=1, the default) and without (STUDIO_TRACES=0: the recorder is not
registered, the loop's observer calls find no observer). The order alternates between
rounds, so a machine that speeds up or slows down during the run weighs on both. Each
start measures N chats as bench.streaming does (studio_us_per_delta: the studio's CPU per
extra delta, the model's share taken out; p99_ms: delta latency from the provider to the
browser's socket; studio_ms_per_run: the CPU of a 2-delta chat, where the per-run spans
are written). One line per round and N, then the medians:

    traced streams=<N> studio_us_per_delta=<traced>/<untraced>=<ratio>
        p99_ms=<traced>/<untraced>=<ratio> studio_ms_per_run=<traced>/<untraced>=<ratio>

The issue's bound: at most 1.10 for the CPU per delta and for p99 at 100 chats. Uses the
databases and Redis of bench.streaming.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
from typing import Any

from bench import streaming


def measure(
    traced: bool, args: argparse.Namespace, user: Any, cookie: str, base: str
) -> dict[int, dict[str, float]]:
    os.environ["STUDIO_TRACES"] = "1" if traced else "0"
    lines = streaming.measure_executor(
        executor=args.executor,
        counts=[int(n) for n in args.streams.split(",")],
        rate=args.rate,
        seconds=args.seconds,
        workers=args.workers,
        stagger=0.0,
        user=user,
        cookie=cookie,
        model_base=base,
    )
    out = {}
    for line in lines:
        out[line["streams"]] = {
            "studio_us": line["studio_us"],
            "p99": line["result"]["p99"],
            "ms_per_run": line["ms_per_run"],
            "lost": line["result"]["lost"],
        }
        print(
            f"#  traced={int(traced)} streams={line['streams']} "
            f"studio_us_per_delta={line['studio_us']:.0f} p99_ms={line['result']['p99']:.1f} "
            f"studio_ms_per_run={line['ms_per_run']:.1f} lost={line['result']['lost']}",
            file=sys.stderr,
            flush=True,
        )
    return out


def side_by_side(label: str, streams: int, on: dict[str, float], off: dict[str, float]) -> str:
    parts = [f"{label} streams={streams}"]
    for key, name, digits in (
        ("studio_us", "studio_us_per_delta", 0),
        ("p99", "p99_ms", 1),
        ("ms_per_run", "studio_ms_per_run", 1),
    ):
        ratio = on[key] / off[key] if off[key] else float("nan")
        parts.append(f"{name}={on[key]:.{digits}f}/{off[key]:.{digits}f}={ratio:.2f}")
    return " ".join(parts)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--streams", default="10,100")
    options.add_argument("--rate", type=float, default=30.0)
    options.add_argument("--seconds", type=float, default=8.0)
    options.add_argument("--executor", default="inline", choices=["inline", "worker"])
    options.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    options.add_argument("--rounds", type=int, default=2)
    args = options.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.environ["STUDIO_BENCH_LAYER"] = "pubsub"
    user, cookie = streaming.setup()
    port = streaming.free_port()
    os.environ["STUDIO_MODEL_API_BASES"] = f"http://127.0.0.1:{port}"
    log = streaming.ROOT / ".studio" / f"bench-sse-model-{port}.log"
    log.parent.mkdir(exist_ok=True)
    with open(log, "wb") as handle:
        model = subprocess.Popen(
            [sys.executable, "-m", "bench._sse_model", str(port)],
            cwd=streaming.ROOT,
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    rounds: list[tuple[dict, dict]] = []
    try:
        streaming.wait_listening(model, port, str(log))
        base = f"http://127.0.0.1:{port}/v1"
        for number in range(args.rounds):
            order = (True, False) if number % 2 == 0 else (False, True)
            results = {traced: measure(traced, args, user, cookie, base) for traced in order}
            rounds.append((results[True], results[False]))
            for streams in results[True]:
                print(
                    side_by_side(
                        f"round={number + 1}",
                        streams,
                        results[True][streams],
                        results[False][streams],
                    ),
                    flush=True,
                )
    finally:
        streaming.stop_processes([model])
    for streams in rounds[0][0]:
        median = {
            key: statistics.median(r[0][streams][key] for r in rounds)
            for key in rounds[0][0][streams]
        }
        median_off = {
            key: statistics.median(r[1][streams][key] for r in rounds)
            for key in rounds[0][1][streams]
        }
        print(side_by_side("traced", streams, median, median_off), flush=True)


if __name__ == "__main__":
    main()
