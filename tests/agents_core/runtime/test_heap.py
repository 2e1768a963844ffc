"""A process that executes runs takes what it imported out of the collector's sight
(agents_core/runtime/execution/heap.py) and, inline, gives its event loop the GIL back sooner
(agents_core/runtime/execution/processes.py): checked in a fresh interpreter, since both change the
whole process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT, child_process_env

# Each test starts a fresh interpreter that imports Django and litellm.
pytestmark = pytest.mark.slow

PROBE = """
import asyncio, gc, json, sys
import anyio.to_thread
import django
django.setup()
from agents_core.runtime.execution import heap
from agents_core.runtime.run import model_step

async def first_run():
    await model_step.litellm_module(offline=True)
    return anyio.to_thread.current_default_thread_limiter().total_tokens

before = gc.get_freeze_count()
helpers = asyncio.run(first_run())
after_first = gc.get_freeze_count()
asyncio.run(model_step.litellm_module(offline=True))
print(json.dumps({"before": before, "after_first": after_first,
                  "after_second": gc.get_freeze_count(), "threshold": gc.get_threshold(),
                  "again": heap.settle(), "switch": sys.getswitchinterval(),
                  "helpers": helpers}))
"""


def probe(**env: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=child_process_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("gc_thresholds", ["50000,20,100", "7000,11,13"])
def test_a_web_process_executing_runs_freezes_its_heap_once_litellm_is_loaded(gc_thresholds):
    seen = probe(STUDIO_RUN_EXECUTOR="inline", STUDIO_RUN_GC_THRESHOLDS=gc_thresholds)

    assert seen["before"] == 0
    # Django and litellm: hundreds of thousands of objects, frozen once.
    assert seen["after_first"] > 100_000
    assert seen["after_second"] == seen["after_first"]
    assert seen["again"] is False
    assert seen["threshold"] == [int(n) for n in gc_thresholds.split(",")]


def test_a_web_process_that_queues_runs_for_workers_leaves_the_collector_alone():
    """The run worker settles its own heap after its warm-up (worker.serve_forever)."""
    seen = probe(STUDIO_RUN_EXECUTOR="worker")

    assert seen["after_second"] == 0
    assert seen["threshold"] != [50000, 20, 100]


def test_the_setting_turns_it_off():
    seen = probe(STUDIO_RUN_EXECUTOR="inline", STUDIO_RUN_SETTLE_HEAP="0")

    assert seen["after_second"] == 0
    assert seen["again"] is False


def test_a_web_process_executing_runs_gives_its_event_loop_the_gil_back_sooner():
    seen = probe(
        STUDIO_RUN_EXECUTOR="inline",
        STUDIO_INLINE_SWITCH_INTERVAL="0.002",
        STUDIO_INLINE_HELPER_THREADS="3",
    )

    assert seen["switch"] == pytest.approx(0.002)
    assert seen["helpers"] == 3


@pytest.mark.parametrize(
    "env", [{"STUDIO_RUN_EXECUTOR": "worker"}, {"STUDIO_INLINE_SWITCH_INTERVAL": "0"}]
)
def test_a_web_process_that_does_not_execute_runs_or_is_told_not_to_keeps_pythons_interval(env):
    seen = probe(**{"STUDIO_RUN_EXECUTOR": "inline", **env})

    assert seen["switch"] == pytest.approx(0.005)
    assert seen["helpers"] == 40
