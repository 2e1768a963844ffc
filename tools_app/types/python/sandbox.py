"""Run an author's Python code in a fresh, isolated interpreter (standard library only,
no Django settings: the `sandbox` service of docker-compose runs this module too).

A run, in order:
1. refuses at once when this host cannot isolate runs and the operator did not accept
   weak isolation (isolation.capabilities), or when the timeout is above the maximum;
2. waits for a slot of this process's bounded pool (pool.SlotPool: a share per owner,
   round-robin between owners; `on_wait` hears why it waits and when it got its slot;
   at most `queue_wait` seconds, then a clear error that says whose runs held them);
3. takes a spare, a sandboxed interpreter started ahead for it and never used before
   (spares), or else waits for a uid of its own and starts one now (process.start: a
   NEW `python3 -I -S` in bubblewrap, inside the run's own cgroup, with rlimits and the
   run's uid; never a fork of the server, which would inherit SECRET_KEY and database
   sockets);
4. hands that process its one request, and gets its whole timeout from then (time
   spent queued does not count);
5. at its end or timeout, kills the whole tree: the process group, the pid namespace
   (bubblewrap's init dies with it), the cgroup, and every process of the run's uid,
   setsid grandchildren included; only then are the uid and the slot given back, and a
   spare is started to replace the one it took.
"""

from __future__ import annotations

import asyncio
import json
import marshal
import math
import os
import re
import secrets
import signal
import subprocess
import time
from typing import Any

from tools_app.types.python.cgroups import CgroupError
from tools_app.types.python.isolation import (
    Capabilities,
    HostConfig,
    Identity,
    RunLimits,
    capabilities,
    identity_claim,
    known_capabilities,
)
from tools_app.types.python.pool import OnWait, SandboxBusy, pool_for
from tools_app.types.python.process import Started, start
from tools_app.types.python.spares import refill, take

# A module that defines run(input) itself; anything else is the body of run(input).
DEFINES_RUN = re.compile(r"^(async\s+)?def\s+run\s*\(", re.MULTILINE)


async def sandbox_run(
    code: str,
    input: Any,  # noqa: A002
    *,
    timeout: float,
    host: HostConfig,
    limits: RunLimits,
    tenant: str = "",
    on_wait: OnWait | None = None,
) -> dict[str, Any]:
    """Run `code` on `input` for `tenant` (the owner key whose share of the pool the run
    takes); returns {ok, output | error, traceback, stdout, stderr, isolation, sandbox,
    exit_code, duration_ms, queued_ms}. Never raises for anything the code does."""
    # Probing runs processes: once per host, in a thread.
    caps = known_capabilities(host) or await asyncio.to_thread(capabilities, host)
    if caps.refusal:
        return {"ok": False, "refused": True, "error": caps.refusal, "isolation": None}
    if timeout > limits.max_timeout:
        return _failed(
            f"The tool's timeout of {timeout:g} s is above this server's maximum of "
            f"{limits.max_timeout:g} s; lower the tool's timeout.",
            caps,
            limits,
        )
    try:
        request, marker = _request(code, input, timeout)
    except ValueError as exc:
        return _failed(f"The input cannot be sent to the sandbox: {exc}", caps, limits)
    queued = time.perf_counter()
    pool = pool_for(host.pool_size, host.owner_slots)
    try:
        await pool.acquire(tenant=tenant, wait=limits.queue_wait, on_wait=on_wait)
    except SandboxBusy as exc:
        return _failed(f"{exc} Try again later.", caps, limits, busy=True)
    try:
        started = take(host, limits)
        if started is None:
            started = await _start_now(caps, host, limits, queued)
            if isinstance(started, dict):
                return started  # why it could not start
        try:
            result = await _serve(started, request, marker, timeout, caps, limits, queued)
        finally:
            started.identity.release(clean=started.dead)
        return result
    finally:
        pool.release(tenant=tenant)
        refill(host, limits, caps)


def _request(code: str, input: Any, timeout: float) -> tuple[bytes, str]:  # noqa: A002
    """What runner.py reads, and the run's marker. marshal is the interpreter's own
    format, read with no import (the input is JSON: dicts, lists, strings, numbers);
    it only ever goes from the server to the sandbox, never back."""
    marker = f"@@studio-result-{secrets.token_hex(16)}@@"
    request = {
        "code": code,
        "module": bool(DEFINES_RUN.search(code)),
        "input": input,
        "marker": marker,
        "cpu": max(1, math.ceil(timeout)),
    }
    return marshal.dumps(request), marker


async def _start_now(
    caps: Capabilities, host: HostConfig, limits: RunLimits, queued: float
) -> Started | dict[str, Any]:
    """The run's process started on demand, or the failed result that says why not."""
    identity = await _identity(host, queued + limits.queue_wait)
    if identity is None:
        return _failed(
            f"Every uid of this host's sandbox range stayed in use for "
            f"{limits.queue_wait:g} s. Try again later.",
            caps,
            limits,
            busy=True,
        )
    try:
        return start(caps=caps, host=host, limits=limits, identity=identity, ahead=False)
    except CgroupError as exc:
        identity.release()
        return _failed(f"The run's cgroup could not be prepared: {exc}", caps, limits)
    except (OSError, subprocess.SubprocessError) as exc:
        identity.release()
        return _failed(f"The sandbox could not start: {exc}", caps, limits)


async def _identity(host: HostConfig, deadline: float) -> Identity | None:
    while (identity := identity_claim(host)) is None:
        if time.perf_counter() > deadline:
            return None
        await asyncio.sleep(0.05)
    return identity


async def _serve(
    started: Started,
    request: bytes,
    marker: str,
    timeout: float,
    caps: Capabilities,
    limits: RunLimits,
    queued: float,
) -> dict[str, Any]:
    began = time.perf_counter()
    timed_out = False
    try:
        await asyncio.wait_for(started.serve(request), timeout=timeout)
    except TimeoutError:
        timed_out = True
    finally:
        # Also on cancellation (the pipeline's own deadline, or an abort).
        ended = await asyncio.to_thread(started.finish, limits.output_mb * 1024 * 1024)
    result = {} if timed_out else _parse(ended.stdout, marker)
    result.update(
        stderr=ended.stderr.decode("utf-8", "replace"),
        isolation=caps.label(limits),
        sandbox=_sandbox_info(caps, started),
        exit_code=ended.exit_code,
        duration_ms=round((time.perf_counter() - began) * 1000, 3),
        queued_ms=round((began - queued) * 1000, 3),
    )
    if timed_out:
        result.update(ok=False, error=f"The code ran longer than {timeout:g} s and was stopped.")
    elif "ok" not in result and len(ended.stdout) >= limits.output_mb * 1024 * 1024:
        error = f"The run printed more than its output limit of {limits.output_mb} MB."
        result.update(ok=False, error=error)
    elif "ok" not in result:
        result.update(ok=False, error=_death_reason(ended.exit_code, ended.memory_killed, limits))
    elif ended.memory_killed:
        result["stderr"] += (
            f"\n[sandbox] a process of this run was killed at its memory limit "
            f"({limits.memory_mb} MB).\n"
        )
    return result


def _sandbox_info(caps: Capabilities, started: Started) -> dict[str, Any]:
    identity = started.identity
    return {
        "mode": caps.mode,
        "strong": caps.strong,
        "uid": identity.uid if identity.uid is not None else os.geteuid(),
        "own_uid": identity.own,
        "cgroup": caps.cgroup.describe() if caps.cgroup else None,
        "started": "ahead" if started.ahead else "on demand",
    }


def _failed(
    error: str, caps: Capabilities, limits: RunLimits, *, busy: bool = False
) -> dict[str, Any]:
    result = {"ok": False, "error": error, "isolation": caps.label(limits)}
    if busy:
        result["busy"] = True
    return result


def _parse(stdout: bytes, marker: str) -> dict[str, Any]:
    head, found, tail = stdout.rpartition(b"\n" + marker.encode())
    if not found:
        return {"stdout": stdout.decode("utf-8", "replace")}
    try:
        result = json.loads(tail.decode("utf-8"))
    except ValueError:
        return {"stdout": stdout.decode("utf-8", "replace")}
    result["stdout"] = head.decode("utf-8", "replace")
    return result


def _death_reason(code: int | None, memory_killed: bool, limits: RunLimits) -> str:
    if memory_killed:
        return (
            f"The run reached its memory limit of {limits.memory_mb} MB and the kernel stopped it."
        )
    # A process killed by a signal: negative for the runner itself, 128 + the signal
    # when bubblewrap reports how its command ended.
    if code is not None and (code < 0 or 128 < code < 128 + 65):
        number = -code if code < 0 else code - 128
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        hints = {"SIGXCPU": " (CPU time limit)", "SIGKILL": " (killed: a limit was reached)"}
        return f"The code's process was stopped by {name}{hints.get(name, '')}."
    return f"The code's process exited with code {code} without a result."
