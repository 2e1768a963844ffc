"""One user can never break or slow another's Python tool runs, and weak isolation is never
chosen silently: each run has its own uid, cgroup and namespaces, its whole tree dies at
its timeout, no host socket or file is within its reach, a bounded pool queues runs
instead of failing them, and a host that can only isolate weakly refuses Python tools
unless the operator opted in. Real processes throughout (bubblewrap, cgroups, /proc);
every count and wait is bounded."""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings

from tests.tools_app.engine.sandbox_procs import gone, sandbox_processes
from tests.tools_app.engine.sandbox_service import sandbox_service
from tools_app.execution import ExecutionContext, run_tool
from tools_app.models import Tool
from tools_app.services.execute import tool_execute
from tools_app.services.runs import tool_run_data
from tools_app.types.python import host_config, run_limits
from tools_app.types.python.pool import SandboxBusy, SlotPool
from tools_app.types.python.sandbox import sandbox_run

ROOT = Path(__file__).resolve().parents[3]
PG_SOCKETS = [
    path
    for path in ("/run/postgresql/.s.PGSQL.5432", "/var/run/postgresql/.s.PGSQL.5432")
    if os.path.exists(path)
]

FORK_BOMB = """
import os, time
children, error = 0, None
while children < 10000:
    try:
        pid = os.fork()
    except OSError as exc:
        error = exc.strerror
        break
    if pid == 0:
        time.sleep(input["hold"])
        os._exit(0)
    children += 1
time.sleep(input["hold"])
return {"children": children, "error": error}
"""

MEMORY_HOG = """
import os, time
held = []
for _ in range(input["processes"]):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        data = b"x" * (input["mb"] * 1024 * 1024)
        os.write(w, b"1")
        time.sleep(input["hold"])
        os._exit(0)
    os.close(w)
    held.append((pid, r))
report = []
for pid, r in held:
    allocated = os.read(r, 1) == b"1"
    _, status = os.waitpid(pid, 0)
    killed = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    report.append({"allocated": allocated, "signal": killed})
return report
"""

SETSID_GRANDCHILD = """
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/usr/bin/sleep", ["sleep", input["token"]])
    os._exit(0)
os.wait()
while input["spin"]:
    pass
return "returned"
"""

REACH = """
import socket
out = {}
for path in input["unix"]:
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(2)
    try:
        s.connect(path)
        out[path] = "connected"
    except OSError as exc:
        out[path] = exc.strerror or type(exc).__name__
    finally:
        s.close()
for port in input["tcp"]:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        out[str(port)] = "connected"
    except OSError as exc:
        out[str(port)] = exc.strerror or type(exc).__name__
return out
"""

WRITES = """
out = {}
for path in input["paths"]:
    try:
        with open(path, "w") as f:
            f.write("x")
        out[path] = "written"
    except OSError as exc:
        out[path] = exc.strerror
try:
    for n in range(input["files"]):
        with open(f"/tmp/fill-{n}", "wb") as f:
            f.write(b"x" * 10 * 1024 * 1024)
    out["fill"] = "written"
except OSError as exc:
    out["fill"] = exc.strerror
return out
"""


def run_all(*coros):
    async def together():
        return await asyncio.gather(*coros)

    return async_to_sync(together)()


async def until(predicate: Callable[[], bool], within: float = 30.0) -> None:
    """Wait for `predicate` (a bound on the wait, not a timed assertion)."""
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, "the condition was not reached in time"
        await asyncio.sleep(0.05)


def context(user) -> ExecutionContext:
    return ExecutionContext(user=user)


# --- one user cannot break another's runs ------------------------------------------------
def test_one_users_fork_bomb_leaves_another_users_runs_working(python_tool, owner, teammate):
    bomb = python_tool(FORK_BOMB, owner=owner, timeout_seconds=30)
    trivial = python_tool("return input['n'] * 2", owner=teammate)

    async def scenario():
        attack = asyncio.ensure_future(run_tool(bomb, {"hold": 8}, context(owner)))
        # The bomb has forked until refused and now holds its processes.
        await until(lambda: len(sandbox_processes()) >= 24)
        victims = await asyncio.gather(
            *(run_tool(trivial, {"n": n}, context(teammate)) for n in range(8))
        )
        return victims, await attack

    victims, attack = async_to_sync(scenario)()

    assert [v.status for v in victims] == ["completed"] * 8, [v.error for v in victims]
    assert [v.output for v in victims] == [n * 2 for n in range(8)]
    assert attack.status == "completed", attack.error
    assert attack.output["error"] == "Resource temporarily unavailable"
    assert 24 <= attack.output["children"] < run_limits().pids
    assert gone()


def test_sixteen_concurrent_runs_of_several_users_all_complete(
    python_tool, owner, teammate, outsider
):
    users = [owner, teammate, outsider]
    tools = {user.pk: python_tool("return input['n']", owner=user) for user in users}

    outcomes = run_all(
        *(run_tool(tools[users[n % 3].pk], {"n": n}, context(users[n % 3])) for n in range(16))
    )

    assert [o.status for o in outcomes] == ["completed"] * 16, [o.error for o in outcomes]
    assert [o.output for o in outcomes] == list(range(16))


def test_a_memory_hog_across_processes_is_stopped_by_the_runs_memory_limit(python_tool, owner):
    # Four processes of 100 MB each: every one is under the per-process limit, together
    # they are over the run's 256 MB.
    tool = python_tool(MEMORY_HOG, timeout_seconds=30)

    run = tool_execute(tool=tool, input={"processes": 4, "mb": 100, "hold": 2}, user=owner)

    assert run.status == "completed", run.error
    killed = [child for child in run.output if child["signal"] == 9]
    survived = [child for child in run.output if child["allocated"] and not child["signal"]]
    assert killed, run.output
    assert len(survived) * 100 < run_limits().memory_mb
    assert "killed at its memory limit (256 MB)" in run.logs
    assert gone()


# --- the whole tree dies at the timeout ----------------------------------------------------
HOSTS = {
    "bwrap+cgroup": {},
    "bwrap, no cgroup": {"cgroup": "off"},
    "rlimits+cgroup": {"isolation": "rlimits"},
    "rlimits, no cgroup": {"isolation": "rlimits", "cgroup": "off"},
}


@pytest.mark.parametrize("variant", HOSTS)
def test_the_timeout_kills_a_setsid_grandchild(variant):
    token = f"600.{secrets.randbelow(10**9)}"
    host = replace(host_config(), **HOSTS[variant])

    result = async_to_sync(sandbox_run)(
        SETSID_GRANDCHILD,
        {"token": token, "spin": True},
        timeout=2,
        host=host,
        limits=run_limits(),
    )

    assert result["ok"] is False
    assert result["error"] == "The code ran longer than 2 s and was stopped."
    assert gone(f"sleep {token}".encode())


@pytest.mark.parametrize("variant", HOSTS)
def test_a_grandchild_holding_the_pipes_neither_holds_the_call_nor_survives(variant):
    token = f"600.{secrets.randbelow(10**9)}"
    host = replace(host_config(), **HOSTS[variant])

    # The code returns at once while its grandchild (a 600 s sleep, in its own session)
    # still holds stdout and stderr: the call ends with the code, not with the sleep.
    result = async_to_sync(sandbox_run)(
        SETSID_GRANDCHILD,
        {"token": token, "spin": False},
        timeout=60,
        host=host,
        limits=run_limits(),
    )

    assert result["ok"] is True, result
    assert result["output"] == "returned"
    assert gone(f"sleep {token}".encode())


# --- nothing of the host within reach -----------------------------------------------------
def test_tool_code_reaches_no_unix_socket_and_no_loopback_service(python_tool, owner, listener):
    assert PG_SOCKETS, "PostgreSQL's unix socket is expected on this host"
    for port in (5432, 6379):  # the host itself reaches them
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    tool = python_tool(REACH)

    run = tool_execute(
        tool=tool, input={"unix": PG_SOCKETS, "tcp": [5432, 6379, listener.port]}, user=owner
    )

    assert run.status == "completed", run.error
    assert set(run.output) == {*PG_SOCKETS, "5432", "6379", str(listener.port)}
    assert "connected" not in run.output.values(), run.output
    assert listener.connections() == 0


def test_tool_code_writes_nowhere_but_its_own_tmp(python_tool, owner):
    token = secrets.token_hex(8)
    own = [f"/tmp/{token}", f"/var/tmp/{token}", f"/dev/shm/{token}"]  # noqa: S108
    host_paths = [f"/{token}", f"/usr/{token}", f"/etc/{token}", f"/run/{token}"]
    tool = python_tool(WRITES)

    # 8 files of 10 MB: more than the run's 64 MB of tmp.
    run = tool_execute(tool=tool, input={"paths": own + host_paths, "files": 8}, user=owner)

    assert run.status == "completed", run.error
    assert [run.output[path] for path in own] == ["written"] * 3
    assert all(run.output[path] != "written" for path in host_paths), run.output
    assert run.output["fill"] == "No space left on device"
    for path in own + host_paths:
        assert not os.path.exists(path), f"{path} was written on the host"


# --- the pool queues runs instead of failing them ----------------------------------------
SLEEPER = "import time\nstarted = time.time()\ntime.sleep(1.5)\nreturn [started, time.time()]"


@override_settings(STUDIO_SANDBOX_POOL_SIZE=2)
def test_more_runs_than_the_pool_all_complete_each_with_its_whole_timeout(python_tool, owner):
    tool = python_tool(SLEEPER, timeout_seconds=2.5)

    outcomes = run_all(*(run_tool(tool, {}, context(owner)) for _ in range(6)))

    assert [o.status for o in outcomes] == ["completed"] * 6, [o.error for o in outcomes]
    spans = [o.output for o in outcomes]
    most_at_once = max(sum(s[0] <= t[0] < s[1] for s in spans) for t in spans)
    assert most_at_once <= 2
    # The last run started after a whole timeout had passed since the first started: its
    # time in the queue did not count against its own timeout.
    starts = sorted(span[0] for span in spans)
    assert starts[-1] - starts[0] > 2.5


@override_settings(STUDIO_SANDBOX_POOL_SIZE=1, STUDIO_SANDBOX_QUEUE_WAIT=1)
def test_a_run_that_waits_longer_than_the_queue_allows_gets_a_clear_error(
    python_tool, owner, teammate
):
    slow = python_tool("import time\ntime.sleep(4)\nreturn 'slow'", owner=owner)
    quick = python_tool("return 'quick'", owner=teammate)

    async def scenario():
        first = asyncio.ensure_future(run_tool(slow, {}, context(owner)))
        await until(lambda: bool(sandbox_processes()))
        second = await run_tool(quick, {}, context(teammate))
        return await first, second

    first, second = async_to_sync(scenario)()

    assert first.status == "completed" and first.output == "slow"
    assert second.status == "failed"
    assert second.error == (
        "Waited 1 s for a sandbox slot: all 1 slots of the sandbox stayed in use all that "
        "time, so this run did not start. Try again later."
    )


def test_freed_slots_go_round_robin_across_users():
    pool = SlotPool(1)
    order: list[str] = []

    async def one(tenant: str, label: str) -> None:
        await pool.acquire(tenant=tenant, wait=10)
        order.append(label)
        await asyncio.sleep(0.01)
        pool.release(tenant=tenant)

    async def scenario():
        await pool.acquire(tenant="a", wait=1)  # the pool is full
        waiting = [asyncio.ensure_future(one("a", f"a{n}")) for n in range(3)]
        await asyncio.sleep(0.05)
        waiting.append(asyncio.ensure_future(one("b", "b0")))
        await asyncio.sleep(0.05)
        pool.release(tenant="a")
        await asyncio.gather(*waiting)

    async_to_sync(scenario)()

    # b came last but is served second: a's queue does not push it to the back.
    assert order == ["a0", "b0", "a1", "a2"]
    assert (pool.busy, pool.waiting) == (0, 0)


def test_a_waiter_that_gives_up_returns_no_slot_twice():
    pool = SlotPool(1)

    async def scenario():
        await pool.acquire(tenant="a", wait=1)
        with pytest.raises(SandboxBusy):
            await pool.acquire(tenant="b", wait=0.1)
        pool.release(tenant="a")
        await pool.acquire(tenant="b", wait=1)  # the slot is free again, exactly once
        assert pool.busy == 1
        pool.release(tenant="b")

    async_to_sync(scenario)()

    assert (pool.busy, pool.waiting) == (0, 0)


# --- weak isolation is never chosen silently ---------------------------------------------
WEAK_HOST = {"STUDIO_SANDBOX_UID_COUNT": 0, "STUDIO_SANDBOX_CGROUP": "off"}


def test_weak_isolation_is_refused_unless_the_operator_opts_in(python_tool, owner):
    tool = python_tool("return 'ran'")

    # Runs sharing one uid with no cgroup: bubblewrap works, but one user's runs could
    # exhaust another's processes.
    with override_settings(**WEAK_HOST):
        refused = tool_execute(tool=tool, input={}, user=owner)
    with override_settings(**WEAK_HOST, STUDIO_SANDBOX_ALLOW_WEAK=True):
        opted_in = tool_execute(tool=tool, input={}, user=owner)

    assert refused.status == "failed"
    assert refused.error.startswith("Python tools are disabled on this server: bubblewrap works")
    assert "STUDIO_SANDBOX_ALLOW_WEAK=1" in refused.error
    assert tool_run_data(refused)["isolation"] is None
    assert opted_in.status == "completed" and opted_in.output == "ran"
    assert tool_run_data(opted_in)["isolation"].startswith(
        "weak: bwrap without a process limit of its own: shared uid"
    )


def test_rlimits_named_by_the_operator_runs_and_says_it_is_weak(python_tool, owner):
    tool = python_tool("return 'ran'")

    with override_settings(STUDIO_SANDBOX_ISOLATION="rlimits"):
        run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "completed"
    assert tool_run_data(run)["isolation"].startswith(
        "weak: rlimits only, no network or filesystem isolation: own uid"
    )


def test_a_host_where_no_mode_works_refuses_python_tools(python_tool, owner):
    tool = python_tool("return 'ran'")

    with override_settings(STUDIO_PYTHON_EXECUTABLE="/nonexistent/python3"):
        run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert run.error.startswith("Python tools cannot run on this server: no isolation mode")


def test_a_sandbox_service_run_by_a_non_root_user_refuses_python_tools(python_tool, owner):
    """As a non-root user, runs would share the service's uid and no cgroup is writable:
    the service refuses, and the studio shows its reason."""
    nobody = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
    with sandbox_service(prefix=nobody) as service:
        tool = python_tool("return 'ran'")
        with override_settings(STUDIO_SANDBOX_URL=service.url, STUDIO_SANDBOX_TOKEN=service.token):
            run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert run.error.startswith("Python tools are disabled on this server: bubblewrap works")


# --- a sane maximum timeout --------------------------------------------------------------
def test_saving_a_python_tool_with_a_timeout_above_the_maximum_is_refused(api, owner):
    body = {
        "name": "slow_tool",
        "kind": "python",
        "config": {"code": "return 1"},
        "timeout_seconds": 3600,
    }

    response = api.post("/api/tools/", body, format="json")

    assert response.status_code == 400
    assert response.json()["timeout_seconds"] == [
        "Tools of type 'python' may run at most 300 s on this server; 3600 s is too long."
    ]
    assert not Tool.objects.filter(name="slow_tool").exists()


def test_raising_the_timeout_of_a_saved_python_tool_above_the_maximum_is_refused(api, python_tool):
    tool = python_tool("return 1", timeout_seconds=30)

    response = api.patch(f"/api/tools/{tool.name}/", {"timeout_seconds": 301}, format="json")

    assert response.status_code == 400
    assert "timeout_seconds" in response.json()
    tool.refresh_from_db()
    assert tool.timeout_seconds == 30


def test_a_stored_timeout_above_the_maximum_is_refused_at_execution(python_tool, owner):
    tool = python_tool("return 1", timeout_seconds=3600)  # saved before the maximum existed

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert run.error == (
        "The tool's timeout of 3600 s is above this server's maximum of 300 s; "
        "lower the tool's timeout."
    )


# --- what the console shows --------------------------------------------------------------
def test_the_isolation_endpoint_describes_this_servers_sandbox(api, anon_client):
    data = api.get("/api/tool-types/python/isolation/").json()

    assert data["strong"] is True and data["refusal"] == ""
    assert data["label"] == "bwrap: own uid, 64 processes, 256 MB, 1 CPU (cgroup v1)"
    assert data["limits"]["max_timeout"] == 300
    assert anon_client.get("/api/tool-types/python/isolation/").status_code in (401, 403)


def test_the_isolation_endpoint_gives_the_reason_of_a_refusal(api):
    with override_settings(**WEAK_HOST):
        data = api.get("/api/tool-types/python/isolation/").json()

    assert data["strong"] is False
    assert data["refusal"].startswith("Python tools are disabled on this server")
