"""Models, the editor, runs and agent tests."""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

from common.env import envbool, envfloat, envint, envlist

# --- Models -------------------------------------------------------------------------------
# The model demo agents use. With no provider key configured it is the offline provider.
STUDIO_OFFLINE_MODEL = "studio/scripted"
# Seconds the offline model waits between the chunks it streams, so that its replies stream
# like a real provider's (providers/offline.py).
STUDIO_OFFLINE_DELAY = envfloat("STUDIO_OFFLINE_DELAY", 0.02)
STUDIO_DEFAULT_MODEL = os.environ.get("STUDIO_DEFAULT_MODEL") or STUDIO_OFFLINE_MODEL
STUDIO_LOAD_DEMO = envbool("STUDIO_LOAD_DEMO", True)
STUDIO_CODE_MODULES = envlist("STUDIO_CODE_MODULES", [])
# The model servers (scheme://host:port, comma-separated) a model call may be sent to with
# an api_base, e.g. a local Ollama or vLLM. Without a base a call goes to its provider's
# own endpoint; any other base, wherever an agent or a run sets it, is refused: it would
# receive the server's provider keys (providers/gate.py).
STUDIO_MODEL_API_BASES = envlist("STUDIO_MODEL_API_BASES", [])
# How long a provider's "test connection" call may take, in seconds (providers/connection.py).
STUDIO_PROVIDER_TEST_TIMEOUT = envfloat("STUDIO_PROVIDER_TEST_TIMEOUT", 20.0)
# How often a run retries opening a model's stream on a rate limit, a 5xx, a connection
# error or a timeout before it moves to the next fallback, and the first wait in seconds
# (doubling each time) (providers/fallbacks.py).
STUDIO_MODEL_RETRIES = envint("STUDIO_MODEL_RETRIES", 2)
STUDIO_MODEL_RETRY_BACKOFF = envfloat("STUDIO_MODEL_RETRY_BACKOFF", 1.0)

# --- Editor ---------------------------------------------------------------------------------
# How long an edit lock lives without a renewal; the editor pages renew it every third of
# this while they are open (agents_core/editor/services/locks.py).
STUDIO_EDITLOCK_SECONDS = envint("STUDIO_EDITLOCK_SECONDS", 90)

# --- Runs ---------------------------------------------------------------------------------
# Where runs execute: "inline" (default) in the web process that starts them; "worker" in
# run worker processes (`manage.py execute_runs`), so a web process only relays events.
# Workers need a shared database and channel layer (PostgreSQL and Redis).
STUDIO_RUN_EXECUTOR = os.environ.get("STUDIO_RUN_EXECUTOR", "inline")
if STUDIO_RUN_EXECUTOR not in ("inline", "worker"):
    raise ImproperlyConfigured(
        f"STUDIO_RUN_EXECUTOR must be 'inline' or 'worker', not {STUDIO_RUN_EXECUTOR!r}"
    )
STUDIO_RUN_WORKER_CONCURRENCY = envint("STUDIO_RUN_WORKER_CONCURRENCY", 200)
# Runs a worker claims at a time: with a burst of queued runs the workers take turns.
STUDIO_RUN_WORKER_CLAIM_BATCH = envint("STUDIO_RUN_WORKER_CLAIM_BATCH", 4)
# How often a run worker beats, ends the runs of dead workers and looks for queued runs it
# was not told of (it is told by a PostgreSQL notification: runtime/execution/worker.py).
STUDIO_RUN_WORKER_POLL_SECONDS = float(os.environ.get("STUDIO_RUN_WORKER_POLL_SECONDS", "10"))
# A run worker whose heartbeat is older than this (at least three beats) is dead: the
# others end its runs.
STUDIO_RUN_WORKER_DEAD_SECONDS = envint("STUDIO_RUN_WORKER_DEAD_SECONDS", 30)
# How long a run worker that is told to stop lets its runs finish before it ends them.
STUDIO_RUN_WORKER_GRACE_SECONDS = envint("STUDIO_RUN_WORKER_GRACE_SECONDS", 20)
# A run that has written nothing for this long is taken as left behind by a process that
# died: the thread's next chat ends it as interrupted (agents_core/services/runs.py).
STUDIO_RUN_STALE_SECONDS = envint("STUDIO_RUN_STALE_SECONDS", 600)
# Threads a run worker lends litellm for its end-of-stream work (runtime/execution/worker.py).
STUDIO_RUN_WORKER_HELPER_THREADS = envint("STUDIO_RUN_WORKER_HELPER_THREADS", 2)
# Threads that run the runtime's database work in a web process, and in a run worker,
# whose event loop (every stream) gets the GIL back every STUDIO_RUN_WORKER_SWITCH_INTERVAL
# seconds at most (runtime/execution/worker.py).
STUDIO_RUNTIME_DB_THREADS = envint("STUDIO_RUNTIME_DB_THREADS", 4)
STUDIO_RUN_WORKER_DB_THREADS = envint("STUDIO_RUN_WORKER_DB_THREADS", 2)
STUDIO_RUN_WORKER_SWITCH_INTERVAL = float(
    os.environ.get("STUDIO_RUN_WORKER_SWITCH_INTERVAL", "0.001")
)
# The same two in a web process that executes runs inline, from its first run on
# (agents_core/runtime/execution/processes.py); a switch interval of 0 leaves both as they are.
STUDIO_INLINE_SWITCH_INTERVAL = float(os.environ.get("STUDIO_INLINE_SWITCH_INTERVAL", "0.001"))
STUDIO_INLINE_HELPER_THREADS = envint("STUDIO_INLINE_HELPER_THREADS", 2)
# A run worker's niceness (os.nice): above 0 it yields the CPU to the web processes of the
# same machine, which take messages and answer them (docs/runs.md, "What a run costs").
STUDIO_RUN_WORKER_NICE = envint("STUDIO_RUN_WORKER_NICE", 10)
# A process that executes runs (a run worker; a web process with the inline executor, once
# litellm is loaded) freezes what it imported and then collects garbage with these
# thresholds (gc.set_threshold; agents_core/runtime/execution/heap.py).
# STUDIO_RUN_SETTLE_HEAP=0 leaves the collector as Python sets it (the test settings do,
# for the test process itself).
STUDIO_RUN_SETTLE_HEAP = envbool("STUDIO_RUN_SETTLE_HEAP", True)
STUDIO_RUN_GC_THRESHOLDS = tuple(
    int(n) for n in envlist("STUDIO_RUN_GC_THRESHOLDS", ["50000", "20", "100"])
)
# Stream events are delivered as the run yields them and stored behind, in one statement per
# this many milliseconds (agents_core/runtime/bus/events.py, StreamWriter): storing a few
# together costs less CPU per event than storing each alone, and no latency. A run's
# process that dies loses at most what it delivered in the last window (docs/protocol.md).
STUDIO_STREAM_BATCH_MS = envint("STUDIO_STREAM_BATCH_MS", 60)

# --- Agent tests (evals) ------------------------------------------------------------------
# How many cases of a suite run play at once, how long one turn of a case may take before
# its run is stopped (seconds), and the judge model when an expectation names none (empty:
# the agent's own model).
STUDIO_EVAL_CONCURRENCY = envint("STUDIO_EVAL_CONCURRENCY", 4)
STUDIO_EVAL_TURN_TIMEOUT = envint("STUDIO_EVAL_TURN_TIMEOUT", 300)
STUDIO_EVAL_JUDGE_MODEL = os.environ.get("STUDIO_EVAL_JUDGE_MODEL", "")
# The worker playing a suite run holds a lease on it, renewed every third of
# STUDIO_EVAL_LEASE_SECONDS; a run whose lease expired (its worker died) is played again
# from its unfinished results by another worker, at most STUDIO_EVAL_MAX_ATTEMPTS times in
# all, then its unfinished results fail (evals/services/recovery.py).
STUDIO_EVAL_LEASE_SECONDS = envint("STUDIO_EVAL_LEASE_SECONDS", 30)
STUDIO_EVAL_MAX_ATTEMPTS = envint("STUDIO_EVAL_MAX_ATTEMPTS", 3)
if STUDIO_EVAL_LEASE_SECONDS < 2 or STUDIO_EVAL_MAX_ATTEMPTS < 1:
    raise ImproperlyConfigured(
        "STUDIO_EVAL_LEASE_SECONDS must be at least 2, STUDIO_EVAL_MAX_ATTEMPTS at least 1."
    )
# The embedding model `similar` expectations compare with (any litellm embedding model, as
# for knowledge bases, through STUDIO_KNOWLEDGE_EMBEDDING_API_BASE when set); empty: a
# lexical measure.
STUDIO_EVAL_SIMILARITY_MODEL = os.environ.get("STUDIO_EVAL_SIMILARITY_MODEL", "")
