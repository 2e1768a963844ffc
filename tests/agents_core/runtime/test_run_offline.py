"""The run loop against the offline provider (litellm custom provider studio/scripted)."""

from __future__ import annotations

import pytest

from tests.agents_core.runtime.conftest import run_to_end, squeeze, types

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_tool_call_streams_every_event_type_in_order(make_thread, owner):
    thread = await _thread(make_thread)
    run, events = await run_to_end(thread, "use weather_lookup for Paris", owner)
    assert squeeze(types(events)) == [
        "run-start",
        "text-delta",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-end",
        "tool-call",
        "tool-result",
        "step-finish",
        "text-delta",
        "step-finish",
        "run-finish",
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


@pytest.fixture
def assemblies(monkeypatch):
    """Counts litellm's end-of-stream assemblies of a whole response (still doing them)."""
    import litellm

    counted: list[int] = []
    real = litellm.stream_chunk_builder

    def counting(*args, **kwargs):
        counted.append(len(kwargs.get("chunks") or args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(litellm, "stream_chunk_builder", counting)
    return counted


def _step_texts(events):
    texts: dict[int, str] = {}
    for event in events:
        if event["type"] == "text-delta":
            texts[event["step"]] = texts.get(event["step"], "") + event["textDelta"]
    return texts


async def test_the_usage_the_provider_reports_is_the_runs_and_litellm_assembles_nothing(
    make_thread, owner, assemblies
):
    """The offline model reports its usage on its last chunk, as a real provider does: the
    loop takes it there and closes the stream, so litellm never assembles the response
    (its logging, cache and budget, which would read it, are not configured)."""
    from providers import offline

    thread = await _thread(make_thread)
    run, events = await run_to_end(thread, "use weather_lookup for Paris", owner)
    assert run.status == "completed"
    usage = events[-1]["usage"]
    # One completion token per word streamed, plus one per tool call (the offline model's
    # count), over both model calls of the run.
    words = sum(len(offline._WORD.findall(text)) for text in _step_texts(events).values())
    assert usage["completion_tokens"] == words + 1
    assert usage["prompt_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert run.usage == usage
    assert assemblies == []


async def test_litellms_end_of_stream_usage_walks_only_the_chunks_that_carry_usage(
    make_thread, owner, monkeypatch
):
    """As it hands out its last chunk, litellm's wrapper sums the usage over its list of the
    stream's chunks: the loop keeps that list to the usage chunk and the last two, and the
    run's usage is still the provider's, exactly."""
    from litellm.litellm_core_utils import streaming_handler

    walked: list[int] = []
    real = streaming_handler._reported_total_usage

    def counting(chunks):
        walked.append(len(chunks))
        return real(chunks=chunks)

    monkeypatch.setattr(streaming_handler, "_reported_total_usage", counting)
    thread = await _thread(make_thread)
    run, events = await run_to_end(thread, "use weather_lookup for Paris", owner)
    assert run.status == "completed"
    from providers import offline

    # The offline model streams one chunk per word: far more chunks than the walk reads.
    words = sum(len(offline._WORD.findall(text)) for text in _step_texts(events).values())
    assert words > 6
    assert len(walked) == 2 and all(count <= 3 for count in walked), walked
    usage = events[-1]["usage"]
    assert usage["completion_tokens"] == words + 1
    assert run.usage == usage


async def test_a_litellm_callback_an_operator_configured_still_sees_every_model_call(
    make_thread, owner, assemblies, monkeypatch
):
    import asyncio

    import litellm
    from litellm.integrations.custom_logger import CustomLogger

    seen = []

    class Recorder(CustomLogger):
        async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
            seen.append(response_obj)

    # Fresh lists, so that what litellm files the callback under is undone after the test.
    for name in (
        "success_callback",
        "_async_success_callback",
        "failure_callback",
        "_async_failure_callback",
        "input_callback",
        "_async_input_callback",
    ):
        monkeypatch.setattr(litellm, name, [])
    monkeypatch.setattr(litellm, "callbacks", [Recorder()])
    thread = await _thread(make_thread)
    run, events = await run_to_end(thread, "use weather_lookup for Paris", owner)
    assert run.status == "completed"
    assert len(assemblies) == 2  # read to the end: litellm assembled both responses
    for _ in range(100):  # litellm logs from tasks of its own, after the stream ends
        if len(seen) == 2:
            break
        await asyncio.sleep(0.05)
    assert len(seen) == 2
    assert "light rain" in seen[1].choices[0].message.content
    assert (
        events[-1]["usage"]["total_tokens"]
        == (events[-1]["usage"]["prompt_tokens"] + events[-1]["usage"]["completion_tokens"])
        > 0
    )


async def test_a_provider_that_reports_no_usage_is_read_to_the_end_for_litellms_count(
    synced, owner, assemblies, monkeypatch
):
    """Without usage from the provider, litellm counts the tokens when it assembles the
    response: the loop reads on for it."""
    import litellm
    from channels.db import database_sync_to_async
    from litellm import CustomLLM
    from litellm.utils import custom_llm_setup

    from agents_core.models import Agent
    from agents_core.services.threads import thread_create

    class Unreporting(CustomLLM):
        async def astreaming(self, model, messages, *args, **kwargs):
            for text, finish in (("Hello ", ""), ("there, friend.", ""), ("", "stop")):
                yield {
                    "text": text,
                    "tool_use": None,
                    "is_finished": bool(finish),
                    "finish_reason": finish,
                    "usage": None,
                    "index": 0,
                }

    monkeypatch.setattr(
        litellm,
        "custom_provider_map",
        [
            *litellm.custom_provider_map,
            {"provider": "unreporting", "custom_handler": Unreporting()},
        ],
    )
    custom_llm_setup()

    def make():
        agent = Agent.objects.create(
            slug="unreporting",
            name="Unreporting",
            owner=owner,
            model="unreporting/echo",
            instructions="Be brief.",
        )
        return thread_create(user=owner, agent=agent)

    thread = await database_sync_to_async(make)()
    run, events = await run_to_end(thread, "hi", owner)
    assert run.status == "completed", run.error
    assert events[-1]["text"] == "Hello there, friend."
    assert assemblies == [3]
    assert run.usage["completion_tokens"] > 0 and run.usage["prompt_tokens"] > 0
