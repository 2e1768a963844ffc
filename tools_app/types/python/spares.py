"""Sandboxed interpreters started ahead of their run ("spares"), so that a run does not
wait for bubblewrap's namespaces, its cgroup and uid, and the interpreter's start.

A spare is exactly what a run started on demand gets (process.start: its own uid,
cgroup, namespaces, rlimits and empty tmp), started before its request is known. It
waits on its stdin, serves the one request it is handed and ends like any run; it is
never handed a second one, so nothing of one run (files, globals, memory, processes)
reaches another. Its CPU time limit is lowered to the run's by the runner once the
request arrives, and its timeout counts from then.

Each process keeps up to `HostConfig.spares` spares for its current configuration (host
and limits; another configuration discards them). A run takes one if there is one, else
starts its process on demand; each run then asks for the spare to be replaced, after it
ends, so that a start never competes with the run it would serve. Spares are started by
one long-lived thread of the process (bubblewrap's --die-with-parent follows the thread
that started it). A spare whose server dies reads the end of its stdin and exits.
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import subprocess
import threading
from typing import Any

from tools_app.types.python.cgroups import CgroupError
from tools_app.types.python.isolation import Capabilities, HostConfig, RunLimits, identity_claim
from tools_app.types.python.process import Started, start

Key = tuple[HostConfig, RunLimits]
logger = logging.getLogger(__name__)


class _Store:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.key: Key | None = None
        self.idle: list[Started] = []
        self.pending = 0  # starts asked of the thread for the current key
        self.jobs: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self.thread: threading.Thread | None = None

    def switch(self, key: Key) -> list[Started]:
        """Under the lock: make `key` current; returns the spares it makes stale."""
        if self.key == key:
            return []
        stale, self.idle, self.pending, self.key = self.idle, [], 0, key
        return stale


_store = _Store()


def take(host: HostConfig, limits: RunLimits) -> Started | None:
    """A spare for a run of this configuration, or None (start one on demand)."""
    if host.spares <= 0:
        return None
    with _store.lock:
        stale = _store.switch((host, limits))
        spare = None
        while _store.idle and spare is None:
            candidate = _store.idle.pop(0)
            if candidate.proc.poll() is None:
                spare = candidate
            else:
                stale.append(candidate)  # ended while waiting (killed from outside)
    for started in stale:
        _submit("discard", started)
    return spare


def refill(host: HostConfig, limits: RunLimits, caps: Capabilities) -> None:
    """Ask for spares of this configuration up to `host.spares` (started in the
    background; returns at once)."""
    if host.spares <= 0 or caps.refusal or caps.mode is None:
        return
    key = (host, limits)
    with _store.lock:
        stale = _store.switch(key)
        missing = host.spares - len(_store.idle) - _store.pending
        _store.pending += max(0, missing)
    for started in stale:
        _submit("discard", started)
    for _ in range(missing):
        _submit("start", (key, caps))


def idle_pids() -> set[int]:
    """The first process of every spare waiting for a request (for tests and tools)."""
    with _store.lock:
        return {started.proc.pid for started in _store.idle}


def discard_all() -> None:
    """End every waiting spare now (at exit, and when a host's setup changes)."""
    with _store.lock:
        stale, _store.idle, _store.pending, _store.key = _store.idle, [], 0, None
    for started in stale:
        started.discard()


def _submit(kind: str, payload: Any) -> None:
    with _store.lock:
        if _store.thread is None:
            _store.thread = threading.Thread(
                target=_work, args=(_store,), name="sandbox-spares", daemon=True
            )
            _store.thread.start()
    _store.jobs.put((kind, payload))


def _work(store: _Store) -> None:
    while True:
        kind, payload = store.jobs.get()
        try:
            _do(store, kind, payload)
        except Exception:  # the thread must go on: runs start on demand meanwhile
            logger.exception("The sandbox's spares thread failed to %s a spare.", kind)


def _do(store: _Store, kind: str, payload: Any) -> None:
    if kind == "discard":
        payload.discard()
        return
    key, caps = payload
    started = None
    try:
        started = _start(key, caps)
    finally:
        with store.lock:
            if store.key == key:
                store.pending = max(0, store.pending - 1)
                if started is not None and len(store.idle) < key[0].spares:
                    store.idle.append(started)
                    started = None
    if started is not None:
        started.discard()


def _start(key: Key, caps: Capabilities) -> Started | None:
    """A spare, or None when none can be started now (every uid in use, no cgroup, no
    process): runs then start theirs on demand, which says why."""
    host, limits = key
    identity = identity_claim(host)
    if identity is None:
        return None
    try:
        return start(caps=caps, host=host, limits=limits, identity=identity, ahead=True)
    except (CgroupError, OSError, subprocess.SubprocessError):
        identity.release()
        return None


def _forget_in_child() -> None:
    """In a forked child (a prefork worker): the spares are the parent's. Close this
    copy of their files and start afresh; never kill them."""
    global _store
    for started in list(_store.idle):
        started.close_fds()
    _store = _Store()


os.register_at_fork(after_in_child=_forget_in_child)
atexit.register(discard_all)
