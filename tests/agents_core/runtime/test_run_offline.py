"""The run loop against the offline provider (litellm custom provider studio/scripted)."""

from __future__ import annotations

import pytest

from tests.agents_core.runtime.conftest import run_to_end, squeeze, types

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_tool_call_streams_every_event_type_in_order(make_thread, owner):
    thread = await _thread(make_thread)
    run, events = await run_to_end(thread, "use weather_lookup for Paris", owner)
    assert squeeze(types(events)) == [
        "run-start", "text-delta", "tool-input-start", "tool-input-delta", "tool-input-end",
        "tool-call", "tool-result", "step-finish", "text-delta", "step-finish", "run-finish",
    ]
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    call = next(e for e in events if e["type"] == "tool-call")
    assert call["toolName"] == "weather_lookup" and call["input"] == {"city": "Paris"}
    result = next(e for e in events if e["type"] == "tool-result")
    assert result["output"]["conditions"] == "light rain"
    text = "".join(e["textDelta"] for e in events if e["type"] == "text-delta")
    assert "light rain" in text
    assert run.status == "completed"
    assert events[0]["message"] == "use weather_lookup for Paris"


async def _thread(make_thread, slug="weather-assistant"):
    from channels.db import database_sync_to_async

    return await database_sync_to_async(make_thread)(slug)
