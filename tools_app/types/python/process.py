"""One sandboxed interpreter process: started, handed its one request, waited for,
killed with its whole tree, and its output collected.

`start` execs a NEW `python3 -I -S` running runner.py (never a fork of the server,
which would inherit SECRET_KEY and database sockets) in bubblewrap, inside the run's own
cgroup, with rlimits and the run's uid (isolation.spawn_args). The process then waits
for its request on stdin: `start` may run when the request is already known (a run
started on demand) or before (a spare, tools_app.types.python.spares); either way the
process serves exactly one request and ends. Its stdout and stderr are memory files,
not pipes, so a process that outlives the run (a setsid grandchild) cannot hold the call
open. Standard library only: the sandbox service uses it without Django settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools_app.types.python.cgroups import RunCgroup
from tools_app.types.python.cgroups import RunLimits as CgroupLimits
from tools_app.types.python.isolation import (
    ENV,
    Capabilities,
    HostConfig,
    Identity,
    RunLimits,
    command,
    spawn_args,
)
from tools_app.types.python.pool import uid_kill

RUNNER = (Path(__file__).with_name("runner.py")).read_text()
MAX_STDERR = 256 * 1024


@dataclass(frozen=True)
class Ended:
    stdout: bytes
    stderr: bytes
    exit_code: int | None
    memory_killed: bool


@dataclass(eq=False)
class Started:
    """A sandboxed interpreter waiting for its one request on stdin."""

    proc: subprocess.Popen[bytes]
    out: int  # memory files of its stdout and stderr
    err: int
    identity: Identity
    cgroup: RunCgroup | None
    ahead: bool  # started before its run asked for it (a spare)
    # Set by finish: every process of the run is known dead (its uid can go back clean).
    dead: bool = False

    async def serve(self, request: bytes) -> None:
        """Hand the request (its length first: runner.py reads exactly that much) and
        wait until the process ends. Cancel it to stop waiting (a timeout)."""
        stdin = self.proc.stdin
        assert stdin is not None
        fd = stdin.fileno()
        os.set_blocking(fd, False)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await _write_all(fd, len(request).to_bytes(8, "little") + request)
        with contextlib.suppress(OSError):
            stdin.close()
        await _exited(self.proc)

    def finish(self, max_stdout: int = 0) -> Ended:
        """Kill the whole tree, reap the process, read what it wrote (at most
        `max_stdout` bytes of stdout) and remove its cgroup (blocking: call it in a
        thread). The caller gives the uid back after."""
        try:
            self.dead = kill_tree(self.proc, self.cgroup, self.identity)
            self.proc.wait()
            stdout, stderr = _contents(self.out, max_stdout), _contents(self.err, MAX_STDERR)
            memory_killed = self.cgroup is not None and self.cgroup.memory_killed()
        finally:
            self.close_fds()
            if self.cgroup is not None:
                self.cgroup.remove()
        return Ended(stdout, stderr, self.proc.returncode, memory_killed)

    def discard(self) -> None:
        """End a process that will serve no request, and give its uid back (blocking)."""
        try:
            self.finish()
        finally:
            self.identity.release(clean=self.dead)

    def close_fds(self) -> None:
        for fd in (self.out, self.err):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.out = self.err = -1
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()


def start(
    *, caps: Capabilities, host: HostConfig, limits: RunLimits, identity: Identity, ahead: bool
) -> Started:
    """The run's cgroup and process, waiting for its request. Raises CgroupError when the
    cgroup cannot be prepared, OSError or SubprocessError when the process cannot start;
    nothing is left behind then, and the caller still holds the uid."""
    cgroup = cgroup_for(caps, limits)
    # Until the request lowers it to the run's (runner.py), the most any run may get.
    cpu = max(1, math.ceil(limits.max_timeout)) + 2
    out = os.memfd_create("sandbox-stdout", os.MFD_CLOEXEC)
    err = os.memfd_create("sandbox-stderr", os.MFD_CLOEXEC)
    try:
        argv, setup = spawn_args(
            command(caps.mode or "bwrap", host.python, RUNNER, limits.tmp_mb),
            limits=limits,
            cpu_seconds=cpu,
            identity=identity,
            cgroup=cgroup,
        )
        proc = subprocess.Popen(  # noqa: S603 - a fixed program, no shell
            argv,
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=err,
            env=ENV,
            cwd="/",
            start_new_session=True,
            preexec_fn=setup,  # noqa: PLW1509 - only where spawn_args' programs are missing
        )
    except BaseException:
        os.close(out)
        os.close(err)
        kill_tree(None, cgroup, identity)
        if cgroup is not None:
            cgroup.remove()
        raise
    return Started(proc, out, err, identity, cgroup, ahead)


def cgroup_for(caps: Capabilities, limits: RunLimits) -> RunCgroup | None:
    """The run's own cgroup (CgroupError when it cannot be prepared)."""
    if caps.cgroup is None:
        return None
    memory = limits.memory_mb * 1024 * 1024
    return caps.cgroup.create(CgroupLimits(limits.pids, memory, limits.cpus))


def kill_tree(
    proc: subprocess.Popen[bytes] | None, cgroup: RunCgroup | None, identity: Identity
) -> bool:
    """Kill every process of the run; True when none is known to be left. The run's
    first process leads its own process group; bubblewrap's init dies with it and takes
    the pid namespace along; the cgroup and the run's own uid catch whatever left both
    (a setsid grandchild in rlimits mode)."""
    if proc is not None and proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    emptied = cgroup.kill() if cgroup is not None else False
    if identity.own and not emptied:  # a process cannot leave its cgroup: once empty, done
        return uid_kill(identity.uid)
    return emptied or not identity.own


async def _write_all(fd: int, data: bytes) -> None:
    loop = asyncio.get_running_loop()
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            await _ready(loop.add_writer, loop.remove_writer, fd)


async def _exited(proc: subprocess.Popen[bytes]) -> None:
    """Until the process ends, through a pidfd: it works in whichever event loop the
    run is awaited (a spare is started outside of any)."""
    pidfd = os.pidfd_open(proc.pid)
    try:
        loop = asyncio.get_running_loop()
        await _ready(loop.add_reader, loop.remove_reader, pidfd)
    finally:
        os.close(pidfd)


async def _ready(add: Any, remove: Any, fd: int) -> None:
    """Until the event loop sees `fd` ready (add/remove: its reader or writer calls)."""
    future = asyncio.get_running_loop().create_future()
    add(fd, _settle, future)
    try:
        await future
    finally:
        remove(fd)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _contents(fd: int, limit: int) -> bytes:
    """What the run wrote to a memory file, at most `limit` bytes."""
    os.lseek(fd, 0, os.SEEK_SET)
    data = bytearray()
    while len(data) < limit and (chunk := os.read(fd, min(1 << 20, limit - len(data)))):
        data += chunk
    return bytes(data)
