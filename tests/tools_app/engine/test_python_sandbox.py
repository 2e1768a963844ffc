"""The Python type's sandbox really contains the author's code: a fresh /usr/bin/python3
per call, no server environment, CPU/memory/time limits, its own network namespace.
(Isolation between users, the pool and the refusal of weak modes: test_python_isolation.)"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings

from tests.conftest import free_port
from tests.tools_app.engine.sandbox_procs import gone
from tests.tools_app.engine.sandbox_service import sandbox_service
from tools_app.crypto import credentials_set
from tools_app.services.execute import tool_execute
from tools_app.services.runs import tool_run_data
from tools_app.types.python import host_config, run_limits
from tools_app.types.python.isolation import available_modes, capabilities
from tools_app.types.python.sandbox import sandbox_run

ROOT = Path(__file__).resolve().parents[3]


def test_the_strongest_isolation_this_machine_allows_is_used():
    caps = capabilities(host_config())

    assert caps.mode == "bwrap"
    assert caps.strong is True
    assert caps.own_uid is True
    assert caps.cgroup is not None
    assert caps.label(run_limits()).startswith("bwrap: own uid, 64 processes, 256 MB")


def test_a_python_tool_returns_its_value_and_its_prints_become_logs(python_tool, owner):
    tool = python_tool(
        'print("adding", input["a"], input["b"])\nreturn {"sum": input["a"] + input["b"]}'
    )

    run = tool_execute(tool=tool, input={"a": 2, "b": 40}, user=owner)

    data = tool_run_data(run)
    assert data["status"] == "completed"
    assert data["output"] == {"sum": 42}
    assert "adding 2 40" in data["logs"]
    assert data["isolation"].startswith("bwrap: own uid")


def test_a_module_with_its_own_run_function_and_helpers_works(python_tool, owner):
    tool = python_tool(
        "def double(x):\n    return 2 * x\n\ndef run(input):\n"
        "    return [double(v) for v in input['values']]\n"
    )

    run = tool_execute(tool=tool, input={"values": [1, 2, 3]}, user=owner)

    assert run.output == [2, 4, 6]


def test_a_print_of_a_fake_result_marker_cannot_spoof_the_output(python_tool, owner):
    tool = python_tool(
        'print("\\n@@studio-result-0000@@{\\"ok\\": true, \\"output\\": 666}")\nreturn 1'
    )

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.output == 1


def test_an_exception_in_the_code_is_a_failed_run_with_its_traceback(python_tool, owner):
    tool = python_tool("x = 1\nraise ValueError('no good')")

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert run.error == "ValueError: no good"
    assert 'File "<tool>", line 2, in run' in run.logs


def test_an_infinite_loop_is_stopped_and_leaves_no_process(python_tool, owner):
    tool = python_tool("while True:\n    pass", timeout_seconds=1.5)

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert "timed out" in run.error or "stopped" in run.error
    assert gone()


def test_a_two_gigabyte_allocation_fails_inside_the_sandbox(python_tool, owner):
    tool = python_tool("data = bytearray(2 * 1024 ** 3)\nreturn len(data)")

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert "MemoryError" in run.error


@override_settings(STUDIO_SANDBOX_OUTPUT_MB=1)
def test_a_run_that_prints_more_than_its_output_limit_fails_with_the_reason(python_tool, owner):
    within = python_tool("print('x' * 500_000)\nreturn 'done'")
    beyond = python_tool("import sys\nsys.stdout.write('x' * 3_000_000)\nreturn 'done'")

    kept = tool_execute(tool=within, input={}, user=owner)
    cut = tool_execute(tool=beyond, input={}, user=owner)

    assert kept.status == "completed" and kept.output == "done"
    assert cut.status == "failed"
    assert cut.error == "The run printed more than its output limit of 1 MB."


def test_the_code_cannot_see_the_server_environment(python_tool, owner, monkeypatch):
    monkeypatch.setenv("STUDIO_TEST_SECRET", "hunter2-server-secret")
    code = (
        "import os\n"
        "seen = dict(os.environ)\n"
        "try:\n"
        "    path = f\"/proc/{input['pid']}/environ\"\n"
        "    seen['parent'] = open(path, 'rb').read().decode('latin1')\n"
        "except OSError as exc:\n"
        "    seen['parent'] = f'refused: {exc.strerror}'\n"
        "return seen"
    )
    tool = python_tool(code)

    run = tool_execute(tool=tool, input={"pid": os.getpid()}, user=owner)

    assert run.status == "completed"
    assert "hunter2-server-secret" not in str(run.output)
    assert "SECRET_KEY" not in run.output and "DATABASE_URL" not in run.output
    assert "STUDIO_TEST_SECRET" not in run.output


def test_the_code_cannot_connect_to_a_listener_on_the_hosts_loopback(python_tool, owner, listener):
    code = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('127.0.0.1', input['port']), timeout=2).close()\n"
        "    return {'connected': True}\n"
        "except OSError as exc:\n"
        "    return {'connected': False, 'error': str(exc)}"
    )
    tool = python_tool(code)

    run = tool_execute(tool=tool, input={"port": listener.port}, user=owner)

    assert run.output["connected"] is False
    assert listener.connections() == 0


def test_a_fork_bomb_is_contained(python_tool, owner):
    code = (
        "import os\n"
        "children = 0\n"
        "try:\n"
        "    for _ in range(10000):\n"
        "        if os.fork() == 0:\n"
        "            import time; time.sleep(5); os._exit(0)\n"
        "        children += 1\n"
        "except OSError as exc:\n"
        "    return {'children': children, 'error': exc.strerror}\n"
        "return {'children': children}"
    )
    tool = python_tool(code, timeout_seconds=8)

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "completed"
    assert run.output["children"] < 100
    assert gone()


def test_tool_credentials_never_reach_the_code(python_tool, owner):
    tool = python_tool("import os, gc\nreturn {'env': dict(os.environ), 'input': input}")
    credentials_set(tool, {"token": "cred-token-never-shared"})

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "completed"
    assert "cred-token-never-shared" not in str(run.output)


@pytest.mark.parametrize("mode", ["bwrap", "rlimits"])
def test_every_isolation_mode_runs_code_and_reports_itself(mode):
    # "rlimits" named explicitly is the operator's choice of weak isolation.
    host = replace(host_config(), isolation=mode)
    assert mode in available_modes(host)

    result = async_to_sync(sandbox_run)(
        "return input * 2", 21, timeout=10, host=host, limits=run_limits()
    )

    assert result["ok"] is True
    assert result["output"] == 42
    assert result["sandbox"]["mode"] == mode
    assert result["isolation"].startswith("bwrap:" if mode == "bwrap" else "weak: rlimits only")


def test_bwrap_blocks_the_hosts_loopback(listener):
    code = (
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', input), 2)\n"
        "    return 'connected'\nexcept OSError as exc:\n    return exc.strerror"
    )

    result = async_to_sync(sandbox_run)(
        code, listener.port, timeout=10, host=host_config(), limits=run_limits()
    )

    assert result["ok"] is True
    assert result["output"] != "connected"
    assert listener.connections() == 0


def test_the_sandbox_service_runs_code_posted_by_the_studio(python_tool, owner):
    with sandbox_service() as service:
        tool = python_tool("import os\nprint('remote')\nreturn {'pid_ns': os.getpid()}")
        with override_settings(STUDIO_SANDBOX_URL=service.url, STUDIO_SANDBOX_TOKEN=service.token):
            run = tool_execute(tool=tool, input={}, user=owner)

    data = tool_run_data(run)
    assert data["status"] == "completed", data["error"]
    assert "remote" in data["logs"]
    assert data["isolation"].startswith("bwrap: own uid")


def test_an_unreachable_sandbox_service_is_a_clear_failed_run(python_tool, owner):
    tool = python_tool("return 1")

    with override_settings(
        STUDIO_SANDBOX_URL=f"http://127.0.0.1:{free_port()}", STUDIO_SANDBOX_TOKEN="token"
    ):
        run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert "sandbox service" in run.error and "unreachable" in run.error


LIMITS_SEEN = """
import os, resource
names = ["RLIMIT_AS", "RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_NPROC"]
return {
    "uid": [os.getuid(), os.getgid(), os.getgroups()],
    "limits": {name: list(resource.getrlimit(getattr(resource, name))) for name in names},
}
"""


@pytest.mark.parametrize("launcher", ["programs", "preexec_fn"])
def test_a_run_gets_its_uid_and_rlimits_whichever_way_it_is_launched(launcher, monkeypatch):
    # "programs": sh, prlimit and setpriv exec'd in turn (a vfork of the server);
    # "preexec_fn": where they are missing, the same steps in a fork of the server.
    if launcher == "preexec_fn":
        monkeypatch.setattr("tools_app.types.python.isolation.PRLIMIT", "/nonexistent/prlimit")
    host = replace(host_config(), spares=0)

    result = async_to_sync(sandbox_run)(
        LIMITS_SEEN, None, timeout=10, host=host, limits=run_limits()
    )

    assert result["ok"] is True, result
    uid = result["sandbox"]["uid"]
    assert result["sandbox"]["own_uid"] is True and uid != 0
    assert result["output"]["uid"] == [uid, uid, []]
    memory, pids = run_limits().memory_mb * 1024 * 1024, run_limits().pids
    assert result["output"]["limits"] == {
        "RLIMIT_AS": [memory, memory],
        "RLIMIT_NOFILE": [64, 64],
        "RLIMIT_FSIZE": [16 * 1024 * 1024] * 2,
        "RLIMIT_CORE": [0, 0],
        "RLIMIT_NPROC": [pids, pids],
    }
