"""Who may run now, and as which uid.

- `SlotPool`: at most N sandboxed runs at once in this process. A run that finds every
  slot taken waits in a queue (at most `wait` seconds, then `SandboxBusy`), and freed
  slots go round-robin across tenants, so one user's burst of runs cannot push another
  user's run to the back of a long line. The pool is shared by every thread and event
  loop of the process (Daphne, async_to_sync, Celery threads, the sandbox service's
  request threads).
- `uid_claim`: a uid of its own for each run, from a configured range, held with an
  flock on a file per uid, so the processes of one host (web, workers, the service)
  never hand the same uid to two runs at once. A uid needs no /etc/passwd entry; with a
  uid per run, RLIMIT_NPROC counts that run's processes only. The lock file also says
  whether the uid was given back clean: a holder writes its pid into it when it claims
  the uid and `clean` when it releases the uid after its run's tree is dead; the kernel
  drops the flock of a holder that dies, but not what it wrote. So only a uid whose file
  does not say `clean` (a holder died, or a server of before this file) is searched for
  leftover processes (a scan of /proc, tens of ms on a busy host) before it is handed
  out; a clean one, or one whose file the claim made (never held), is handed out at
  once. A process hands out the uids of its range in turn, not the same one each time.
- `uid_processes` / `uid_kill`: every live process of a uid, from /proc, and killing
  them until none is left (the net under the pid namespace and the cgroup).

Standard library only: the sandbox service uses it without Django settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import itertools
import os
import signal
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from pathlib import Path


class SandboxBusy(Exception):  # noqa: N818 - a state, not an error of the caller
    """Every slot stayed taken for the whole bounded wait."""


@dataclass(eq=False)
class _Waiter:
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]


class SlotPool:
    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("The sandbox pool needs at least one slot.")
        self.size = size
        self._busy = 0
        self._lock = threading.Lock()
        # tenant -> its waiters in arrival order; the dict's order is the rotation.
        self._queues: OrderedDict[str, deque[_Waiter]] = OrderedDict()

    @property
    def busy(self) -> int:
        return self._busy

    @property
    def waiting(self) -> int:
        with self._lock:
            return sum(len(queue) for queue in self._queues.values())

    async def acquire(self, *, tenant: str, wait: float) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._busy < self.size and not self._queues:
                self._busy += 1
                return
            waiter = _Waiter(loop, loop.create_future())
            self._queues.setdefault(tenant, deque()).append(waiter)
        try:
            await asyncio.wait_for(asyncio.shield(waiter.future), timeout=wait)
        except BaseException as exc:
            self._abandon(tenant, waiter)
            if isinstance(exc, TimeoutError):
                raise SandboxBusy(
                    f"All {self.size} sandbox slots of this server stayed busy for {wait:g} s."
                ) from None
            raise

    def _abandon(self, tenant: str, waiter: _Waiter) -> None:
        """A waiter that stops waiting (timeout, cancellation) gives back a slot it may
        have been handed meanwhile."""
        with self._lock:
            queue = self._queues.get(tenant)
            if queue is not None and waiter in queue:
                queue.remove(waiter)
                if not queue:
                    del self._queues[tenant]
                return
        if waiter.future.done() and not waiter.future.cancelled():
            self.release()
        else:
            waiter.future.cancel()  # a hand-over still in flight sees it and passes on

    def release(self) -> None:
        with self._lock:
            while self._queues:
                tenant, queue = next(iter(self._queues.items()))
                waiter = queue.popleft()
                del self._queues[tenant]
                if queue:
                    self._queues[tenant] = queue  # to the back of the rotation
                try:
                    waiter.loop.call_soon_threadsafe(self._hand_over, waiter)
                    return  # the slot moves to the waiter: _busy stays as it is
                except RuntimeError:
                    continue  # that waiter's loop is gone
            self._busy -= 1

    def _hand_over(self, waiter: _Waiter) -> None:
        if waiter.future.done():
            self.release()  # it stopped waiting just before: the next one gets the slot
        else:
            waiter.future.set_result(None)


_pools: dict[int, SlotPool] = {}
_pools_lock = threading.Lock()


def pool_for(size: int) -> SlotPool:
    """This process's pool of `size` slots."""
    with _pools_lock:
        if size not in _pools:
            _pools[size] = SlotPool(size)
        return _pools[size]


# --- uids ---------------------------------------------------------------------------------
CLEAN = b"clean\n"  # a uid lock file's content once its last holder gave it back clean
_claims = itertools.count()


@dataclass
class UidLease:
    uid: int
    fd: int

    def release(self, *, clean: bool = True) -> None:
        """Give the uid back; `clean`: no process of the uid is left (else the next
        holder searches /proc for them first)."""
        if clean:
            with contextlib.suppress(OSError):
                _state_write(self.fd, CLEAN)
        with contextlib.suppress(OSError):
            os.close(self.fd)  # closing drops the flock


def uid_claim(*, base: int, count: int, lock_dir: str) -> UidLease | None:
    """A uid of [base, base + count) no other run of this host holds, or None. Each
    claim starts its search one uid further than the last one of this process: the kernel
    gives back a uid's process count (RLIMIT_NPROC) some time after its run's namespaces
    are gone, so one uid reused run after run, faster than that, ends with `bwrap: Can't
    fork` (docs/benchmarks.md, "Python sandbox")."""
    directory = Path(lock_dir)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    start = os.getpid() * 7 + next(_claims)  # spread the processes, then rotate
    for offset in range(count):
        uid = base + (start + offset) % count
        path = directory / f"uid-{uid}.lock"
        try:  # a file made now: the uid was never held, nothing of it can be left
            fd, fresh = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600), True
        except FileExistsError:
            fd, fresh = os.open(path, os.O_RDWR), False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        # A holder that died without releasing the uid left its pid in the file, and
        # maybe processes of its run: those are killed before the uid is handed out.
        if fresh or os.pread(fd, len(CLEAN) + 1, 0) == CLEAN or uid_kill(uid):
            _state_write(fd, f"{os.getpid()}\n".encode())
            return UidLease(uid, fd)
        os.close(fd)
    return None


def _state_write(fd: int, state: bytes) -> None:
    os.pwrite(fd, state, 0)
    os.ftruncate(fd, len(state))


def uid_processes(uid: int) -> list[int]:
    """Live (not zombie) processes whose real uid is `uid`."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_text()
        except OSError:
            continue
        if _field(status, "Uid:") == str(uid) and _field(status, "State:") != "Z":
            found.append(int(entry.name))
    return found


def _field(status: str, name: str) -> str:
    start = status.find("\n" + name)
    if start < 0:
        return ""
    values = status[start + len(name) + 1 :].split(None, 1)
    return values[0] if values else ""


def uid_kill(uid: int, *, within: float = 5.0) -> bool:
    """SIGKILL every process of `uid` until none is left; True once none is."""
    deadline = time.monotonic() + within
    while pids := uid_processes(uid):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
