"""The studio's overhead on a trivial sync tool, and the Python sandbox's start cost.

    python -m bench.tool_overhead            (or `make bench`, which runs every bench)
    python -m bench.tool_overhead --parts sandbox   (only the Python sandbox's part)

1. `unit_convert` (a demo code tool, microseconds of work) called:
   directly as a function; through the pipeline `run_tool` (validation, timeout, output
   checks; no database); through `tool_execute` (plus the ToolRun row); through the REST
   execute endpoint in-process (Django + DRF, no socket); and over HTTP to a Daphne
   server on 127.0.0.1 (the full round trip a browser pays). Each is a median per call
   and a ratio to the direct call.
2. A Python tool's sandboxed run next to the bare spawn of `python3 -I -S -c pass`,
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


def table(title: str, rows: list[tuple[str, float]], baseline: float) -> None:
    print(f"\n{title}")
    print(f"  {'path':<46}{'median':>12}{'ratio':>10}")
    for label, seconds in rows:
        print(f"  {label:<46}{seconds * 1e3:>10.3f}ms{seconds / baseline:>9.1f}x")


def _daphne(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "studio.asgi:application",
        ],
        cwd=ROOT,
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
    """Median per call of the tool through `run_tool` (validation, timeout, output checks;
    no database)."""
    from asgiref.sync import async_to_sync

    from tools_app.execution import ExecutionContext, run_tool

    return median_seconds(lambda: async_to_sync(run_tool)(tool, INPUT, ExecutionContext()), repeat)


def tool_paths() -> None:
    from django.test.utils import setup_test_environment
    from rest_framework.test import APIClient

    from tools_app.demo import convert_units
    from tools_app.services.execute import tool_execute

    tool, user, token = trivial_tool()
    setup_test_environment()  # lets the in-process client use the "testserver" host
    client = APIClient()
    client.force_authenticate(user)
    rows: list[tuple[str, float]] = []
    try:
        direct = median_seconds(lambda: convert_units(INPUT), REPEAT * 10)
        rows.append(("direct function call", direct))
        rows.append(("run_tool (pipeline, no database)", run_tool_seconds(tool)))
        rows.append(
            (
                "tool_execute (pipeline + ToolRun row)",
                median_seconds(lambda: tool_execute(tool=tool, input=INPUT, user=user), REPEAT),
            )
        )

        def rest_in_process() -> None:
            response = client.post(
                "/api/tools/unit_convert/execute", {"input": INPUT}, format="json"
            )
            assert response.status_code == 200, response.content

        rows.append(
            ("REST execute, in-process (Django + DRF)", median_seconds(rest_in_process, REPEAT))
        )
        rows.append(("REST execute over HTTP (Daphne, 127.0.0.1)", over_http(token)))
        table(f"Trivial sync tool (unit_convert), median of {REPEAT} calls", rows, direct)
    finally:
        trivial_tool_cleanup(user)


def over_http(token: str, repeat: int = REPEAT) -> float:
    """Median per call of `POST /api/tools/unit_convert/execute` with token auth, over HTTP
    to a Daphne server this starts on 127.0.0.1 (and stops)."""
    import httpx

    proc, base = _daphne({**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        with httpx.Client(
            base_url=base, trust_env=False, timeout=30, headers={"Authorization": f"Token {token}"}
        ) as http:

            def call() -> None:
                response = http.post("/api/tools/unit_convert/execute", json={"input": INPUT})
                assert response.status_code == 200, response.text

            return median_seconds(call, repeat, warmup=5)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


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
    parts = set(parser.parse_args(argv).parts.split(","))
    setup_django()
    if "tools" in parts:
        tool_paths()
    if "sandbox" in parts:
        sandbox_starts()


if __name__ == "__main__":
    main()
