"""The server side of bench.streaming: the bench's environment and database, its user's
session, and the studio's processes (Daphne, with the `worker` executor its run workers),
started, waited for, read for CPU (/proc/<pid>/stat) and stopped."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/studio_bench"


def _environment() -> dict[str, str]:
    os.environ.setdefault("DATABASE_URL", DEFAULT_DB)
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/14")
    os.environ.setdefault("SECRET_KEY", "bench-" + secrets.token_hex(16))
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench._settings"
    os.environ["STUDIO_CODE_MODULES"] = "bench._streaming_agent"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("STUDIO_CHANNEL_PREFIX", f"bench-{os.getpid()}")
    return dict(os.environ)


def ensure_database(url: str) -> None:
    import psycopg
    from dj_database_url import parse

    config = parse(url)
    admin = psycopg.connect(
        host=config["HOST"] or "127.0.0.1",
        port=config["PORT"] or 5432,
        user=config["USER"] or "postgres",
        dbname="postgres",
        autocommit=True,
    )
    with admin:
        exists = admin.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [config["NAME"]]
        ).fetchone()
        if not exists:
            admin.execute(f'CREATE DATABASE "{config["NAME"]}"')


def setup() -> tuple[Any, str]:
    import django

    env = _environment()
    ensure_database(env["DATABASE_URL"])
    django.setup()
    from django.contrib.auth import (
        BACKEND_SESSION_KEY,
        HASH_SESSION_KEY,
        SESSION_KEY,
        get_user_model,
    )
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    user, _ = get_user_model().objects.get_or_create(username="bench-streaming")
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.save()
    return user, f"sessionid={session.session_key}"


def free_port() -> int:
    """A free port on 127.0.0.1: within BENCH_PORTS ("8550-8599") when set, else any; never
    one handed out before in this process (its server may not listen yet)."""
    low, _, high = os.environ.get("BENCH_PORTS", "0-0").partition("-")
    ports = range(int(low), int(high or low) + 1) if int(low) else [0] * 20
    for port in ports:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            found = int(sock.getsockname()[1])
        if found not in _handed_out:
            _handed_out.add(found)
            return found
    raise RuntimeError(f"no free port in BENCH_PORTS={os.environ['BENCH_PORTS']}")


_handed_out: set[int] = set()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_listening(proc: subprocess.Popen, port: int, log: str, seconds: float = 180) -> None:
    # A loaded machine (or a baseline tree compiling its .pyc files) starts slowly.
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{_name(proc)} exited; see {log}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise TimeoutError(f"{_name(proc)} did not listen")


def _name(proc: subprocess.Popen) -> str:
    return " ".join(str(arg) for arg in proc.args[1:3])


def start_studio(
    executor: str,
    port: int,
    stats_file: str,
    workers: int,
    root: Path = ROOT,
    seconds: float = 180,
) -> list[subprocess.Popen]:
    """Daphne, and with the worker executor its run workers: [daphne, worker...], from the
    studio's code at `root` (this checkout, or another commit's tree: `baseline_tree`).
    When Daphne is not listening within `seconds`, every process started is stopped (a
    run worker left running would claim the next bench's runs)."""
    env = {
        **os.environ,
        "STUDIO_RUNTIME_STATS_FILE": stats_file,
        "PYTHONPATH": str(root),
        "STUDIO_RUN_EXECUTOR": executor,
    }
    commands = [
        [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "studio.asgi:application",
        ]
    ]
    if executor == "worker":
        commands += [
            [sys.executable, "manage.py", "execute_runs", "--name", f"bench-{number}"]
            for number in range(workers)
        ]
    (ROOT / ".studio").mkdir(exist_ok=True)
    procs = []
    for number, command in enumerate(commands):
        log = ROOT / ".studio" / f"bench-{executor}-{number}-{port}.log"
        with open(log, "wb") as handle:
            procs.append(
                subprocess.Popen(
                    command, cwd=root, env=env, stdout=handle, stderr=subprocess.STDOUT
                )
            )
    try:
        wait_listening(procs[0], port, str(log), seconds)
    except BaseException:
        stop_processes(procs)
        raise
    return procs


def stop_processes(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def on_cpu_seconds(pid: int) -> float:
    """CPU time of the process's live threads to the nanosecond (their schedstat), where
    /proc/<pid>/stat counts clock ticks (10 ms: one tick a second is 1% of a core)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # the thread ended meanwhile
    return total / 1e9


def idle_cpu_by_process(pids: list[int], seconds: int = 10, settle: int = 2) -> list[float]:
    """CPU each process spends per second with nothing to do (polls, heartbeats, timers):
    it grows with the time a phase takes, not with its deltas. The first `settle` seconds
    are left out (the warm-up's tail: runs finishing, connections closing, which once
    counted as a third of a core of "idle"), then the mean over `seconds`, so that a timer
    that fires every few seconds counts as much as it costs. A thread that ends during a
    one-second window takes its time with it: such a window is measured again."""
    time.sleep(settle)
    totals = [0.0] * len(pids)
    measured = 0
    for _ in range(seconds * 2):
        before = [on_cpu_seconds(pid) for pid in pids]
        time.sleep(1)
        spent = [on_cpu_seconds(pid) - b for pid, b in zip(pids, before, strict=True)]
        if min(spent) < 0:
            continue
        totals = [t + s for t, s in zip(totals, spent, strict=True)]
        measured += 1
        if measured == seconds:
            break
    return [t / max(1, measured) for t in totals]


def idle_cpu_per_second(pids: list[int], seconds: int = 10) -> float:
    """The processes' idle CPU per second, all together (`idle_cpu_by_process`)."""
    return sum(idle_cpu_by_process(pids, seconds))


def baseline_tree(revision: str) -> Path:
    """The studio's code at `revision` (a commit of this repository), exported once into
    .studio/ (`git archive`): the baseline bench.streaming measures beside this checkout."""
    commit = subprocess.run(
        ["git", "rev-parse", "--verify", f"{revision}^{{commit}}"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    tree = ROOT / ".studio" / f"baseline-{commit[:12]}"
    if not (tree / "manage.py").exists():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", commit], cwd=ROOT, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree
