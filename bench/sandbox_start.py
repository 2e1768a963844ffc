"""A Python tool's sandboxed run against a bare interpreter spawn, side by side in one
run (part of `python -m bench.tool_overhead`; alone: `python -m bench.tool_overhead
--parts sandbox`). No `main()`: `python -m bench` runs it through tool_overhead.

Every round measures each variant once, in turn, so that the load of a shared machine
falls on all of them alike; the tables give medians of the rounds and ratios to the
bare spawn of the same rounds:

Before each row the bench waits until the spare is started, so that no start in the
background competes with the row measured.

1. The target: `return input` run by `sandbox_run` in one event loop (as the studio's
   server runs it) with a spare started ahead (the default, one per process; the
   bench waits `BENCH_SANDBOX_PAUSE` seconds between runs, untimed, as a chat leaves
   seconds between tool calls), next to `python3 -I -S -c pass` spawned by
   `subprocess.run`.
2. The same run started on demand (no spare): bubblewrap with its own uid and cgroup,
   without the cgroup, and the weak rlimits mode.
3. Where a start's time goes: the interpreter alone, with the imports the runner
   needed before (json, re, ast, traceback), with the runner of now, and in
   bubblewrap's namespaces with nothing else (as runs get them, then without the
   network namespace or /proc, to show what those cost; runs keep both).
4. Back to back (each run right after the previous one, so a spare is still starting):
   the latency then, and the CPU each run costs the machine all in (the server, the
   spare's start, bubblewrap, the interpreter), which a spare moves off the run's path
   but does not remove.
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import subprocess
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

ROUNDS = int(os.environ.get("BENCH_SANDBOX_ROUNDS", "40"))
PAUSE = float(os.environ.get("BENCH_SANDBOX_PAUSE", "0.3"))
OLD_RUNNER_IMPORTS = "import ast, json, os, re, sys, traceback"


def _cpu_all_in() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _print(title: str, rows: list[tuple[str, list[float]]], baseline: float) -> None:
    print(f"\n{title}")
    print(f"  {'path':<58}{'median':>10}{'p90':>10}{'ratio':>8}")
    for label, samples in rows:
        median = statistics.median(samples)
        p90 = sorted(samples)[int(len(samples) * 0.9) - 1]
        print(f"  {label:<58}{median * 1e3:>8.2f}ms{p90 * 1e3:>8.2f}ms{median / baseline:>7.2f}x")


def sandbox_starts() -> dict[str, float]:
    """Prints the tables; returns each row's ratio to the bare spawn (median over median)."""
    from tools_app.types.python import host_config, run_limits, spares
    from tools_app.types.python.isolation import available_modes, bwrap_args
    from tools_app.types.python.process import RUNNER
    from tools_app.types.python.sandbox import sandbox_run

    host, limits = host_config(), run_limits()
    warm_host = replace(host, isolation="bwrap", spares=max(1, host.spares))
    modes = available_modes(host)
    python = [host.python, "-I", "-S", "-c"]

    def spawn(*args: str) -> Callable[[], Awaitable[None]]:
        async def one() -> None:
            subprocess.run(args, check=True, stdin=subprocess.DEVNULL)  # noqa: S603

        return one

    def run_in(variant: Any, *, started: str = "") -> Callable[[], Awaitable[None]]:
        async def one() -> None:
            result = await sandbox_run("return input", 1, timeout=10, host=variant, limits=limits)
            assert result["ok"], result
            assert result["sandbox"]["started"] == (started or result["sandbox"]["started"])

        return one

    async def spare_started() -> None:
        while not spares.idle_pids():
            await asyncio.sleep(0.01)

    async def spare_ready() -> None:
        await asyncio.sleep(PAUSE)
        await spare_started()

    bare: Callable[[], Awaitable[None]] = spawn(*python, "pass")
    # bubblewrap as runs get it, and without one part, to see what each part costs.
    bwrap = bwrap_args(limits.tmp_mb)
    every_but_net = ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
    no_net = [bwrap[0], *every_but_net, *bwrap[2:]]
    at = bwrap.index("--proc")
    no_proc = bwrap[:at] + bwrap[at + 2 :]
    target = [
        ("bare spawn: python3 -I -S -c pass", bare),
        (
            "sandbox run, spare started ahead (bwrap, own uid, cgroup)",
            run_in(warm_host, started="ahead"),
        ),
    ]
    on_demand = [
        ("bwrap, own uid, own cgroup", {"isolation": "bwrap"}),
        ("bwrap, own uid, no cgroup", {"isolation": "bwrap", "cgroup": "off"}),
        ("rlimits (weak), own uid, own cgroup", {"isolation": "rlimits"}),
    ]
    cold = [
        (f"on demand: {label}", run_in(replace(host, spares=0, **changes), started="on demand"))
        for label, changes in on_demand
        if changes["isolation"] in modes
    ]
    parts = [
        ("python3 -I -S + the runner's former imports", spawn(*python, OLD_RUNNER_IMPORTS)),
        ("python3 -I -S + the runner of now (no request)", spawn(*python, RUNNER)),
        ("bwrap (namespaces, mounts) + python3 -I -S -c pass", spawn(*bwrap, *python, "pass")),
        ("  the same without a network namespace", spawn(*no_net, *python, "pass")),
        ("  the same without /proc", spawn(*no_proc, *python, "pass")),
    ]
    variants = target + cold + parts

    async def measure() -> dict[str, list[float]]:
        samples: dict[str, list[float]] = {label: [] for label, _ in variants}
        await run_in(warm_host)()  # warm up: probes, pages, the first spare
        for one in (fn for _, fn in variants):
            if one is target[1][1]:
                await spare_ready()
            await one()
        for _ in range(ROUNDS):
            for label, one in variants:
                # No spare start in flight during any row (the target's run asks for one).
                await (spare_ready() if one is target[1][1] else spare_started())
                started = time.perf_counter()
                await one()
                samples[label].append(time.perf_counter() - started)
        return samples

    async def back_to_back(variant: Any) -> tuple[list[float], float]:
        await spare_ready()
        samples, cpu = [], _cpu_all_in()
        for _ in range(ROUNDS):
            started = time.perf_counter()
            await run_in(variant)()
            samples.append(time.perf_counter() - started)
        await spare_ready()  # the last run's replacement is part of its cost
        return samples, (_cpu_all_in() - cpu) / ROUNDS

    load = os.getloadavg()
    samples = asyncio.run(measure())
    warm_b2b, warm_cpu = asyncio.run(back_to_back(warm_host))
    cold_b2b, cold_cpu = asyncio.run(back_to_back(replace(warm_host, spares=0)))
    bare_cpu = _cpu_all_in()
    for _ in range(ROUNDS):
        asyncio.run(bare())
    bare_cpu = (_cpu_all_in() - bare_cpu) / ROUNDS
    spares.discard_all()
    baseline = statistics.median(samples[target[0][0]])
    loads = f"load average {load[0]:.2f} before, {os.getloadavg()[0]:.2f} after"
    _print(
        f"Python tool run vs a bare interpreter spawn, median of {ROUNDS} interleaved rounds "
        f"({loads}; ratio to the bare spawn)",
        [(label, samples[label]) for label, _ in target + cold],
        baseline,
    )
    _print("Where a start's time goes", [(label, samples[label]) for label, _ in parts], baseline)
    _print(
        "Back to back, bwrap with own uid and cgroup",
        [("spares (1): the next run waits for its spare", warm_b2b), ("on demand", cold_b2b)],
        baseline,
    )
    print(
        f"  CPU per run, all in: with a spare {warm_cpu * 1e3:.1f} ms, on demand "
        f"{cold_cpu * 1e3:.1f} ms, a bare spawn {bare_cpu * 1e3:.1f} ms"
    )
    ratios = {label: statistics.median(values) / baseline for label, values in samples.items()}
    ratios["spares (1): the next run waits for its spare"] = statistics.median(warm_b2b) / baseline
    ratios["on demand"] = statistics.median(cold_b2b) / baseline
    return ratios
