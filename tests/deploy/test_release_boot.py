"""The release booted as a team runs it: the wheel and the runtime lock installed in a
fresh virtualenv outside the checkout, and from there, with DEBUG off and HTTPS behind a
proxy, against PostgreSQL (a database of its own) and Redis: `studio migrate`, two Daphne
web processes, a run worker, a Celery worker, Celery beat and the sandbox service.

A chat sent to web 1 runs on the run worker and replays whole from web 2; an async tool
run completes through the Celery worker; Python code runs in the sandbox service (the
studio's own processes are given no interpreter for it); a run worker killed mid-run
has its run ended cleanly by the next one, and the thread goes on.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest
import redis
import websockets.sync.client

from tests.conftest import ROOT, free_port, wait_for_port
from tests.deploy.release import (
    PROXY_HEADERS,
    START_TIMEOUT,
    Processes,
    Release,
    deployment_env,
    release_install,
    run,
    sign_in,
    wait_until,
)

# The module's one deployment is built once: `make test` hands a file's tests to one
# pytest-xdist worker (--dist loadfile).
pytestmark = [
    pytest.mark.deployment,
    pytest.mark.slow,
    pytest.mark.timeout(1800),
]

PASSWORD = "a-long-password-for-the-boot-test"
# Run workers beat every second and take a worker that missed 5 s of beats for dead, so
# a killed worker's run is ended within seconds (the default: 30).
WORKER_BEATS = {"STUDIO_RUN_WORKER_POLL_SECONDS": "1", "STUDIO_RUN_WORKER_DEAD_SECONDS": "5"}
EVENT_TIMEOUT = 180


@dataclass
class Deployment:
    release: Release
    procs: Processes
    env: dict[str, str]
    database_url: str
    web: list[str]
    token: str
    cookie: str

    def api(self, index: int = 0) -> httpx.Client:
        headers = {**PROXY_HEADERS, "Authorization": f"Token {self.token}"}
        return httpx.Client(base_url=self.web[index], headers=headers, timeout=60)

    def socket(self, index: int, thread_id: str, after: int = 0):
        base = self.web[index]
        origin = "https://" + urlsplit(base).netloc
        return websockets.sync.client.connect(
            base.replace("http://", "ws://") + f"/ws/threads/{thread_id}/?after={after}",
            additional_headers={"Cookie": self.cookie, "Origin": origin},
            open_timeout=60,
        )

    def studio(self, *args: str) -> str:
        return run([self.release.studio, *args], cwd=self.procs.workdir, env=self.env)

    def row(self, sql: str, *params: object) -> tuple:
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            found = conn.execute(sql, params).fetchone()
        assert found is not None, sql
        return found


def _boot_urls() -> tuple[str, str]:
    """The test run's PostgreSQL and Redis, with a database of the boot's own (`<name>_boot`)
    and the next Redis database number."""
    db = urlsplit(os.environ["DATABASE_URL"])
    database = urlunsplit(db._replace(path=db.path.rstrip("/") + "_boot"))
    cache = urlsplit(os.environ["REDIS_URL"])
    number = (int(cache.path.strip("/") or 0) + 1) % 16
    return database, urlunsplit(cache._replace(path=f"/{number}"))


def _database_recreate(url: str, *, create: bool = True) -> None:
    parts = urlsplit(url)
    name = parts.path.strip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if create:
            conn.execute(f'CREATE DATABASE "{name}"')


def _start(procs: Processes, release: Release, data: Path) -> list[str]:
    """The process set of docker-compose.yml, from the virtualenv; the web URLs."""
    port = free_port()
    # The secret the sandbox service and every studio process share (it runs nothing
    # for a caller without it).
    procs.env["STUDIO_SANDBOX_TOKEN"] = secrets.token_urlsafe(32)
    sandbox = procs.start(
        "sandbox",
        [
            release.python, "-m", "tools_app.types.python.server", "--host", "127.0.0.1",
            "--port", str(port), "--pool-size", "2", "--state-dir", str(data / "sandbox"),
            "--uid-base", "2500000",
        ],
    )  # fmt: skip
    wait_for_port(port, timeout=START_TIMEOUT, proc=sandbox)
    procs.env["STUDIO_SANDBOX_URL"] = f"http://127.0.0.1:{port}"
    # Python code may only run in the sandbox service: the studio's own processes have
    # no interpreter for it, so a local run would fail.
    procs.env["STUDIO_PYTHON_EXECUTABLE"] = str(data / "no-python-here")
    web = [procs.web("web-1", release.python), procs.web("web-2", release.python)]
    procs.start("runs-1", [release.studio, "execute_runs", "--name", "runs-1"])
    celery = str(release.venv / "bin" / "celery")
    procs.start(
        "worker",
        [celery, "-A", "studio", "worker", "--loglevel=INFO", "--concurrency=1",
         "--hostname=boot-worker@%h"],
    )  # fmt: skip
    procs.start(
        "beat",
        [celery, "-A", "studio", "beat", "--loglevel=INFO", "--schedule", str(data / "beat")],
    )
    return web


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    started = time.monotonic()
    workdir = tmp_path_factory.mktemp("release")
    assert ROOT not in workdir.parents
    release = release_install(workdir)
    database_url, redis_url = _boot_urls()
    _database_recreate(database_url)
    redis.Redis.from_url(redis_url).flushdb()
    data = workdir / "data"
    data.mkdir()
    env = {**deployment_env(data_dir=data, database_url=database_url, redis_url=redis_url)}
    env.update(WORKER_BEATS)
    procs = Processes(workdir, env)
    # What the image does at build time, and a team's first steps.
    where = run(
        [release.python, "-c", "import studio; print(studio.__file__)"], cwd=workdir, env=env
    )
    assert where.strip().startswith(str(release.venv)), where
    run([release.studio, "collectstatic", "--noinput"], cwd=workdir, env=env)
    run([release.studio, "migrate", "--noinput"], cwd=workdir, env=env, timeout=600)
    user_env = {**env, "DJANGO_SUPERUSER_PASSWORD": PASSWORD}
    run(
        [release.studio, "createsuperuser", "--noinput", "--username", "admin",
         "--email", "admin@example.com"],
        cwd=workdir, env=user_env,
    )  # fmt: skip
    out = run([release.studio, "drf_create_token", "admin"], cwd=workdir, env=env)
    token = out.split("Generated token ", 1)[1].split()[0]
    booted = time.monotonic()
    try:
        web = _start(procs, release, data)
        yield Deployment(
            release=release,
            procs=procs,
            env=procs.env,
            database_url=database_url,
            web=web,
            token=token,
            cookie=sign_in(web[0], "admin", PASSWORD),
        )
    finally:
        tails = procs.tails()
        codes = procs.stop_all()
        _database_recreate(database_url, create=False)
        redis.Redis.from_url(redis_url).flushdb()
        print(tails, "\nexit codes:", codes)
        print(_measures(release, started, booted))


def _measures(release: Release, started: float, booted: float) -> str:
    size = subprocess.run(
        ["du", "-sh", str(release.venv)], capture_output=True, text=True, check=False
    ).stdout.split()[0]
    return (
        f"deployment test: wheel {release.wheel.stat().st_size / 1e6:.2f} MB, venv {size}, "
        f"build {release.seconds['build']:.0f}s, install {release.seconds['install']:.0f}s, "
        f"migrate and setup {booted - started - sum(release.seconds.values()):.0f}s, "
        f"all {time.monotonic() - started:.0f}s"
    )


def receive_until(ws, types: set[str], received: list[dict]) -> dict:
    deadline = time.monotonic() + EVENT_TIMEOUT
    while True:
        event = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        received.append(event)
        if event["type"] in types:
            return event


def replay(deployment: Deployment, index: int, thread_id: str, count: int) -> list[dict]:
    """The first `count` events a new socket to web `index` gets with `after=0`."""
    events: list[dict] = []
    with deployment.socket(index, thread_id) as ws:
        while len(events) < count:
            events.append(json.loads(ws.recv(timeout=EVENT_TIMEOUT)))
    return events


def new_thread(deployment: Deployment) -> str:
    with deployment.api() as api:
        answer = api.post("/api/threads/", json={"agent": "weather-assistant"})
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def stored_events(deployment: Deployment, thread_id: str) -> list[dict]:
    with deployment.api(1) as api:
        answer = api.get(f"/api/threads/{thread_id}/events/")
    assert answer.status_code == 200, answer.text
    return answer.json()["events"]


# --- the tests, in the order a team would look ---------------------------------------------
def test_the_deployment_checks_are_clean(deployment: Deployment) -> None:
    out = deployment.studio("check", "--deploy", "--fail-level", "WARNING")

    assert "System check identified no issues" in out, out


def test_both_web_processes_are_healthy_and_pages_need_https(deployment: Deployment) -> None:
    for base in deployment.web:
        health = httpx.get(f"{base}/healthz", timeout=60)
        page = httpx.get(f"{base}/accounts/login/", timeout=60)

        assert health.status_code == 200, health.text
        assert health.json() == {"database": "ok", "redis": "ok", "sandbox": "ok"}
        assert page.status_code == 301 and page.headers["location"].startswith("https://")


def test_static_files_are_served_with_debug_off(deployment: Deployment) -> None:
    answer = httpx.get(
        f"{deployment.web[1]}/static/css/studio.css", headers=PROXY_HEADERS, timeout=60
    )

    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/css")
    assert answer.content == (ROOT / "frontend/static/css/studio.css").read_bytes()


def test_a_chat_on_web_1_runs_on_the_run_worker_and_replays_whole_from_web_2(
    deployment: Deployment,
) -> None:
    thread_id = new_thread(deployment)
    received: list[dict] = []
    with deployment.socket(0, thread_id) as ws:
        ws.send(json.dumps({"type": "chat", "text": "use weather_lookup for Paris"}))
        receive_until(ws, {"run-finish", "run-error"}, received)

    names = [event["type"] for event in received]
    assert names[0] == "run-start" and names[-1] == "run-finish", names
    assert received[-1]["status"] == "completed"
    assert {"text-delta", "tool-input-delta", "tool-call", "tool-result"} <= set(names)
    assert [event["seq"] for event in received] == list(range(1, len(received) + 1))
    run_id = received[0]["runId"]
    status, worker = deployment.row(
        "SELECT status, worker FROM agents_core_run WHERE id = %s", run_id
    )
    assert (status, worker) == ("completed", "runs-1")
    assert replay(deployment, 1, thread_id, len(received)) == received


def test_a_python_tool_runs_in_the_sandbox_service_sync_and_through_celery(
    deployment: Deployment,
) -> None:
    tool = {
        "name": "add_numbers",
        "kind": "python",
        "description": "Adds two numbers.",
        "config": {"code": 'return {"sum": input["a"] + input["b"]}'},
        "input_schema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    }
    with deployment.api() as api:
        created = api.post("/api/tools/", json=tool)
        assert created.status_code == 201, created.text
        now = api.post("/api/tools/add_numbers/execute", json={"input": {"a": 2, "b": 3}})
        later = api.post(
            "/api/tools/add_numbers/execute?mode=async", json={"input": {"a": 20, "b": 22}}
        )
        assert later.status_code == 202, later.text
        run_id = later.json()["id"]

        def finished() -> dict | None:
            body = api.get(f"/api/tool-runs/{run_id}/").json()
            return body if body["status"] not in ("pending", "running") else None

        done = wait_until(finished, timeout=EVENT_TIMEOUT, what="the async tool run")

    assert now.status_code == 200, now.text
    assert (now.json()["status"], now.json()["output"]) == ("completed", {"sum": 5})
    assert now.json()["isolation"].startswith("bwrap")
    assert (done["status"], done["output"]) == ("completed", {"sum": 42}), done
    # The async run's process (`host:pid`) is a child of the Celery worker.
    (worker,) = deployment.row("SELECT worker FROM tools_app_toolrun WHERE id = %s", run_id)
    stat = Path(f"/proc/{worker.rsplit(':', 1)[1]}/stat").read_text()
    assert int(stat.rsplit(")", 1)[1].split()[1]) == deployment.procs.procs["worker"].pid


def test_a_run_worker_killed_mid_run_has_its_run_ended_cleanly_and_the_thread_goes_on(
    deployment: Deployment,
) -> None:
    thread_id = new_thread(deployment)
    slow = {"providerOptions": {"studio": {"delay": 0.3}}}
    received: list[dict] = []
    with deployment.socket(0, thread_id) as ws:
        ws.send(json.dumps({"type": "chat", "text": "tell me about the weather", "options": slow}))
        receive_until(ws, {"text-delta"}, received)
        deployment.procs.kill("runs-1")
        deployment.procs.start(
            "runs-2", [deployment.release.studio, "execute_runs", "--name", "runs-2"]
        )
        ended = receive_until(ws, {"run-finish", "run-error"}, received)
        assert (ended["type"], ended.get("code")) == ("run-error", "interrupted"), ended

        def ended_in_store() -> list[dict] | None:
            events = stored_events(deployment, thread_id)
            return events if events[-1]["type"] == "run-error" else None

        stored = wait_until(ended_in_store, timeout=EVENT_TIMEOUT, what="the run's end stored")
        # Nothing lost: the store holds one unbroken sequence, ending with the run's end,
        # and a new socket on the other web process gets exactly that.
        assert [event["seq"] for event in stored] == list(range(1, len(stored) + 1))
        assert stored[0]["type"] == "run-start" and stored[-1]["type"] == "run-error"
        assert replay(deployment, 1, thread_id, len(stored)) == stored
        (status,) = deployment.row(
            "SELECT status FROM agents_core_run WHERE id = %s", received[0]["runId"]
        )
        assert status == "failed"

        again: list[dict] = []
        ws.send(json.dumps({"type": "chat", "text": "use weather_lookup for Tokyo"}))
        finish = receive_until(ws, {"run-finish", "run-error"}, again)
    assert (finish["type"], finish.get("status")) == ("run-finish", "completed"), again
    assert deployment.row("SELECT worker FROM agents_core_run WHERE id = %s", finish["runId"]) == (
        "runs-2",
    )


def test_every_process_of_the_set_is_still_up(deployment: Deployment) -> None:
    procs = deployment.procs
    wait_until(
        lambda: "beat: Starting" in procs.logs["beat"].read_text(errors="replace"),
        timeout=START_TIMEOUT,
        what="celery beat's start",
    )
    assert {name: code for name, code in procs.alive().items() if name != "runs-1"} == {
        name: None for name in ("sandbox", "web-1", "web-2", "worker", "beat", "runs-2")
    }, procs.tails()


def test_the_release_holds_no_checkout(deployment: Deployment) -> None:
    """Every studio module the processes import comes from the installed wheel."""
    site = next(deployment.release.venv.glob("lib/python*/site-packages"))
    assert (site / "frontend" / "templates" / "frontend" / "base.html").is_file()
    assert not (site / "tests").exists()
    assert shutil.which("studio", path=str(deployment.release.venv / "bin"))
