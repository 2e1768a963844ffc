"""Who may run now, and as which uid.

- `SlotPool`: at most `size` sandboxed runs at once in this process, and at most
  `per_owner` of them for one owner key (a user's id today, a workspace's later). A run
  that cannot start waits in its owner's queue (at most `wait` seconds, then
  `SandboxBusy` with a message that says whose runs held the slots). A freed slot goes
  round-robin across the owners that may take one (an owner at its share is skipped),
  first come first served within an owner, so one owner's burst of runs never holds
  more than its share nor pushes another owner's run to the back of a long line. The
  pool is shared by every thread and event loop of the process (Daphne, async_to_sync,
  Celery threads, the sandbox service's request threads); with the sandbox service,
  every web process and worker sends its runs to the one pool of the service.
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
import os
import signal
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

# Told to a run that has to wait: why (one line a person reads), then None once it has
# its slot. It should not raise: what it raises ends the wait (the run does not start).
OnWait = Callable[[str | None], Awaitable[None]]


class SandboxBusy(Exception):  # noqa: N818 - a state, not an error of the caller
    """No slot came free for the run within the whole bounded wait."""


@dataclass(eq=False)
class _Waiter:
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]


class SlotPool:
    def __init__(self, size: int, per_owner: int | None = None) -> None:
        if size < 1:
            raise ValueError("The sandbox pool needs at least one slot.")
        if per_owner is not None and per_owner < 1:
            raise ValueError("Each owner needs at least one slot of the pool.")
        self.size = size
        self.per_owner = min(per_owner or size, size)
        self._busy = 0
        self._running: Counter[str] = Counter()  # owner -> slots it holds
        self._lock = threading.Lock()
        # owner -> its waiters in arrival order; the dict's order is the rotation.
        self._queues: OrderedDict[str, deque[_Waiter]] = OrderedDict()

    @property
    def busy(self) -> int:
        return self._busy

    @property
    def waiting(self) -> int:
        with self._lock:
            return sum(len(queue) for queue in self._queues.values())

    def running(self, owner: str) -> int:
        with self._lock:
            return self._running[owner]

    async def acquire(self, *, tenant: str, wait: float, on_wait: OnWait | None = None) -> None:
        """A slot for a run of `tenant` (the owner key). Whoever waits could not start:
        the free slots, if any, belong to owners below their share (release hands a
        freed slot on at once), so a run that may start now overtakes nobody."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._busy < self.size and self._running[tenant] < self.per_owner:
                self._take(tenant)
                return
            own_share = self._running[tenant] >= self.per_owner
            waiter = _Waiter(loop, loop.create_future())
            self._queues.setdefault(tenant, deque()).append(waiter)
        try:
            if on_wait is not None:
                await on_wait(self._why(own_share))
            await asyncio.wait_for(asyncio.shield(waiter.future), timeout=wait)
            if on_wait is not None:
                await on_wait(None)
        except BaseException as exc:
            self._abandon(tenant, waiter)
            if isinstance(exc, TimeoutError):
                raise SandboxBusy(self._gave_up(tenant, wait)) from None
            raise

    def _why(self, own_share: bool) -> str:
        if own_share:
            return (
                f"Waiting for a sandbox slot: your runs hold your share of {self.per_owner} "
                "at once; this one starts when one of them ends."
            )
        return f"Waiting for a sandbox slot: all {self.size} are in use; runs take turns."

    def _gave_up(self, tenant: str, wait: float) -> str:
        with self._lock:
            own_share = self._running[tenant] >= self.per_owner
        if own_share:
            return (
                f"Waited {wait:g} s for a sandbox slot: your other runs held your share of "
                f"{self.per_owner} slots all that time, so this run did not start."
            )
        return (
            f"Waited {wait:g} s for a sandbox slot: all {self.size} slots of the sandbox "
            "stayed in use all that time, so this run did not start."
        )

    def _take(self, tenant: str) -> None:
        self._busy += 1
        self._running[tenant] += 1

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
            self.release(tenant=tenant)
        else:
            waiter.future.cancel()  # a hand-over still in flight sees it and passes on

    def release(self, *, tenant: str) -> None:
        """Give back a slot `tenant` held; it goes to the next owner in the rotation
        that is below its share (that owner's oldest waiter)."""
        with self._lock:
            self._busy -= 1
            self._running[tenant] -= 1
            if self._running[tenant] <= 0:
                del self._running[tenant]
            self._hand_on()

    def _hand_on(self) -> None:
        while self._busy < self.size:
            owner = next(
                (name for name in self._queues if self._running[name] < self.per_owner), None
            )
            if owner is None:
                return
            queue = self._queues.pop(owner)
            waiter = queue.popleft()
            if queue:
                self._queues[owner] = queue  # to the back of the rotation
            try:
                waiter.loop.call_soon_threadsafe(self._hand_over, owner, waiter)
            except RuntimeError:
                continue  # that waiter's loop is gone
            self._take(owner)

    def _hand_over(self, owner: str, waiter: _Waiter) -> None:
        if waiter.future.done():
            self.release(tenant=owner)  # it stopped waiting just before: pass it on
        else:
            waiter.future.set_result(None)


_pools: dict[tuple[int, int], SlotPool] = {}
_pools_lock = threading.Lock()


def pool_for(size: int, per_owner: int) -> SlotPool:
    """This process's pool of `size` slots, `per_owner` of them at most for one owner."""
    with _pools_lock:
        key = (size, per_owner)
        if key not in _pools:
            _pools[key] = SlotPool(size, per_owner)
        return _pools[key]


# --- uids ---------------------------------------------------------------------------------
CLEAN = b"clean\n"  # a uid lock file's content once its last holder gave it back clean
# Where this process's next uid search starts: one past the uid it claimed last.
_after_last: dict[str, int] = {}


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
    fork` (docs/benchmarks.md, "Python sandbox"). It starts one past the uid this
    process claimed last, not one past where it started last: uids another process holds
    are skipped, and the next claim must not land on the one just handed out."""
    directory = Path(lock_dir)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    start = _after_last.get(lock_dir, os.getpid() * 7)  # spread the processes, then rotate
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
            _after_last[lock_dir] = start + offset + 1
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
