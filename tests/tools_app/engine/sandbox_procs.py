"""Finding sandbox processes from the test's side, through /proc (no sandbox API)."""

from __future__ import annotations

import os
import time
from pathlib import Path

# The runner program is passed with -c, so its text is in the cmdline of every sandbox
# process (and of the forks of one).
RUNNER_SIGNATURE = b"def _main():"


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rpartition(")")[2].split()[1])


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return "X"


def processes_with(needle: bytes) -> list[int]:
    """Live processes whose command line contains `needle` (zombies excluded)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if needle in cmdline.replace(b"\0", b" ") and _state(int(entry.name)) not in "ZX":
            found.append(int(entry.name))
    return found


def sandbox_processes(*, spares: bool = False, under: int | None = None) -> list[int]:
    """Sandbox processes started by THIS test process (other sessions may run their own),
    or by the process `under` (a sandbox service it started): those of runs, and with
    `spares` those still waiting for a run too."""
    idle = set() if spares or under else spare_pids()
    root = under or os.getpid()
    found = []
    for pid in processes_with(RUNNER_SIGNATURE):
        ancestor, hops = pid, 0
        while ancestor > 1 and hops < 12 and ancestor not in idle:
            ancestor, hops = _parent(ancestor), hops + 1
            if ancestor == root:
                found.append(pid)
                break
    return found


def spare_pids() -> set[int]:
    """The first process of each spare of this test process waiting for its run."""
    from tools_app.types.python import spares

    return spares.idle_pids()


def gone(needle: bytes | None = None, within: float = 10.0) -> bool:
    """True once no matching process is left (the kernel reaps a killed namespace
    asynchronously); a bound on the wait, not a timed assertion."""
    deadline = time.monotonic() + within
    while processes_with(needle) if needle else sandbox_processes():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
