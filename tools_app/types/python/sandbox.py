"""Run an author's Python code in a fresh, isolated interpreter (standard library only,
no Django settings: the `sandbox` service of docker-compose runs this module too).

A run, in order:
1. refuses at once when this host cannot isolate runs and the operator did not accept
   weak isolation (isolation.capabilities), or when the timeout is above the maximum;
2. waits for a slot of this process's bounded pool (pool.SlotPool, at most
   `queue_wait` seconds, then a clear "busy" error) and for a uid of its own;
3. execs a NEW `python3 -I -S` (never a fork of the server, which would inherit
   SECRET_KEY and database sockets) in bubblewrap, inside the run's own cgroup, with
   rlimits and the run's uid (isolation.child_setup);
4. gets its whole timeout from the moment it starts (time spent queued does not count);
5. at its end or timeout, kills the whole tree: the process group, the pid namespace
   (bubblewrap's init dies with it), the cgroup, and every process of the run's uid,
   setsid grandchildren included; only then are the uid and the slot given back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import secrets
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from tools_app.types.python.cgroups import CgroupError, RunCgroup
from tools_app.types.python.cgroups import RunLimits as CgroupLimits
from tools_app.types.python.isolation import (
    ENV,
    Capabilities,
    HostConfig,
    Identity,
    RunLimits,
    capabilities,
    child_setup,
    command,
    identity_claim,
)
from tools_app.types.python.pool import SandboxBusy, pool_for, uid_kill

RUNNER = (Path(__file__).with_name("runner.py")).read_text()
MAX_STDOUT = 8 * 1024 * 1024
MAX_STDERR = 256 * 1024


async def sandbox_run(
    code: str,
    input: Any,  # noqa: A002
    *,
    timeout: float,
    host: HostConfig,
    limits: RunLimits,
    tenant: str = "",
) -> dict[str, Any]:
    """Run `code` on `input`; returns {ok, output | error, traceback, stdout, stderr,
    isolation, sandbox, exit_code, duration_ms, queued_ms}. Never raises for anything
    the code does."""
    caps = await asyncio.to_thread(capabilities, host)
    if caps.refusal:
        return {"ok": False, "refused": True, "error": caps.refusal, "isolation": None}
    if timeout > limits.max_timeout:
        return _failed(
            f"The tool's timeout of {timeout:g} s is above this server's maximum of "
            f"{limits.max_timeout:g} s; lower the tool's timeout.",
            caps,
            limits,
        )
    queued = time.perf_counter()
    pool = pool_for(host.pool_size)
    try:
        await pool.acquire(tenant=tenant, wait=limits.queue_wait)
    except SandboxBusy as exc:
        return _failed(f"{exc} Try again later.", caps, limits, busy=True)
    try:
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
            queued_ms = round((time.perf_counter() - queued) * 1000, 3)
            result = await _execute(code, input, timeout, caps, host, limits, identity)
            result["queued_ms"] = queued_ms
            return result
        finally:
            identity.release()
    finally:
        pool.release()


async def _identity(host: HostConfig, deadline: float) -> Identity | None:
    while (identity := identity_claim(host)) is None:
        if time.perf_counter() > deadline:
            return None
        await asyncio.sleep(0.05)
    return identity


async def _execute(
    code: str,
    input: Any,  # noqa: A002
    timeout: float,
    caps: Capabilities,
    host: HostConfig,
    limits: RunLimits,
    identity: Identity,
) -> dict[str, Any]:
    try:
        cgroup = _cgroup(caps, limits)
    except CgroupError as exc:
        return _failed(f"The run's cgroup could not be prepared: {exc}", caps, limits)
    try:
        return await _spawn_and_collect(code, input, timeout, caps, host, limits, identity, cgroup)
    finally:
        if cgroup is not None:
            await asyncio.to_thread(cgroup.remove)


async def _spawn_and_collect(
    code: str,
    input: Any,  # noqa: A002
    timeout: float,
    caps: Capabilities,
    host: HostConfig,
    limits: RunLimits,
    identity: Identity,
    cgroup: RunCgroup | None,
) -> dict[str, Any]:
    marker = f"@@studio-result-{secrets.token_hex(16)}@@"
    request = json.dumps({"code": code, "input": input, "marker": marker}).encode()
    cpu = max(1, math.ceil(timeout)) + 1
    # stdout and stderr go to memory files, not pipes: a process that outlives the run
    # (a setsid grandchild) cannot hold the call open by keeping a pipe's end.
    out = os.memfd_create("sandbox-stdout", os.MFD_CLOEXEC)
    err = os.memfd_create("sandbox-stderr", os.MFD_CLOEXEC)
    try:
        started = time.perf_counter()
        try:
            proc = await asyncio.create_subprocess_exec(
                *command(caps.mode or "bwrap", host.python, RUNNER, limits.tmp_mb),
                stdin=asyncio.subprocess.PIPE,
                stdout=out,
                stderr=err,
                env=ENV,
                cwd="/",
                start_new_session=True,
                preexec_fn=child_setup(  # noqa: PLW1509 - the child's own limits and uid
                    limits=limits, cpu_seconds=cpu, identity=identity, cgroup=cgroup
                ),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            await asyncio.to_thread(_kill_tree, None, cgroup, identity)
            return _failed(f"The sandbox could not start: {exc}", caps, limits)
        timed_out = False
        try:
            await asyncio.wait_for(_feed_and_wait(proc, request), timeout=timeout)
        except TimeoutError:
            timed_out = True
        finally:
            # Also on cancellation (the pipeline's own deadline, or an abort).
            if not proc.stdin.transport.is_closing():
                proc.stdin.transport.abort()
            await asyncio.to_thread(_kill_tree, proc, cgroup, identity)
            await proc.wait()
        duration_ms = round((time.perf_counter() - started) * 1000, 3)
        stdout, stderr = _contents(out, MAX_STDOUT), _contents(err, MAX_STDERR)
    finally:
        os.close(out)
        os.close(err)
    memory_killed = cgroup is not None and cgroup.memory_killed()
    result = {} if timed_out else _parse(stdout, marker)
    result.update(
        stderr=stderr.decode("utf-8", "replace"),
        isolation=caps.label(limits),
        sandbox=_sandbox_info(caps, identity),
        exit_code=proc.returncode,
        duration_ms=duration_ms,
    )
    if timed_out:
        result.update(ok=False, error=f"The code ran longer than {timeout:g} s and was stopped.")
    elif "ok" not in result:
        result.update(ok=False, error=_death_reason(proc.returncode, memory_killed, limits))
    elif memory_killed:
        result["stderr"] += (
            f"\n[sandbox] a process of this run was killed at its memory limit "
            f"({limits.memory_mb} MB).\n"
        )
    return result


def _contents(fd: int, limit: int) -> bytes:
    """What the run wrote to a memory file, at most `limit` bytes."""
    os.lseek(fd, 0, os.SEEK_SET)
    data = bytearray()
    while len(data) < limit and (chunk := os.read(fd, min(1 << 20, limit - len(data)))):
        data += chunk
    return bytes(data)


def _cgroup(caps: Capabilities, limits: RunLimits) -> RunCgroup | None:
    if caps.cgroup is None:
        return None
    memory = limits.memory_mb * 1024 * 1024
    return caps.cgroup.create(CgroupLimits(limits.pids, memory, limits.cpus))


async def _feed_and_wait(proc: asyncio.subprocess.Process, request: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(request)
        await proc.stdin.drain()
        proc.stdin.close()
    # stdin is the run's only pipe and it is closed: wait() ends when the process does.
    await proc.wait()


def _kill_tree(proc: Any, cgroup: RunCgroup | None, identity: Identity) -> None:
    """Kill every process of the run. The run's first process leads its own process
    group; bubblewrap's init dies with it and takes the pid namespace along; the cgroup
    and the run's own uid catch whatever left both (a setsid grandchild in rlimits mode)."""
    if proc is not None and proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    emptied = cgroup.kill() if cgroup is not None else False
    if identity.own and not emptied:  # a process cannot leave its cgroup: once empty, done
        uid_kill(identity.uid)


def _sandbox_info(caps: Capabilities, identity: Identity) -> dict[str, Any]:
    return {
        "mode": caps.mode,
        "strong": caps.strong,
        "uid": identity.uid if identity.uid is not None else os.geteuid(),
        "own_uid": identity.own,
        "cgroup": caps.cgroup.describe() if caps.cgroup else None,
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
