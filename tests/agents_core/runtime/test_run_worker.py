"""Run workers (STUDIO_RUN_EXECUTOR=worker): the web process queues, a worker claims and
executes, the stream still reaches the browser's websocket through Redis."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from channels.db import database_sync_to_async
from django.db import connection

from agents_core.models import Run, RunStatus
from agents_core.runtime.execution.processes import QUEUED
from agents_core.runtime.execution.worker import RunWorker
from agents_core.services.runs import runs_claim
from common.exceptions import ApplicationError
from tests.agents_core.runtime.conftest import events_of, start, types
from tests.conftest import ROOT, child_process_env, daphne_process, stop_process

pytestmark = pytest.mark.django_db(transaction=True)


async def _wait_for(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not await database_sync_to_async(predicate)():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not reached")
        await asyncio.sleep(0.05)


async def test_a_queued_run_waits_for_a_worker_which_claims_and_executes_it(
    make_thread, owner, settings
):
    settings.STUDIO_RUN_EXECUTOR = "worker"
    thread = await database_sync_to_async(make_thread)()
    run = await start(thread, "use weather_lookup for Paris", owner)
    await asyncio.sleep(0.3)
    # The web process did not execute it: queued, nothing streamed but the run-start
    # stored with the run's row.
    await database_sync_to_async(run.refresh_from_db)()
    assert (run.status, run.worker) == (RunStatus.RUNNING, QUEUED)
    assert types(await database_sync_to_async(events_of)(thread)) == ["run-start"]

    worker = RunWorker(name="worker-a", poll_seconds=0.1)
    serving = asyncio.ensure_future(worker.serve())
    try:
        await _wait_for(lambda: Run.objects.get(pk=run.pk).status != RunStatus.RUNNING)
    finally:
        worker.stop()
        await asyncio.wait_for(serving, 30)
    await database_sync_to_async(run.refresh_from_db)()
    assert (run.status, run.worker) == (RunStatus.COMPLETED, "worker-a")
    names = types(await database_sync_to_async(events_of)(thread))
    assert names[0] == "run-start" and names[-1] == "run-finish" and "tool-call" in names


async def test_a_worker_claims_a_burst_a_batch_at_a_time_without_waiting_for_its_poll(
    make_thread, owner, settings
):
    """Claims are capped (the other workers take turns); a full batch means more may be
    queued, so the worker claims again at once instead of at its next poll (30 s here)."""
    settings.STUDIO_RUN_EXECUTOR = "worker"
    settings.STUDIO_RUN_WORKER_CLAIM_BATCH = 2
    runs = [
        await start(await database_sync_to_async(make_thread)(), "hello", owner) for _ in range(5)
    ]
    claims: list[int] = []
    original = runs_claim

    def counting(**kwargs):
        claimed = original(**kwargs)
        claims.append(len(claimed))
        return claimed

    ids = [run.pk for run in runs]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("agents_core.runtime.execution.worker.runs_claim", counting)
        worker = RunWorker(name="worker-burst", poll_seconds=30)
        serving = asyncio.ensure_future(worker.serve())
        try:
            await _wait_for(
                lambda: not Run.objects.filter(pk__in=ids, worker=QUEUED).exists(), timeout=20
            )
            await _wait_for(
                lambda: not Run.objects.filter(pk__in=ids, status=RunStatus.RUNNING).exists()
            )
        finally:
            worker.stop()
            await asyncio.wait_for(serving, 30)
    assert max(claims) == 2 and sum(claims) == 5
    assert set(
        await database_sync_to_async(
            lambda: set(Run.objects.filter(pk__in=ids).values_list("worker", flat=True))
        )()
    ) == {"worker-burst"}


def test_two_workers_claiming_at_once_never_take_the_same_run(make_thread, owner):
    runs = [
        Run.objects.create(
            thread=make_thread(),
            agent_id=make_thread().agent_id,
            status=RunStatus.RUNNING,
            worker=QUEUED,
        )
        for _ in range(12)
    ]
    barrier = threading.Barrier(2)
    claimed: dict[str, list[str]] = {}

    def claim(name: str) -> None:
        try:
            barrier.wait()
            claimed[name] = runs_claim(worker=name, limit=8)
        finally:
            connection.close()

    workers = [threading.Thread(target=claim, args=(name,)) for name in ("one", "two")]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    one, two = set(claimed["one"]), set(claimed["two"])
    assert not one & two
    assert one | two == {str(run.pk) for run in runs}  # 8 + 4: none left, none twice
    assert {str(pk): w for pk, w in Run.objects.values_list("pk", "worker")} == {
        **{pk: "one" for pk in one},
        **{pk: "two" for pk in two},
    }


def test_per_run_python_hooks_are_refused_with_workers(make_thread, owner, settings):
    from agents_core.services.runs import run_start_safe

    settings.STUDIO_RUN_EXECUTOR = "worker"
    with pytest.raises(ApplicationError, match="need STUDIO_RUN_EXECUTOR=inline"):
        run_start_safe(
            thread=make_thread(),
            message="hi",
            user=owner,
            options={"hooks": {"before_tool_call": lambda call: None}},
        )
    assert not Run.objects.exists()


@contextmanager
def run_worker_process(name: str = "worker-process", **env: str) -> Iterator[subprocess.Popen]:
    (ROOT / ".studio").mkdir(exist_ok=True)
    log = open(ROOT / ".studio" / f"test-run-worker-{time.monotonic_ns()}.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "execute_runs", "--name", name],
        cwd=ROOT,
        env=child_process_env(**env),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield proc
    finally:
        stop_process(proc, timeout=30)
        log.close()


def _session_cookie(user) -> str:
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.save()
    return f"sessionid={session.session_key}"


@contextmanager
def worker_studio_socket(thread, user, **extra: str) -> Iterator[object]:
    """Daphne and a run worker process, both on the worker executor (and `extra` in their
    environment), and a websocket to `thread` signed in as `user`."""
    import websockets.sync.client

    cookie = _session_cookie(user)
    env = {
        "STUDIO_RUN_EXECUTOR": "worker",
        "STUDIO_CODE_MODULES": "tests.agents_core.runtime.definitions",
        **extra,
    }
    with daphne_process(**env) as url, run_worker_process(**env):
        ws_url = url.replace("http", "ws") + f"/ws/threads/{thread.pk}/"
        with websockets.sync.client.connect(
            ws_url, additional_headers={"Cookie": cookie, "Origin": url}, open_timeout=30
        ) as ws:
            yield ws


def receive_until(ws, types: set[str], received: list[dict], deadline: float) -> dict:
    """Receive events into `received` until one of `types` (returned) arrives."""
    while True:
        event = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        received.append(event)
        if event["type"] in types:
            return event


def test_a_chat_on_daphne_streams_from_a_run_worker_process(synced, make_thread, owner):
    thread = make_thread()
    received: list[dict] = []
    with worker_studio_socket(thread, owner) as ws:
        ws.send(json.dumps({"type": "chat", "text": "use weather_lookup for Paris"}))
        receive_until(ws, {"run-finish", "run-error"}, received, time.monotonic() + 90)
    run = Run.objects.get(thread=thread)
    assert (run.status, run.worker) == (RunStatus.COMPLETED, "worker-process")
    names = [event["type"] for event in received]
    assert names[0] == "run-start" and names[-1] == "run-finish"
    assert "text-delta" in names and "tool-input-delta" in names
    seqs = [event["seq"] for event in received]
    assert seqs == list(range(1, len(seqs) + 1))  # every event, once, in order
    assert seqs == [event["seq"] for event in events_of(thread)]


def test_stop_from_the_browser_reaches_a_run_in_a_worker_process(synced, make_thread, owner):
    """The web process does not hold the run: the abort is written on it and the worker is
    notified, which stops it (its poll of the flag comes every 10 minutes here, long
    after the run would have ended); what it streamed is kept."""
    thread = make_thread()
    received: list[dict] = []
    with worker_studio_socket(thread, owner, STUDIO_RUN_WORKER_POLL_SECONDS="600") as ws:
        ws.send(
            json.dumps(
                {
                    "type": "chat",
                    "text": "tell me about the weather",
                    "options": {"providerOptions": {"studio": {"delay": 0.3}}},
                }
            )
        )
        deadline = time.monotonic() + 90
        receive_until(ws, {"text-delta"}, received, deadline)
        ws.send(json.dumps({"type": "abort"}))
        receive_until(ws, {"run-finish", "run-error"}, received, deadline)
    assert received[-1]["type"] == "run-finish" and received[-1]["status"] == "aborted"
    run = Run.objects.get(thread=thread)
    assert (run.status, run.worker) == (RunStatus.ABORTED, "worker-process")
    streamed = "".join(e.get("textDelta", "") for e in received if e["type"] == "text-delta")
    kept = run.thread.messages.filter(role="assistant").values_list("parts", flat=True)
    assert streamed and any(streamed.strip()[:10] in json.dumps(parts) for parts in kept)


def _listening(channel: str) -> bool:
    """A backend of this database has `LISTEN channel` as its last statement."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND query = %s",
            [f"LISTEN {channel}"],
        )
        return bool(cursor.fetchone()[0])


def test_a_run_queued_while_a_worker_process_waits_starts_at_once(synced, make_thread, owner):
    """An idle worker waits on its LISTEN connection: the run's notification, sent once
    its row is committed, starts it (the worker's own look for queued runs comes every 10
    minutes here)."""
    from django.test import override_settings

    from agents_core.runtime.execution.processes import RUN_ABORT
    from agents_core.services.runs import run_start_safe

    env = {
        "STUDIO_RUN_EXECUTOR": "worker",
        "STUDIO_RUN_WORKER_POLL_SECONDS": "600",
        "STUDIO_CODE_MODULES": "tests.agents_core.runtime.definitions",
    }
    thread = make_thread()
    with run_worker_process(**env):
        deadline = time.monotonic() + 90
        while not _listening(RUN_ABORT):  # its second LISTEN, after the queued runs'
            assert time.monotonic() < deadline, "the worker never listened"
            time.sleep(0.1)
        with override_settings(STUDIO_RUN_EXECUTOR="worker"):
            run = run_start_safe(thread=thread, message="hello", user=owner)
        deadline = time.monotonic() + 60
        while Run.objects.get(pk=run.pk).status == RunStatus.RUNNING:
            assert time.monotonic() < deadline, "the queued run never started"
            time.sleep(0.1)
    run.refresh_from_db()
    assert (run.status, run.worker) == (RunStatus.COMPLETED, "worker-process")


async def test_runs_of_a_dead_worker_are_ended_and_a_live_ones_are_left(
    make_thread, owner, settings
):
    """Heartbeats: a worker ends the runs of workers whose beat stopped, and at its start
    the runs left under its own name; a live worker's run is not touched."""
    from datetime import timedelta

    from django.utils import timezone

    from agents_core.models import RunWorkerBeat

    settings.STUDIO_RUN_EXECUTOR = "worker"
    settings.STUDIO_RUN_WORKER_DEAD_SECONDS = 5  # a poll of 0.1 s: 5 s it is
    now = timezone.now()

    def claimed(worker: str, beat_age: float | None) -> Run:
        thread = make_thread()
        if beat_age is not None:
            RunWorkerBeat.objects.update_or_create(
                name=worker,
                defaults={"started_at": now, "beat_at": now - timedelta(seconds=beat_age)},
            )
        run = Run.objects.create(thread=thread, agent=thread.agent, worker=worker)
        return run

    dead = await database_sync_to_async(claimed)("dead-worker", 60)
    ghost = await database_sync_to_async(claimed)("never-beat", None)
    alive = await database_sync_to_async(claimed)("live-worker", 1)
    mine = await database_sync_to_async(claimed)("rescuer", 1)

    worker = RunWorker(name="rescuer", poll_seconds=0.1)
    serving = asyncio.ensure_future(worker.serve())
    try:
        await _wait_for(lambda: Run.objects.filter(status=RunStatus.FAILED).count() == 3)
        await asyncio.sleep(0.3)  # a few more ticks: nothing else moves
    finally:
        worker.stop()
        await asyncio.wait_for(serving, 30)

    statuses = await database_sync_to_async(
        lambda: {run.pk: Run.objects.get(pk=run.pk).status for run in (dead, ghost, alive, mine)}
    )()
    assert statuses == {
        dead.pk: "failed",
        ghost.pk: "failed",
        alive.pk: "running",
        mine.pk: "failed",
    }
    events = await database_sync_to_async(events_of)(dead.thread)
    assert [(e["type"], e["code"]) for e in events] == [("run-error", "interrupted")]
    # The rescuer stopped cleanly: its beat is gone; the live worker's stays.
    assert await database_sync_to_async(
        lambda: sorted(RunWorkerBeat.objects.values_list("name", flat=True))
    )() == ["dead-worker", "live-worker"]


def test_a_killed_worker_process_s_run_is_ended_by_another_and_the_thread_goes_on(
    synced, make_thread, owner
):
    import os
    import signal

    from agents_core.services.runs import run_start_safe

    env = {
        "STUDIO_RUN_EXECUTOR": "worker",
        "STUDIO_RUN_WORKER_POLL_SECONDS": "0.3",
        "STUDIO_RUN_WORKER_DEAD_SECONDS": "1",
        "STUDIO_CODE_MODULES": "tests.agents_core.runtime.definitions",
    }
    thread = make_thread()
    with run_worker_process(**env) as victim:
        from django.test import override_settings

        with override_settings(STUDIO_RUN_EXECUTOR="worker"):
            run = run_start_safe(
                thread=thread,
                message="tell me about the weather",
                user=owner,
                options={"providerOptions": {"studio": {"delay": 0.5}}},
            )
        deadline = time.monotonic() + 60
        while not any(e["type"] == "text-delta" for e in events_of(thread)):
            assert time.monotonic() < deadline, "the worker never streamed"
            time.sleep(0.1)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
    run.refresh_from_db()
    assert (run.status, run.worker) == (RunStatus.RUNNING, "worker-process")

    with run_worker_process(name="rescuer", **env):
        deadline = time.monotonic() + 60
        while Run.objects.get(pk=run.pk).status == RunStatus.RUNNING:
            assert time.monotonic() < deadline, "nobody ended the dead worker's run"
            time.sleep(0.2)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "interrupted" in run.error
    assert events_of(thread)[-1]["code"] == "interrupted"
    # The thread is free again: a new chat starts at once.
    with override_settings(STUDIO_RUN_EXECUTOR="worker"):
        assert run_start_safe(thread=thread, message="hello again", user=owner).pk != run.pk
