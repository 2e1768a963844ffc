"""The per-run cgroup on this host's kernel (cgroup v1 here: pids, memory and cpu
hierarchies; the v2 hierarchy has no controllers on this machine, so the v2 backend is
not exercised by these tests)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tools_app.types.python.cgroups import RunCgroup, RunLimits, backend_detect

MB = 1024 * 1024


def read(run, name: str) -> str:
    return next((d / name).read_text().strip() for d in run.dirs if (d / name).exists())


def test_a_run_cgroup_carries_the_run_limits_and_is_removed_after():
    backend, problem = backend_detect()
    assert backend is not None, problem
    assert backend.version == "v1"

    run = backend.create(RunLimits(pids=17, memory_bytes=200 * MB, cpus=0.5))
    try:
        assert read(run, "pids.max") == "17"
        assert read(run, "memory.limit_in_bytes") == str(200 * MB)
        assert read(run, "cpu.cfs_quota_us") == "50000"
        assert read(run, "cpu.cfs_period_us") == "100000"
    finally:
        run.remove()

    assert not any(directory.exists() for directory in run.dirs)


def test_a_process_that_joins_is_in_the_run_and_kill_empties_it():
    backend, _ = backend_detect()
    run = backend.create(RunLimits(pids=8, memory_bytes=64 * MB, cpus=0))
    try:
        # join() is what a run's child calls between fork and exec.
        proc = subprocess.Popen(["/usr/bin/sleep", "60"], preexec_fn=run.join)  # noqa: PLW1509
        own = Path(f"/proc/{proc.pid}/cgroup").read_text()

        assert proc.pid in run.pids()
        assert own.count(f"/studio-sandbox/{run.dirs[0].name}\n") == len(run.dirs)
        assert run.kill() is True
        assert proc.wait(timeout=10) == -9
        assert run.pids() == []
    finally:
        run.remove()


def test_the_sweep_removes_only_empty_cgroups_of_servers_that_are_gone():
    backend, _ = backend_detect()
    ended = subprocess.Popen(["/usr/bin/true"])
    ended.wait()
    gone_empty = [base / f"run-{ended.pid}-1" for base in backend.bases.values()]
    gone_busy = [base / f"run-{ended.pid}-2" for base in backend.bases.values()]
    for directory in gone_empty + gone_busy:
        directory.mkdir()
    busy = subprocess.Popen(["/usr/bin/sleep", "60"])
    own = backend.create(RunLimits(pids=8, memory_bytes=64 * MB, cpus=0))
    try:
        for directory in gone_busy:
            (directory / "cgroup.procs").write_text(str(busy.pid))

        removed = backend.sweep()

        assert removed >= len(gone_empty)
        assert not any(directory.exists() for directory in gone_empty)
        assert all(directory.exists() for directory in gone_busy + own.dirs)
    finally:
        busy.kill()
        busy.wait()
        own.remove()
        RunCgroup(backend.version, gone_busy).remove()
