"""Run an author's Python code in a fresh, isolated interpreter (no Django imports here:
the `sandbox` service of docker-compose runs this module alone).

Each call execs a NEW `/usr/bin/python3 -I -S` (never a fork of the server, which would
inherit SECRET_KEY and database sockets), with, from strongest to weakest:
- "bwrap": bubblewrap, every namespace unshared (own network namespace: not even the
  host's 127.0.0.1 is reachable), a fresh /proc, read-only /usr, tmpfs /tmp, no env;
- "unshare": `unshare -r -n` (own user and network namespace);
- "rlimits": no namespaces, only what follows.
Whatever the mode: an empty environment, an unprivileged uid (nobody) when the server is
root, rlimits set in the child only (CPU, address space, files, file size, processes), a
wall-clock timeout that kills the whole process group, bounded stdout/stderr.
The mode is detected once per process (the first that runs a probe) and reported in
every result as `isolation`; STUDIO_SANDBOX_ISOLATION=bwrap|unshare|rlimits forces one.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import resource
import secrets
import signal
import subprocess
import time
from functools import cache
from pathlib import Path
from typing import Any

RUNNER = (Path(__file__).with_name("runner.py")).read_text()
MODES = ("bwrap", "unshare", "rlimits")
MEMORY_BYTES = 512 * 1024 * 1024
MAX_STDOUT = 8 * 1024 * 1024
MAX_STDERR = 256 * 1024
NOBODY = 65534
ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def _limits(cpu_seconds: int) -> None:
    """preexec_fn: runs in the child after fork, before exec; never in the server."""
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024 * 1024, 16 * 1024 * 1024))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # NPROC counts every task of the uid: tight for `nobody`, loose for a non-root
    # server whose own threads count too (the pid namespace bounds bwrap runs anyway).
    nproc = 32 if os.geteuid() == NOBODY else 1024
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def _bwrap_args() -> list[str]:
    args = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--clearenv"]
    for name, value in ENV.items():
        args += ["--setenv", name, value]
    args += ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/lib", "/lib64", "/sbin"):
        path = Path(top)
        if path.is_symlink():
            args += ["--symlink", os.readlink(top), top]
        elif path.is_dir():
            args += ["--ro-bind", top, top]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--chdir", "/tmp", "--"]  # noqa: S108 - a fresh tmpfs
    return args


def command(mode: str, python: str, program: str) -> list[str]:
    interpreter = [python, "-I", "-S", "-c", program]
    if mode == "bwrap":
        return [*_bwrap_args(), *interpreter]
    if mode == "unshare":
        return ["unshare", "-r", "-n", "--", *interpreter]
    if mode == "rlimits":
        return interpreter
    raise ValueError(f"Unknown isolation mode {mode!r}")


def _identity() -> dict[str, Any]:
    if os.geteuid() != 0:
        return {}
    return {"user": NOBODY, "group": NOBODY, "extra_groups": []}


def _probe(mode: str, python: str) -> bool:
    try:
        done = subprocess.run(
            command(mode, python, "print('sandbox-ok')"),
            capture_output=True,
            timeout=10,
            env=ENV,
            cwd="/",
            start_new_session=True,
            preexec_fn=lambda: _limits(5),  # noqa: PLW1509 - the child's own limits
            **_identity(),
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.strip() == b"sandbox-ok"


@cache
def detect_isolation(python: str = "/usr/bin/python3") -> str:
    """The strongest mode that works on this machine (probed once per process)."""
    forced = os.environ.get("STUDIO_SANDBOX_ISOLATION", "")
    if forced:
        return forced
    for mode in MODES:
        if _probe(mode, python):
            return mode
    raise RuntimeError(f"{python} cannot run even with rlimits only.")


def available_modes(python: str = "/usr/bin/python3") -> list[str]:
    return [mode for mode in MODES if _probe(mode, python)]


async def _read(stream: asyncio.StreamReader, limit: int) -> tuple[bytes, bool]:
    data = bytearray()
    over = False
    while chunk := await stream.read(65536):
        if len(data) < limit:
            data += chunk[: limit - len(data)]
        else:
            over = True  # keep draining so the child never blocks on a full pipe
    return bytes(data), over or len(data) >= limit


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


async def sandbox_run(
    code: str,
    input: Any,  # noqa: A002
    *,
    timeout: float,
    python: str = "/usr/bin/python3",
    isolation: str | None = None,
) -> dict[str, Any]:
    """Run `code` on `input`; returns {ok, output | error, traceback, stdout, stderr,
    isolation, exit_code, duration_ms}. Never raises for anything the code does."""
    mode = isolation or detect_isolation(python)
    marker = f"@@studio-result-{secrets.token_hex(16)}@@"
    request = json.dumps({"code": code, "input": input, "marker": marker}).encode()
    started = time.perf_counter()
    cpu = max(1, math.ceil(timeout)) + 1
    proc = await asyncio.create_subprocess_exec(
        *command(mode, python, RUNNER),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=ENV,
        cwd="/",
        start_new_session=True,
        preexec_fn=lambda: _limits(cpu),
        **_identity(),  # noqa: PLW1509
    )
    timed_out = False
    try:
        proc.stdin.write(request)
        await proc.stdin.drain()
        proc.stdin.close()
        reads = asyncio.gather(_read(proc.stdout, MAX_STDOUT), _read(proc.stderr, MAX_STDERR))
        try:
            (stdout, _), (stderr, _) = await asyncio.wait_for(reads, timeout=timeout)
            await asyncio.wait_for(proc.wait(), timeout=2)
        except TimeoutError:
            timed_out = True
            _kill_group(proc)
            stdout, stderr = b"", b""
    except (BrokenPipeError, ConnectionResetError):
        stdout, stderr = b"", b""
    finally:
        # Also on cancellation (the pipeline's own timeout or an abort).
        _kill_group(proc)
        await proc.wait()
    result = _parse(stdout, marker)
    result.update(
        stderr=stderr.decode("utf-8", "replace"),
        isolation=mode,
        exit_code=proc.returncode,
        duration_ms=round((time.perf_counter() - started) * 1000, 3),
    )
    if timed_out:
        result.update(ok=False, error=f"The code ran longer than {timeout:g} s and was stopped.")
    elif "ok" not in result:
        result.update(ok=False, error=_death_reason(proc.returncode))
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


def _death_reason(code: int | None) -> str:
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        hints = {"SIGXCPU": " (CPU time limit)", "SIGKILL": " (killed: a limit was reached)"}
        return f"The code's process was stopped by {name}{hints.get(name, '')}."
    return f"The code's process exited with code {code} without a result."
