"""What every part of a run shares: its setup, its event sink, its entry among the
active runs, and the step it is at. The Runner (runtime/run/loop.py) makes one per run and
hands it to each of its collaborators (the model step, the tool calls, suspension); the
state each of them keeps beside it is its own."""

from __future__ import annotations

from dataclasses import dataclass

from agents_core.runtime.bus.events import EventSink
from agents_core.runtime.execution.active import ActiveRun
from agents_core.runtime.run.errors import Aborted
from agents_core.runtime.run.setup import RunSetup


@dataclass
class RunContext:
    setup: RunSetup
    sink: EventSink
    active: ActiveRun
    run_id: str
    # The step the run is at: the loop moves it on, the other parts read it.
    step: int

    def check_abort(self) -> None:
        if self.active.abort.is_set():
            raise Aborted
