"""Signals tools_app sends to the apps built on it (tools_app imports none of them)."""

from __future__ import annotations

from django.dispatch import Signal

# Sent once per async tool run, inside the transaction that records its final state
# (completed, or failed), with `run_id`. A receiver's writes commit or roll back with
# that state, so what it records (agents_core completes the chat's tool call) is there
# exactly when the run's result is. A receiver that raises rolls the result back: the
# run stays running under its lease and is recovered like a run whose worker died.
tool_run_finished = Signal()
