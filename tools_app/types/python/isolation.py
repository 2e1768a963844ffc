"""How a run is isolated on this host, and whether that is enough to run at all.

Modes:
- "bwrap": bubblewrap, every namespace unshared (own user, pid, network, mount, ipc and
  uts namespaces; the host's loopback and unix sockets are out of reach), a read-only
  /usr, a fresh /proc, and a read-only root whose only writable places are the run's
  own size-capped tmpfs at /tmp (/var/tmp points into it) and at /dev/shm;
- "rlimits": no namespaces at all. Code then shares the host's network (loopback
  services included) and filesystem (unix sockets, /tmp): weak, and only ever used when
  the operator chose it (isolation "rlimits", or allow_weak when bwrap cannot start).
An `unshare -r -n` mode is deliberately absent: it leaves the host filesystem shared
(unix sockets, /tmp) and has no pid namespace; making it sound means rebuilding what
bubblewrap does.

Whatever the mode, each run also gets, where the host allows: a uid of its own from the
configured range (when the server is root), its own cgroup (pids, memory without swap,
CPU), rlimits (CPU time, address space, files, file size, processes), an empty
environment, and the whole tree killed at its timeout.

A host is "strong" when runs get bubblewrap's namespaces AND a process limit of their
own (own uid or own cgroup); anything less is weak, and refused unless opted in.
Standard library only: the sandbox service uses it without Django settings.
"""

from __future__ import annotations

import os
import resource
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tools_app.types.python.cgroups import CgroupBackend, backend_detect
from tools_app.types.python.pool import UidLease, uid_claim, uid_kill

ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
MAX_FILE_BYTES = 16 * 1024 * 1024
OPEN_FILES = 64
SH, PRLIMIT, SETPRIV = "/bin/sh", "/usr/bin/prlimit", "/usr/bin/setpriv"
# Moves the shell into the cgroups whose join files (cgroups.RunCgroup.join_files) are
# its first $1 arguments ("0" names the writer), then execs the rest: every process of
# the run is in its cgroup from the first instruction of bubblewrap on.
JOIN_CGROUPS = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do '
    'echo 0 >"$1" || { echo "sandbox: cannot join the cgroup $1" >&2; exit 125; }; '
    'shift; n=$((n - 1)); done; exec "$@"'
)
# The uid a shared-uid run drops to when the server is root but has no uid range.
NOBODY = 65534
_known: dict[HostConfig, Capabilities] = {}


@dataclass(frozen=True)
class HostConfig:
    """What the host running the sandboxes decides (settings, or the service's flags)."""

    isolation: str  # "auto" | "bwrap" | "rlimits"
    allow_weak: bool
    cgroup: str  # "auto" | "off"
    uid_base: int
    uid_count: int  # 0: no uid of its own per run
    state_dir: str
    python: str
    pool_size: int
    spares: int = 1  # sandboxed interpreters kept started ahead of their run (spares.py)
    owner_slots: int = 2  # slots of the pool one owner's runs may hold at once (pool.py)


@dataclass(frozen=True)
class RunLimits:
    """What every run gets (the studio's settings; sent along to the sandbox service)."""

    memory_mb: int
    pids: int
    cpus: float
    tmp_mb: int
    max_timeout: float
    queue_wait: float
    output_mb: int = 8  # what the run may print, its result included

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Capabilities:
    mode: str | None  # None: nothing can run
    own_uid: bool
    cgroup: CgroupBackend | None
    cgroup_problem: str
    strong: bool
    refusal: str  # "" when runs may go ahead
    problems: tuple[str, ...] = ()

    def label(self, limits: RunLimits) -> str:
        """One line for the console: what a run gets on this host."""
        parts = ["own uid" if self.own_uid else "shared uid"]
        parts.append(f"{limits.pids} processes")
        if self.cgroup is not None:
            parts.append(f"{limits.memory_mb} MB")
            if limits.cpus > 0 and "cpu" in self.cgroup.controllers:
                parts.append(f"{limits.cpus:g} CPU")
            tail = f" ({self.cgroup.describe()})"
        else:
            parts.append(f"{limits.memory_mb} MB per process")
            tail = " (rlimits, no cgroup)"
        what = ", ".join(parts) + tail
        if self.strong:
            return f"bwrap: {what}"
        if self.mode == "bwrap":
            return f"weak: bwrap without a process limit of its own: {what}"
        return f"weak: rlimits only, no network or filesystem isolation: {what}"

    def summary(self, limits: RunLimits) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "strong": self.strong,
            "own_uid": self.own_uid,
            "cgroup": self.cgroup.describe() if self.cgroup else None,
            "cgroup_problem": self.cgroup_problem,
            "refusal": self.refusal,
            "label": self.label(limits) if self.mode else "",
            "limits": limits.as_dict(),
        }


def bwrap_args(tmp_mb: int) -> list[str]:
    args = ["bwrap", "--unshare-all", "--unshare-user", "--disable-userns"]
    args += ["--die-with-parent", "--new-session", "--hostname", "sandbox", "--clearenv"]
    for name, value in ENV.items():
        args += ["--setenv", name, value]
    args += ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/lib", "/lib64", "/sbin"):
        path = Path(top)
        if path.is_symlink():
            args += ["--symlink", os.readlink(top), top]
        elif path.is_dir():
            args += ["--ro-bind", top, top]
    args += ["--proc", "/proc", "--dev", "/dev"]
    # The run's own tmp (fresh, capped tmpfs, never the host's) is the one writable place.
    size = str(tmp_mb * 1024 * 1024)
    args += ["--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs", "/dev/shm"]  # noqa: S108
    args += ["--dir", "/var", "--symlink", "/tmp", "/var/tmp"]  # noqa: S108
    args += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/tmp", "--"]  # noqa: S108
    return args


def command(mode: str, python: str, program: str, tmp_mb: int) -> list[str]:
    interpreter = [python, "-I", "-S", "-c", program]
    if mode == "bwrap":
        return [*bwrap_args(tmp_mb), *interpreter]
    if mode == "rlimits":
        return interpreter
    raise ValueError(f"Unknown isolation mode {mode!r} (bwrap or rlimits).")


def spawn_args(
    argv: list[str], *, limits: RunLimits, cpu_seconds: int, identity: Identity, cgroup: Any = None
) -> tuple[list[str], Any]:
    """How to start a run's first process: (its argv, a preexec_fn or None). Before it
    execs `argv`, it joins the run's cgroup, sets its rlimits and drops to the run's uid.
    With sh, util-linux's prlimit and setpriv, those are programs it execs in turn, so
    that the server spawns it with vfork: a fork of a server of a few hundred MB (page
    tables, copy-on-write) that runs a preexec_fn costs several times the interpreter's
    start (docs/benchmarks.md). Without them, child_setup does the same in a fork."""
    if not all(os.access(path, os.X_OK) for path in (SH, PRLIMIT, SETPRIV)):
        setup = child_setup(
            limits=limits, cpu_seconds=cpu_seconds, identity=identity, cgroup=cgroup
        )
        return argv, setup
    chain = []
    files = [os.fsdecode(path) for path in cgroup.join_files] if cgroup is not None else []
    if files:
        chain += [SH, "-c", JOIN_CGROUPS, "sh", str(len(files)), *files]
    memory = limits.memory_mb * 1024 * 1024
    chain += [
        PRLIMIT,
        f"--cpu={cpu_seconds}:{cpu_seconds + 1}",
        f"--as={memory}",
        f"--nofile={OPEN_FILES}",
        f"--fsize={MAX_FILE_BYTES}",
        "--core=0",
        f"--nproc={_nproc(limits, identity)}",
        "--",
    ]
    if identity.uid is not None:
        uid = identity.uid
        chain += [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    return [*chain, *argv], None


def _nproc(limits: RunLimits, identity: Identity) -> int:
    # With a uid of its own, RLIMIT_NPROC counts this run's processes only; a shared
    # uid counts every run and the server's threads, so it can only be loose.
    return limits.pids if identity.own else 1024


def child_setup(
    *, limits: RunLimits, cpu_seconds: int, identity: Identity, cgroup: Any = None
) -> Any:
    """The preexec_fn of a run where spawn_args' programs are missing: in the child,
    after fork and before exec (never in the server): join the run's cgroup, set the
    rlimits, then drop to the run's uid."""
    memory = limits.memory_mb * 1024 * 1024
    nproc = _nproc(limits, identity)
    uid = identity.uid

    def setup() -> None:
        if cgroup is not None:
            cgroup.join()
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))
        resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_FILE_BYTES, MAX_FILE_BYTES))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)

    return setup


@dataclass
class Identity:
    """The uid a run drops to (None: it keeps the server's, which is not root)."""

    uid: int | None
    lease: UidLease | None = None

    @property
    def own(self) -> bool:
        return self.lease is not None

    def release(self, *, clean: bool = True) -> None:
        """Give the uid back; `clean`: none of its processes is left."""
        if self.lease is not None:
            self.lease.release(clean=clean)


def identity_claim(host: HostConfig) -> Identity | None:
    """A uid of its own when the server is root and has a range; `nobody` when root
    without a range; the server's own uid otherwise. None while the range is all taken."""
    if os.geteuid() != 0:
        return Identity(None)
    if host.uid_count <= 0:
        return Identity(NOBODY)
    lease = uid_claim(base=host.uid_base, count=host.uid_count, lock_dir=host.state_dir)
    return Identity(lease.uid, lease) if lease else None


def _probe(mode: str, host: HostConfig) -> str:
    """ "" if `mode` runs a trivial program here the way runs are started, else why not."""
    identity = identity_claim(host)
    if identity is None:
        return "every uid of the sandbox range is in use"
    limits = RunLimits(256, 32, 0, 16, 10, 0)
    argv, setup = spawn_args(
        command(mode, host.python, "print('sandbox-ok')", limits.tmp_mb),
        limits=limits,
        cpu_seconds=5,
        identity=identity,
    )
    try:
        done = subprocess.run(  # noqa: S603 - a fixed program, no shell
            argv,
            capture_output=True,
            timeout=20,
            env=ENV,
            cwd="/",
            start_new_session=True,
            preexec_fn=setup,  # noqa: PLW1509 - only where spawn_args' programs are missing
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{mode} could not start: {exc}"
    finally:
        clean = uid_kill(identity.uid) if identity.own else True
        identity.release(clean=clean)
    if done.returncode == 0 and done.stdout.strip() == b"sandbox-ok":
        return ""
    error = done.stderr.decode("utf-8", "replace").strip()[-300:]
    return f"{mode} failed (exit {done.returncode}): {error or 'no output'}"


def known_capabilities(host: HostConfig) -> Capabilities | None:
    """What `capabilities` found for this host, if it was probed already (no probe)."""
    return _known.get(host)


@cache
def capabilities(host: HostConfig) -> Capabilities:
    """What runs get on this host (probed once per process and configuration)."""
    cgroup, cgroup_problem = (None, "cgroups are turned off")
    if host.cgroup != "off":
        cgroup, cgroup_problem = backend_detect()
        if cgroup is not None:
            cgroup.sweep()
    own_uid = os.geteuid() == 0 and host.uid_count > 0
    problems: list[str] = []
    wanted = ("bwrap", "rlimits") if host.isolation == "auto" else (host.isolation,)
    mode = None
    for candidate in wanted:
        problem = _probe(candidate, host)
        if not problem:
            mode = candidate
            break
        problems.append(problem)
    strong = mode == "bwrap" and (own_uid or cgroup is not None)
    caps = Capabilities(mode, own_uid, cgroup, cgroup_problem, strong, "", tuple(problems))
    refusal = _refusal(caps, host)
    if refusal:
        caps = Capabilities(mode, own_uid, cgroup, cgroup_problem, strong, refusal, caps.problems)
    _known[host] = caps
    return caps


def _refusal(caps: Capabilities, host: HostConfig) -> str:
    if caps.mode is None:
        return (
            "Python tools cannot run on this server: no isolation mode works here ("
            + "; ".join(caps.problems)
            + "). Install bubblewrap and allow unprivileged user namespaces."
        )
    if caps.strong or host.allow_weak or host.isolation == "rlimits":
        return ""  # strong, or weak by the operator's explicit choice
    if caps.mode == "bwrap":
        why = (
            "bubblewrap works, but runs would share one uid and no cgroup is writable ("
            f"{caps.cgroup_problem}), so one user's runs could exhaust another's processes"
        )
        fix = (
            "run the server as root (each run then gets a uid of its own) "
            "or give it a writable cgroup"
        )
    else:
        why = "bubblewrap cannot start here (" + "; ".join(caps.problems) + ")"
        fix = "install bubblewrap and allow unprivileged user namespaces"
    return (
        f"Python tools are disabled on this server: {why}. An operator can {fix}, or "
        "accept weak isolation explicitly with STUDIO_SANDBOX_ALLOW_WEAK=1."
    )


def available_modes(host: HostConfig) -> list[str]:
    return [mode for mode in ("bwrap", "rlimits") if not _probe(mode, host)]


def reset() -> None:
    """Forget what was probed (after the host changed, and between tests)."""
    capabilities.cache_clear()
    _known.clear()
