"""The sandbox service as its own process (python -m tools_app.types.python.server), as
docker-compose runs it: started with a shared secret and the flags a test gives."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import free_port, stop_process, wait_for_port

ROOT = Path(__file__).resolve().parents[3]
MODULE = "tools_app.types.python.server"


@dataclass
class ServiceProcess:
    url: str
    token: str
    proc: subprocess.Popen

    def call(self, path: str, body: Any = None, *, token: str | None = None) -> tuple[int, Any]:
        """(status, JSON body); a /run answer's NDJSON lines come back as a list."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.token if token is None else token}"}
        request = urllib.request.Request(self.url + path, data=data, headers=headers)  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310
                return response.status, _decoded(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, _decoded(exc.read())


def _decoded(raw: bytes) -> Any:
    lines = [json.loads(line) for line in raw.splitlines() if line.strip()]
    return lines[0] if len(lines) == 1 else lines


@contextlib.contextmanager
def sandbox_service(*flags: str, prefix: tuple[str, ...] = ()) -> Iterator[ServiceProcess]:
    """The service on a free port; `prefix`: a command that starts it (setpriv ...)."""
    port, token = free_port(), secrets.token_urlsafe(32)
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "STUDIO_SANDBOX_TOKEN": token}
    proc = subprocess.Popen(  # noqa: S603 - this checkout's own module
        [
            *prefix,
            sys.executable,
            "-m",
            "tools_app.types.python.server",
            "--port",
            str(port),
            *flags,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc=proc)
        yield ServiceProcess(f"http://127.0.0.1:{port}", token, proc)
    finally:
        stop_process(proc)


HOG = "import time\ntime.sleep(60)"


async def share_held(
    service: ServiceProcess, tenant: str, seconds: float
) -> list[asyncio.Future[dict[str, Any]]]:
    """Three runs of `tenant` sent to the service as another caller would send them;
    returns once one of them waits (the other two then hold a share of 2), while each
    goes on for `seconds` (its timeout). Cancel them to stop waiting for their answers."""
    from tools_app.types.python import run_limits
    from tools_app.types.python.remote import remote_run

    told = asyncio.Event()

    async def heard(note: str | None) -> None:
        told.set()

    limits, target = run_limits(), {"url": service.url, "token": service.token}
    runs = [
        asyncio.ensure_future(
            remote_run(
                **target,
                code=HOG,
                input=None,
                timeout=seconds,
                limits=limits,
                tenant=tenant,
                on_wait=heard,
            )
        )
        for _ in range(3)
    ]
    await asyncio.wait_for(told.wait(), 60)
    return runs


async def stopped(runs: list[asyncio.Future[Any]]) -> None:
    """Stop waiting for these runs' answers (the service's end stops the runs)."""
    for run in runs:
        run.cancel()
    await asyncio.gather(*runs, return_exceptions=True)
