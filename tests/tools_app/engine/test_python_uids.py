"""A run's own uid (tools_app/types/python/pool.py): held with an flock, handed out at
once when its last holder gave it back clean, searched for leftover processes first when
its holder died holding it. Uids far above the sandbox range, with lock files of the
test's own, so no run of another process is touched."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools_app.types.python import pool
from tools_app.types.python.pool import CLEAN, uid_claim, uid_processes

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="runs as other uids: needs root")
BASE = 3_900_000 + (os.getpid() % 1000) * 4

# A server that claims the uid, starts a process of that uid and dies without giving it
# back (its flock goes with it; what it wrote in the lock file stays).
CRASHING_HOLDER = """
import subprocess, sys, os
from tools_app.types.python.pool import uid_claim
lease = uid_claim(base=int(sys.argv[1]), count=1, lock_dir=sys.argv[2])
child = subprocess.Popen(
    ["/usr/bin/setpriv", f"--reuid={lease.uid}", f"--regid={lease.uid}", "--clear-groups",
     "/usr/bin/sleep", "120"],
    start_new_session=True,
    stdin=subprocess.DEVNULL,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
print(child.pid, flush=True)
os._exit(0)
"""


def test_a_uid_is_held_until_it_is_given_back(tmp_path: Path):
    lease = uid_claim(base=BASE, count=1, lock_dir=str(tmp_path))
    assert lease is not None

    assert uid_claim(base=BASE, count=1, lock_dir=str(tmp_path)) is None
    lease.release()
    again = uid_claim(base=BASE, count=1, lock_dir=str(tmp_path))
    assert again is not None and again.uid == lease.uid
    again.release()


def test_one_process_hands_out_the_uids_of_its_range_in_turn(tmp_path: Path):
    claimed = []
    for _ in range(4):
        lease = uid_claim(base=BASE, count=4, lock_dir=str(tmp_path))
        assert lease is not None
        claimed.append(lease.uid)
        lease.release()

    assert sorted(claimed) == [BASE, BASE + 1, BASE + 2, BASE + 3]


def test_a_uid_another_process_holds_is_skipped_and_the_turn_goes_on_after_it(tmp_path: Path):
    """The next claim starts one past the uid claimed last, so skipping a held uid never
    hands the same uid out twice in a row (runs of two test processes share a range)."""
    first = uid_claim(base=BASE, count=8, lock_dir=str(tmp_path))
    assert first is not None
    first.release()
    held = os.open(
        tmp_path / f"uid-{BASE + (first.uid - BASE + 1) % 8}.lock", os.O_CREAT | os.O_RDWR
    )
    fcntl.flock(held, fcntl.LOCK_EX)  # another open file: as another process holds it
    try:
        second = uid_claim(base=BASE, count=8, lock_dir=str(tmp_path))
        assert second is not None
        second.release()
    finally:
        os.close(held)
    third = uid_claim(base=BASE, count=8, lock_dir=str(tmp_path))
    assert third is not None
    third.release()

    offsets = [(lease.uid - first.uid) % 8 for lease in (second, third)]
    assert offsets == [2, 3]


def test_a_uid_new_or_given_back_clean_is_handed_out_without_a_search(tmp_path, monkeypatch):
    searched: list[int] = []
    monkeypatch.setattr(pool, "uid_processes", lambda uid: searched.append(uid) or [])
    (tmp_path / f"uid-{BASE + 2}.lock").write_bytes(b"")  # a server of before: unknown

    uid_claim(base=BASE, count=1, lock_dir=str(tmp_path)).release()  # type: ignore[union-attr]
    lock = tmp_path / f"uid-{BASE}.lock"
    assert lock.read_bytes() == CLEAN and searched == []

    lease = uid_claim(base=BASE, count=1, lock_dir=str(tmp_path))

    assert lease is not None and searched == []
    assert lock.read_bytes() == f"{os.getpid()}\n".encode()  # held: not clean any more
    lease.release(clean=False)  # a tree that could not be killed: the next one searches
    uid_claim(base=BASE, count=1, lock_dir=str(tmp_path)).release()  # type: ignore[union-attr]
    assert searched == [BASE]
    uid_claim(base=BASE + 2, count=1, lock_dir=str(tmp_path)).release()  # type: ignore[union-attr]
    assert searched == [BASE, BASE + 2]


def test_a_uid_whose_holder_died_is_searched_and_its_processes_killed(tmp_path: Path):
    root = Path(__file__).resolve().parents[3]
    holder = subprocess.run(
        [sys.executable, "-c", CRASHING_HOLDER, str(BASE + 1), str(tmp_path)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    leftover = int(holder.stdout.split()[0])
    deadline = time.monotonic() + 10
    while leftover not in uid_processes(BASE + 1) and time.monotonic() < deadline:
        time.sleep(0.01)  # setpriv has not dropped to the uid yet
    assert leftover in uid_processes(BASE + 1)

    lease = uid_claim(base=BASE + 1, count=1, lock_dir=str(tmp_path))

    assert lease is not None and lease.uid == BASE + 1
    assert uid_processes(BASE + 1) == []
    lease.release()
