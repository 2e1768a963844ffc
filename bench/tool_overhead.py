"""The studio's overhead on a trivial sync tool, and the Python sandbox's start cost.

    python -m bench.tool_overhead            (or `make bench`, which runs every bench)
    python -m bench.tool_overhead --parts sandbox   (only the Python sandbox's part)

1. `unit_convert` (a demo code tool, microseconds of work), in-process, each a median per
   call next to the direct function call: `await run_tool(...)` on one event loop (how
   the agent loop calls it: validation, timeout, output checks; no database);
   `run_tool_sync` (how REST and the CLI call it, from a thread with no event loop);
   `tool_execute` (plus the ToolRun row and its trace span); the REST execute endpoint
   in-process (Django's test client, no socket).
2. Over HTTP to one Daphne server on 127.0.0.1 (DEBUG off), the same httpx client:
   `POST /api/tools/unit_convert/execute` with token auth (a ToolRun row and its span)
   next to a bare round trip to a minimal ASGI endpoint on the same Daphne
   (bench/_asgi_ping.py). The targets (run_tool under 25 us, REST execute under 2 ms)
   are printed with the figures, and the load average before and after.
3. A Python tool's sandboxed run next to the bare spawn of `python3 -I -S -c pass`,
   with ratios: with a spare started ahead (the default), started on demand per
   isolation mode, where a start's time goes, back to back and CPU per run
   (bench/sandbox_start.py; `--parts sandbox` runs only this part).
The ToolRun rows and the user the bench creates are deleted at the end.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench._streaming_studio import free_port

ROOT = Path(__file__).resolve().parent.parent
INPUT = {"value": 3, "from": "km", "to": "mi"}
REPEAT = int(os.environ.get("BENCH_REPEAT", "200"))


def median_seconds(fn: Callable[[], Any], repeat: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def table(
    title: str, rows: list[tuple[str, float]], baseline: float, column: str = "median"
) -> None:
    print(f"\n{title}")
    print(f"  {'path':<46}{column:>12}{'ratio':>10}")
    for label, seconds in rows:
        shown = f"{seconds * 1e3:.3f}ms" if seconds >= 1e-3 else f"{seconds * 1e6:.2f}us"
        print(f"  {label:<46}{shown:>12}{seconds / baseline:>9.1f}x")


def _daphne(
    env: dict[str, str], app: str = "studio.asgi:application", root: Path = ROOT
) -> tuple[subprocess.Popen, str]:
    import socket

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), app],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("daphne did not start")


def trivial_tool() -> tuple[Any, Any, str]:
    """The demo tool `unit_convert` (definitions synced into the database), a bench user and
    its API token: (tool, user, token key). Delete the user with `trivial_tool_cleanup`."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from agents_core.registry import definitions_sync
    from tools_app.models import Tool

    call_command("migrate", verbosity=0, interactive=False)
    definitions_sync()
    tool = Tool.objects.get(name="unit_convert")
    user, _ = get_user_model().objects.get_or_create(username="bench-tool-overhead")
    token, _ = Token.objects.get_or_create(user=user)
    return tool, user, token.key


def trivial_tool_cleanup(user: Any) -> None:
    from tools_app.models import ToolRun

    ToolRun.objects.filter(created_by=user).delete()
    user.delete()


def run_tool_seconds(tool: Any, repeat: int = REPEAT) -> float:
    """Median per call of `await run_tool(...)` on one running event loop, as the agent
    loop calls it (validation, timeout, output checks; no database)."""
    import asyncio

    from tools_app.execution import ExecutionContext, run_tool

    async def calls() -> float:
        samples = []
        for _ in range(repeat + WARMUP):
            started = time.perf_counter()
            outcome = await run_tool(tool, INPUT, ExecutionContext())
            samples.append(time.perf_counter() - started)
            assert outcome.ok, outcome.error
        return statistics.median(samples[WARMUP:])

    return asyncio.run(calls())


def run_tool_sync_seconds(tool: Any, repeat: int = REPEAT) -> float:
    """Median per call of `run_tool_sync` (REST's and the CLI's way in, no event loop)."""
    from tools_app.execution import ExecutionContext, run_tool_sync

    return median_seconds(
        lambda: run_tool_sync(tool, INPUT, ExecutionContext()), repeat, warmup=WARMUP
    )


# Enough first calls for the pipeline to settle: a code tool runs in a thread of its own
# until it has shown it is fast (tools_app/types/code/pace.py), then inline.
WARMUP = 20
RUN_TOOL_TARGET_US = 25.0
REST_TARGET_MS = 2.0


def load_average() -> str:
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


def tool_paths(baseline: Path | None = None) -> None:
    from django.test.utils import setup_test_environment
    from rest_framework.test import APIClient

    from tools_app.demo import convert_units
    from tools_app.services.execute import tool_execute

    tool, user, token = trivial_tool()
    setup_test_environment()  # lets the in-process client use the "testserver" host
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    print(f"load average at the start: {load_average()}")
    try:
        direct = median_seconds(lambda: convert_units(INPUT), REPEAT * 10)
        pipeline = run_tool_seconds(tool)
        rows = [
            ("direct function call", direct),
            ("await run_tool (pipeline, no database)", pipeline),
            ("run_tool_sync (no event loop)", run_tool_sync_seconds(tool)),
            (
                "tool_execute (+ ToolRun row and span)",
                median_seconds(lambda: tool_execute(tool=tool, input=INPUT, user=user), REPEAT),
            ),
        ]

        def rest_in_process() -> None:
            response = client.post(
                "/api/tools/unit_convert/execute", {"input": INPUT}, format="json"
            )
            assert response.status_code == 200, response.content

        rows.append(
            ("REST execute, in-process (test client)", median_seconds(rest_in_process, REPEAT))
        )
        table(f"Trivial sync tool (unit_convert), median of {REPEAT} calls", rows, direct)
        http = http_paths(token, baseline=baseline)
        labels = [
            ("ping", "bare round trip: minimal ASGI endpoint"),
            ("ping_post", "the same, POST with execute's body"),
            ("execute", "REST execute (token, row, span)"),
        ]
        if baseline is not None:
            labels.append(("execute_baseline", f"REST execute at the baseline {baseline.name}"))
        table(
            f"Over HTTP to Daphne on 127.0.0.1, median of {REPEAT} calls, alternating",
            [(label, http[name]) for name, label in labels],
            http["ping"],
        )
        table(
            f"Daphne's CPU per call, over {REPEAT} calls of each",
            [(label, http[f"{name}_cpu"]) for name, label in labels],
            http["ping_cpu"] or 1e-9,
            column="per call",
        )
        for name, _ in labels[3:]:
            print(
                f"  ratio execute / {name}: wall {http['execute'] / http[name]:.3f}, "
                f"Daphne CPU {http['execute_cpu'] / (http[name + '_cpu'] or 1e-9):.3f}"
            )
        print(
            f"\n  target run_tool < {RUN_TOOL_TARGET_US:g} us: {pipeline * 1e6:.1f} us "
            f"({'holds' if pipeline * 1e6 < RUN_TOOL_TARGET_US else 'missed'})"
        )
        print(
            f"  target REST execute < {REST_TARGET_MS:g} ms: {http['execute'] * 1e3:.3f} ms "
            f"({'holds' if http['execute'] * 1e3 < REST_TARGET_MS else 'missed'}); "
            f"the bare round trip {http['ping'] * 1e3:.3f} ms"
        )
        print(f"load average at the end: {load_average()}")
    finally:
        trivial_tool_cleanup(user)


def over_http(token: str, repeat: int = REPEAT) -> float:
    """Median per call of `POST /api/tools/unit_convert/execute` with token auth, over HTTP
    to a Daphne server this starts on 127.0.0.1 (and stops)."""
    return http_paths(token, repeat)["execute"]


def http_paths(token: str, repeat: int = REPEAT, baseline: Path | None = None) -> dict[str, float]:
    """Per call over HTTP to Daphne servers this starts on 127.0.0.1 (DEBUG off) and
    stops: `ping`, a minimal ASGI endpoint (`ping_post`: POSTing execute's body to it),
    and `execute`, the REST execute with token auth, on one; with `baseline` (another
    commit's tree), `execute_baseline` on a second running that code. Medians of wall
    time, the calls alternating so that all see the same load; then each Daphne's CPU per call
    (`<name>_cpu`) over a block of its calls (PostgreSQL's share is not in it)."""
    import httpx

    from bench._asgi_ping import PING_PATH

    def env(root: Path, **extra: str) -> dict[str, str]:
        path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
        return {**os.environ, "PYTHONPATH": path, "DEBUG": "0", **extra}

    servers = {
        "execute": (ROOT, env(ROOT)),
    }
    if baseline is not None:
        servers["execute_baseline"] = (baseline, env(baseline))
    procs: dict[str, subprocess.Popen] = {}
    clients: dict[str, httpx.Client] = {}
    try:
        for name, (root, server_env) in servers.items():
            proc, base = _daphne(server_env, app="bench._asgi_ping:application", root=root)
            procs[name] = proc
            clients[name] = httpx.Client(
                base_url=base,
                trust_env=False,
                timeout=30,
                headers={"Authorization": f"Token {token}"},
            )
        for ping in ("ping", "ping_post"):
            procs[ping], clients[ping] = procs["execute"], clients["execute"]
        names = ["ping", "ping_post", *servers]
        samples: dict[str, list[float]] = {name: [] for name in names}

        def call(name: str) -> None:
            if name == "ping":
                response = clients[name].get(PING_PATH)
            elif name == "ping_post":  # the same request as execute's, body included
                response = clients[name].post(PING_PATH, json={"input": INPUT})
            else:
                response = clients[name].post(
                    "/api/tools/unit_convert/execute", json={"input": INPUT}
                )
            assert response.status_code == 200, response.text

        for index in range(repeat + WARMUP):
            for name in names:
                started = time.perf_counter()
                call(name)
                if index >= WARMUP:
                    samples[name].append(time.perf_counter() - started)
        result = {name: statistics.median(values) for name, values in samples.items()}
        for name in names:
            before = _cpu_seconds(procs[name].pid)
            for _ in range(repeat):
                call(name)
            result[f"{name}_cpu"] = (_cpu_seconds(procs[name].pid) - before) / repeat
    finally:
        for client in clients.values():
            client.close()
        for proc in set(procs.values()):
            proc.terminate()
            proc.wait(timeout=10)
    return result


def _cpu_seconds(pid: int) -> float:
    """User and system CPU of a process so far (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> None:
    import argparse

    from bench import setup_django
    from bench.sandbox_start import sandbox_starts

    parser = argparse.ArgumentParser(description="The tool path's overhead.")
    parser.add_argument(
        "--parts",
        default="tools,sandbox",
        help="comma-separated: tools (the trivial tool's paths), sandbox (a Python run's start)",
    )
    parser.add_argument(
        "--baseline",
        metavar="COMMIT",
        help="also measure this commit's code (exported into .studio/): its REST execute "
        "on a Daphne of its own among the alternating calls; its sandbox part run just "
        "before this checkout's, with current/baseline ratios",
    )
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    tree = None
    if args.baseline:
        from bench._streaming_studio import baseline_tree

        tree = baseline_tree(args.baseline)
    setup_django()
    if "tools" in parts:
        tool_paths(tree)
    if "sandbox" in parts:
        before = sandbox_baseline(tree) if tree is not None else {}
        after = sandbox_starts()
        for label, ratio in before.items():
            if label in after:
                print(
                    f"  ratio to a bare spawn, current/baseline: {label.strip()}: "
                    f"{after[label]:.2f}x / {ratio:.2f}x = {after[label] / ratio:.3f}"
                )


def sandbox_baseline(tree: Path) -> dict[str, float]:
    """The baseline tree's own sandbox part, run now in a process of its own (printed as
    it is); returns each row's ratio to the bare spawn of its rounds."""
    import re

    print(f"\n=== baseline {tree.name}: python -m bench.tool_overhead --parts sandbox ===")
    path = os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "bench.tool_overhead", "--parts", "sandbox"],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        check=True,
    )
    print(done.stdout)
    print(f"=== this checkout ({ROOT.name}) ===")
    row = re.compile(r"^  (.{58})\s*[\d.]+ms\s+[\d.]+ms\s+([\d.]+)x$")
    return {m[1].strip(): float(m[2]) for m in map(row.match, done.stdout.splitlines()) if m}


if __name__ == "__main__":
    main()
