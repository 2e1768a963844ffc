"""Spares: sandboxed interpreters started ahead of their run. A spare is a fresh process
with the run's isolation that serves exactly one run: nothing of one run (files,
globals, modules, environment, processes) reaches the next, its timeout and CPU limit
are the run's from its request on, and it never outlives its server. Real processes
throughout (bubblewrap, cgroups, /proc); every wait is bounded."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from asgiref.sync import async_to_sync

from tests.conftest import stop_process
from tests.tools_app.engine.sandbox_procs import gone, sandbox_processes, spare_pids
from tools_app.types.python import host_config, run_limits
from tools_app.types.python.isolation import capabilities
from tools_app.types.python.sandbox import sandbox_run

ROOT = Path(__file__).resolve().parents[3]

LEAVE_TRACES = """
import builtins, os, sys, types
open("/tmp/left-" + input, "w").write(input)
open("/dev/shm/left-" + input, "w").write(input)
builtins.left_behind = input
sys.modules["left_behind"] = types.ModuleType("left_behind")
os.environ["LEFT_BEHIND"] = input
if os.fork() == 0:
    os.setsid()
    os.execv("/usr/bin/sleep", ["sleep", "600." + input])
return os.getpid()
"""

LOOK_FOR_TRACES = """
import builtins, os, sys
return {
    "tmp": os.listdir("/tmp"),
    "shm": os.listdir("/dev/shm"),
    "builtins": hasattr(builtins, "left_behind"),
    "module": "left_behind" in sys.modules,
    "env": os.environ.get("LEFT_BEHIND"),
    "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
}
"""


def run(code: str, value: object, *, timeout: float = 10, host=None, tenant: str = "") -> dict:
    return async_to_sync(sandbox_run)(
        code,
        value,
        timeout=timeout,
        host=host or host_config(),
        limits=run_limits(),
        tenant=tenant,
    )


def spare_waiting(within: float = 30.0) -> set[int]:
    """The current configuration's spares once one waits (a bound, not a timed assertion)."""
    deadline = time.monotonic() + within
    while not (pids := spare_pids()):
        assert time.monotonic() < deadline, "no spare was started"
        time.sleep(0.02)
    return pids


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state not in "ZX"


def ended(pid: int, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_run_takes_a_spare_and_the_next_run_gets_a_new_one():
    run("return 0", None)  # the first run of a configuration starts on demand
    spare = spare_waiting()

    first = run("return input", 1)

    assert first["ok"] is True and first["output"] == 1
    assert first["sandbox"]["started"] == "ahead"
    assert all(ended(pid) for pid in spare), "a spare served a second request"
    replacement = spare_waiting()
    assert replacement.isdisjoint(spare)
    second = run("return input", 2)
    assert second["sandbox"]["started"] == "ahead" and second["output"] == 2


def test_nothing_of_one_run_reaches_the_next_run_of_another_user():
    token = secrets.token_hex(8)
    run("return 0", None)
    spare_waiting()

    first = run(LEAVE_TRACES, token, tenant="1")
    spare_waiting()
    second = run(LOOK_FOR_TRACES, None, tenant="2")

    assert first["ok"] is True and second["ok"] is True, (first, second)
    assert first["sandbox"]["started"] == second["sandbox"]["started"] == "ahead"
    seen = second["output"]
    assert seen["tmp"] == [] and seen["shm"] == []
    assert seen["builtins"] is False and seen["module"] is False and seen["env"] is None
    # Its own pid namespace: the runner, and bubblewrap's init.
    assert len(seen["processes"]) <= 3, seen["processes"]
    assert gone(f"sleep 600.{token}".encode())


def test_a_spare_gets_its_runs_timeout_and_cpu_limit_from_the_request():
    run("return 0", None)
    spare_waiting()
    time.sleep(1.5)  # the spare has waited longer than the run's timeout

    limits = run("import resource\nreturn resource.getrlimit(resource.RLIMIT_CPU)", None, timeout=2)
    spare_waiting()
    looping = run("while True:\n    pass", None, timeout=1)

    assert limits["sandbox"]["started"] == "ahead"
    soft, hard = limits["output"]
    assert 3 <= soft <= 4 and hard == soft + 1, limits["output"]  # the timeout + 1 s
    assert looping["sandbox"]["started"] == "ahead"
    assert looping["error"] == "The code ran longer than 1 s and was stopped."


def test_without_spares_every_run_starts_on_demand():
    host = replace(host_config(), spares=0)

    results = [run("return input", n, host=host) for n in range(2)]

    assert [r["output"] for r in results] == [0, 1]
    assert {r["sandbox"]["started"] for r in results} == {"on demand"}


def test_a_burst_of_runs_started_on_demand_all_complete():
    """The kernel gives a uid's process count back some time after its run ended: one uid
    reused run after run (64 processes each) used to end in `bwrap: Can't fork` here
    after about 60 runs. Each run now takes the next uid of the range."""
    host = replace(host_config(), spares=0)

    results = [run("return input", n, host=host) for n in range(80)]

    assert [r.get("error") for r in results if not r["ok"]] == []
    assert len({r["sandbox"]["uid"] for r in results}) == 80


def test_another_configuration_ends_the_spares_of_the_previous_one():
    run("return 0", None)
    old = spare_waiting()

    other = run("return 'other'", None, host=replace(host_config(), pool_size=3))

    assert other["output"] == "other"
    assert all(ended(pid) for pid in old)


def test_outputs_are_what_json_dumps_gives():
    value = {"tuple": [1, 2], "unicode": "é\u2603", "big": 10**30, "float": 1.5, "none": None}
    code = (
        "return {'tuple': (1, 2), 'unicode': 'é\\u2603', 'big': 10**30, 'float': 1.5,"
        " 'none': None, 3: True}"
    )

    out = run(code, None)
    nan = run("return float('nan')", None)
    opaque = run("return object()", None)
    circular = run("x = []\nx.append(x)\nreturn x", None)

    assert out["output"] == json.loads(json.dumps({**value, 3: True}))
    assert nan["error"] == "ValueError: Out of range float values are not JSON compliant"
    assert opaque["error"] == "TypeError: Object of type object is not JSON serializable"
    assert circular["error"] == "ValueError: Circular reference detected"


def test_the_spare_of_a_server_that_dies_ends_with_it():
    program = (
        "import sys, time\n"
        "from tools_app.types.python import spares\n"
        "from tools_app.types.python.isolation import HostConfig, RunLimits, capabilities\n"
        "host = HostConfig('bwrap', False, 'auto', 2000000, 1024, '/run/studio-sandbox',\n"
        "                  '/usr/bin/python3', 1, 1)\n"
        "limits = RunLimits(256, 64, 1.0, 64, 300, 60)\n"
        "spares.refill(host, limits, capabilities(host))\n"
        "while not spares.idle_pids():\n"
        "    time.sleep(0.02)\n"
        "print(*spares.idle_pids(), flush=True)\n"
        "time.sleep(600)\n"
    )
    server = subprocess.Popen(  # noqa: S603
        [sys.executable, "-c", program],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
    )
    try:
        assert server.stdout is not None
        pids = [int(pid) for pid in server.stdout.readline().split()]
        assert pids and all(alive(pid) for pid in pids)
        server.send_signal(signal.SIGKILL)  # no atexit: the spare must notice alone
        server.wait(timeout=10)
    finally:
        stop_process(server)

    assert all(ended(pid) for pid in pids)
    # Its cgroup stays behind until the next server's sweep (at its first probe).
    backend = capabilities(host_config()).cgroup
    assert backend is not None
    deadline = time.monotonic() + 15  # the kernel frees an emptied cgroup asynchronously
    while left := [d for base in backend.bases.values() for d in base.glob(f"run-{server.pid}-*")]:
        assert time.monotonic() < deadline, [(d, (d / "cgroup.procs").read_text()) for d in left]
        backend.sweep()
        time.sleep(0.05)


def test_a_waiting_spare_is_not_counted_as_a_run_left_behind():
    run("return 0", None)
    spare_waiting()

    assert sandbox_processes() == []
    assert sandbox_processes(spares=True)
    assert gone()


def test_a_forked_server_process_closes_its_copy_of_the_spares_pipes():
    run("return 0", None)
    spare_waiting()
    from tools_app.types.python import spares

    report_read, report_write = os.pipe()
    # The parent's spare and its pipe, as a prefork worker inherits them; the fork happens
    # under the store's lock, so that the spares' thread cannot move the spare meanwhile.
    # A pipe is told by its inode: after the child closes it, another at-fork handler may
    # open something else under the same descriptor number.
    with spares._store.lock:
        parent_fds = [s.proc.stdin.fileno() for s in spares._store.idle if s.proc.stdin]
        pipes = {fd: os.fstat(fd).st_ino for fd in parent_fds}
        child = os.fork()
    if child == 0:  # the forked "worker": report which of the parent's pipes it still holds
        held = []
        for fd, inode in pipes.items():
            try:
                if os.fstat(fd).st_ino == inode:
                    held.append(fd)
            except OSError:
                pass
        os.write(report_write, json.dumps(held).encode())
        os._exit(0)
    os.close(report_write)
    held = json.loads(os.read(report_read, 4096))
    os.close(report_read)
    os.waitpid(child, 0)

    result = run("return input", 7)

    assert parent_fds and held == []
    assert result["sandbox"]["started"] == "ahead" and result["output"] == 7
