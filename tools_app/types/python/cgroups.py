"""One control group per sandboxed run, over cgroup v2 or v1 behind one small interface.

A run's cgroup receives the run's first process before it execs bubblewrap (a shell
that writes "0" to the cgroup's join file and execs the rest, isolation.spawn_args, or
`RunCgroup.join` between fork and exec where that shell cannot be used), so every
process of the run is inside it from its first instruction. It caps the run's process
count (pids), its memory with no swap (memory), its CPU share when the cpu controller is
there, and `kill` ends the whole tree, setsid grandchildren included. The cgroups are
nested under the server's own cgroup (in each v1 hierarchy, or the v2 one), in
`studio-sandbox/run-<pid>-<n>`, so whatever limit the server itself lives under still
holds for its runs.

The join file is `cgroup.procs` on v2 and `tasks` on v1. `tasks` moves the writing
thread alone; the shell has one thread, so that is the whole process, and for a thread
moving itself the kernel skips the global threadgroup lock that `cgroup.procs` takes,
whose writer waits for an RCU grace period: most of a run's start on demand under load
(docs/benchmarks.md, "Python sandbox").

v2 is used when the unified hierarchy offers the pids and memory controllers; v1 when
the pids and memory hierarchies are mounted and writable; otherwise `backend_detect`
reports why not and the sandbox runs without cgroups (per-run uid, rlimits, pid
namespace). Standard library only: the sandbox service uses it without Django settings.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

BASE_NAME = "studio-sandbox"
REQUIRED = ("pids", "memory")
# Files a kernel without swap accounting does not have: skipped when absent.
OPTIONAL_FILES = frozenset({"memory.memsw.limit_in_bytes", "memory.swap.max"})
CPU_PERIOD_US = 100_000
_names = itertools.count(1)


class CgroupError(Exception):
    """A cgroup could not be prepared; the message says which file and why."""


@dataclass(frozen=True)
class RunLimits:
    pids: int
    memory_bytes: int
    cpus: float  # 0: no CPU cap


@dataclass
class RunCgroup:
    """The cgroup directories of one run (one per v1 hierarchy, one for v2)."""

    version: str
    dirs: list[Path]
    # What a single-threaded process writes "0" to, to move itself in (module docstring).
    join_files: list[bytes] = field(default_factory=list)

    def join(self) -> None:
        """Runs in the child between fork and exec (one thread): moves the child into
        the run's cgroups ("0" names the writer). Plain os calls only: no locks, no
        imports."""
        for path in self.join_files:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)

    def pids(self) -> list[int]:
        found: set[int] = set()
        for directory in self.dirs:
            with contextlib.suppress(OSError):
                text = (directory / "cgroup.procs").read_text()
                found.update(int(line) for line in text.split())
        return sorted(found)

    def kill(self, *, within: float = 5.0) -> bool:
        """SIGKILL every process of the run until none is left; True once empty."""
        if self.version == "v2":
            with contextlib.suppress(OSError):
                (self.dirs[0] / "cgroup.kill").write_text("1")
        deadline = time.monotonic() + within
        pause = 0.0005
        while pids := self.pids():
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > deadline:
                return False
            # A killed process leaves within about a millisecond: look again soon, then
            # less often (a run's end waits for this).
            time.sleep(pause)
            pause = min(pause * 2, 0.01)
        return True

    def memory_killed(self) -> bool:
        """Whether the kernel killed a process of this run at the memory limit."""
        name = "memory.events" if self.version == "v2" else "memory.oom_control"
        for directory in self.dirs:
            with contextlib.suppress(OSError, ValueError):
                for line in (directory / name).read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and int(value) > 0:
                        return True
        return False

    def remove(self) -> None:
        for directory in self.dirs:
            pause, deadline = 0.0005, time.monotonic() + 0.5
            # The kernel frees a killed task's cgroup asynchronously: EBUSY until then.
            while True:
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(pause)
                    pause = min(pause * 2, 0.01)


class CgroupBackend:
    """Where runs' cgroups are made: `bases` maps a controller to its parent directory."""

    def __init__(self, version: str, bases: dict[str, Path]) -> None:
        self.version = version
        self.bases = bases

    @property
    def controllers(self) -> tuple[str, ...]:
        return tuple(self.bases) if self.version == "v1" else _v2_controllers(self.bases)

    def describe(self) -> str:
        return f"cgroup {self.version}"

    def create(self, limits: RunLimits) -> RunCgroup:
        name = f"run-{os.getpid()}-{next(_names)}"
        run = RunCgroup(self.version, [])
        try:
            for base in self.bases.values():
                (base / name).mkdir()
                run.dirs.append(base / name)
        except OSError as exc:
            run.remove()
            raise CgroupError(f"cannot create {base / name}: {exc}") from None
        if self.version == "v2":
            self._apply(run, _v2_settings(limits, self.controllers))
        else:
            self._apply(run, _v1_settings(limits, set(self.bases)))
        join = "cgroup.procs" if self.version == "v2" else "tasks"
        run.join_files = [os.fsencode(d / join) for d in run.dirs]
        return run

    def check(self) -> None:
        """Create and remove one run cgroup: the base may exist and still be read-only
        to this process (made by another user)."""
        self.create(RunLimits(pids=8, memory_bytes=64 * 1024 * 1024, cpus=0)).remove()

    def sweep(self) -> int:
        """Remove the empty run cgroups of servers that are gone (a server killed while a
        spare or a run waited leaves its cgroup behind); returns how many. A cgroup that
        still holds a process is left alone, for its uid's kill to find."""
        removed = 0
        for base in self.bases.values():
            for directory in base.glob("run-*-*"):
                pid = directory.name.split("-")[1]
                if not pid.isdigit() or Path("/proc", pid).exists():
                    continue
                with contextlib.suppress(OSError):
                    directory.rmdir()
                    removed += 1
        return removed

    def _apply(self, run: RunCgroup, settings: list[tuple[str, str]]) -> None:
        for filename, value in settings:
            directory = next((d for d in run.dirs if (d / filename).exists()), None)
            if directory is None and filename in OPTIONAL_FILES:
                continue
            try:
                if directory is None:
                    raise FileNotFoundError(f"no {filename} in {run.dirs}")
                (directory / filename).write_text(value)
            except OSError as exc:
                run.remove()
                raise CgroupError(f"could not write {value} to {filename}: {exc}") from None


def _v1_settings(limits: RunLimits, controllers: set[str]) -> list[tuple[str, str]]:
    memory = str(limits.memory_bytes)
    settings = [("pids.max", str(limits.pids)), ("memory.limit_in_bytes", memory)]
    settings.append(("memory.memsw.limit_in_bytes", memory))  # no swap either
    if limits.cpus > 0 and "cpu" in controllers:
        settings += [
            ("cpu.cfs_period_us", str(CPU_PERIOD_US)),
            ("cpu.cfs_quota_us", str(int(limits.cpus * CPU_PERIOD_US))),
        ]
    return settings


def _v2_settings(limits: RunLimits, controllers: tuple[str, ...]) -> list[tuple[str, str]]:
    settings = [
        ("pids.max", str(limits.pids)),
        ("memory.max", str(limits.memory_bytes)),
        ("memory.swap.max", "0"),
    ]
    if limits.cpus > 0 and "cpu" in controllers:
        settings.append(("cpu.max", f"{int(limits.cpus * CPU_PERIOD_US)} {CPU_PERIOD_US}"))
    return settings


def _v2_controllers(bases: dict[str, Path]) -> tuple[str, ...]:
    try:
        return tuple((bases["unified"] / "cgroup.subtree_control").read_text().split())
    except OSError:
        return REQUIRED


# --- detection ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Mount:
    path: Path
    root: str
    fstype: str
    options: frozenset[str]


def _mounts() -> list[Mount]:
    mounts = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        head, _, tail = line.partition(" - ")
        fields, tail_fields = head.split(), tail.split()
        if len(fields) < 5 or len(tail_fields) < 3:
            continue
        fstype = tail_fields[0]
        if fstype in ("cgroup", "cgroup2"):
            options = frozenset(tail_fields[2].split(","))
            mounts.append(Mount(Path(_unescape(fields[4])), fields[3], fstype, options))
    return mounts


def _unescape(path: str) -> str:
    return path.replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")


def _own_cgroups() -> dict[str, str]:
    """controller (or "unified") -> this process's cgroup path in that hierarchy."""
    own = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else ["unified"]:
            own[name] = path
    return own


def _inside(mount: Mount, path: str) -> Path | None:
    """The directory of cgroup `path` under `mount`, if the mount shows it."""
    root = mount.root.rstrip("/")
    if root and not (path == root or path.startswith(root + "/")):
        return None
    return mount.path / path[len(root) :].lstrip("/")


def backend_detect(*, move_self: bool = False) -> tuple[CgroupBackend | None, str]:
    """The backend this process can use, or None and the reason."""
    mounts, own = _mounts(), _own_cgroups()
    reasons = []
    for version, attempt in (("v2", _detect_v2), ("v1", _detect_v1)):
        try:
            backend = attempt(mounts, own, move_self=move_self)
        except CgroupError as exc:
            reasons.append(str(exc))
            continue
        except OSError as exc:
            reasons.append(f"cgroup {version}: {exc}")
            continue
        try:
            backend.check()
        except CgroupError as exc:
            reasons.append(f"cgroup {version}: {exc}")
            continue
        return backend, ""
    return None, "; ".join(reasons)


def _detect_v2(mounts: list[Mount], own: dict[str, str], *, move_self: bool) -> CgroupBackend:
    mount = next((m for m in mounts if m.fstype == "cgroup2"), None)
    if mount is None or "unified" not in own:
        raise CgroupError("cgroup v2: not mounted")
    current = _inside(mount, own["unified"])
    if current is None:
        raise CgroupError("cgroup v2: this process's cgroup is not visible")
    available = set((current / "cgroup.controllers").read_text().split())
    if not set(REQUIRED) <= available:
        raise CgroupError(
            f"cgroup v2: the controllers {', '.join(REQUIRED)} are not available to "
            f"{current} (found: {', '.join(sorted(available)) or 'none'})"
        )
    wanted = [c for c in (*REQUIRED, "cpu") if c in available]
    try:
        parent, wanted = _v2_parent(current, wanted, move_self=move_self)
        base = parent / BASE_NAME
        base.mkdir(exist_ok=True)
        _v2_write(base / "cgroup.subtree_control", wanted)
    except OSError as exc:
        raise CgroupError(f"cgroup v2: cannot delegate under {current}: {exc}") from None
    backend = CgroupBackend("v2", {"unified": base})
    _sweep(base)
    return backend


def _v2_parent(current: Path, wanted: list[str], *, move_self: bool) -> tuple[Path, list[str]]:
    """The cgroup under which the runs' cgroups go, and the controllers they get.

    This process's own cgroup, once its controllers are enabled for children. The kernel
    refuses that (EBUSY) for a non-root cgroup that holds processes: the sandbox service,
    alone in its container, then moves them into a `service` leaf first, as container
    inits do; any other server uses its parent cgroup when that was delegated to it with
    the controllers enabled (systemd Delegate=yes with DelegateSubgroup= runs a service
    in such a leaf)."""
    try:
        _v2_write(current / "cgroup.subtree_control", wanted)
        return current, wanted
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            raise
    if move_self:
        leaf = current / "service"
        leaf.mkdir(exist_ok=True)
        for pid in (current / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                (leaf / "cgroup.procs").write_text(pid)
        _v2_write(current / "cgroup.subtree_control", wanted)
        return current, wanted
    parent = current.parent
    enabled = set((parent / "cgroup.subtree_control").read_text().split())
    if set(REQUIRED) <= enabled and os.access(parent, os.W_OK):
        return parent, [c for c in wanted if c in enabled]
    raise OSError(
        errno.EBUSY,
        f"{current} holds processes and {parent} is not delegated to this process",
    )


def _v2_write(path: Path, controllers: list[str]) -> None:
    path.write_text(" ".join(f"+{c}" for c in controllers))


def _detect_v1(mounts: list[Mount], own: dict[str, str], *, move_self: bool) -> CgroupBackend:
    bases: dict[str, Path] = {}
    for controller in (*REQUIRED, "cpu"):
        mount = next((m for m in mounts if m.fstype == "cgroup" and controller in m.options), None)
        current = _inside(mount, own.get(controller, "/")) if mount else None
        if current is None:
            if controller in REQUIRED:
                raise CgroupError(f"cgroup v1: no {controller} hierarchy is mounted")
            continue
        try:
            (current / BASE_NAME).mkdir(exist_ok=True)
        except OSError as exc:
            if controller in REQUIRED:
                raise CgroupError(
                    f"cgroup v1: cannot create {current / BASE_NAME}: {exc}"
                ) from None
            continue
        bases[controller] = current / BASE_NAME
    for base in bases.values():
        _sweep(base)
    return CgroupBackend("v1", bases)


def _sweep(base: Path) -> None:
    """Remove the run cgroups a dead server process left behind (empty ones only)."""
    for entry in base.glob("run-*-*"):
        owner = entry.name.split("-")[1]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            with contextlib.suppress(OSError):
                entry.rmdir()
