"""The run loop through litellm's real HTTP path: a local OpenAI-compatible server on
127.0.0.1 streams SSE chunks (tool-call argument pieces, then text)."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import web
from channels.db import database_sync_to_async

from tests.agents_core.runtime.conftest import run_to_end, squeeze, types

pytestmark = pytest.mark.django_db(transaction=True)

ARGUMENTS = '{"city": "Paris", "units": "metric"}'
# What the server reports for the first model call of a run and for the one after the tool.
USAGE = {
    False: {"prompt_tokens": 31, "completion_tokens": 12, "total_tokens": 43},
    True: {"prompt_tokens": 58, "completion_tokens": 7, "total_tokens": 65},
}


def chunk(delta, finish=None):
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "whatever",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class FakeOpenAI:
    """Speaks /v1/chat/completions with stream=true, like vLLM or llama.cpp would."""

    def __init__(self, mode="ok"):
        self.mode = mode
        self.requests = []

    async def handle(self, request):
        body = await request.json()
        self.requests.append(body)
        if request.headers.get("Authorization") != "Bearer sk-good":
            return web.json_response(
                {
                    "error": {
                        "message": "Incorrect API key provided",
                        "type": "invalid_request_error",
                        "code": "invalid_api_key",
                    }
                },
                status=401,
            )
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        async def send(data):
            text = data if isinstance(data, str) else json.dumps(data)
            await response.write(f"data: {text}\n\n".encode())
            await asyncio.sleep(0.01)

        if self.mode == "malformed":
            await send(chunk({"role": "assistant", "content": "Hel"}))
            await send('{"choices": [{"delta": {"content": "lo"')
        elif body["messages"][-1]["role"] == "tool":
            for word in ["The ", "weather ", "in ", "Paris: ", "light ", "rain."]:
                await send(chunk({"content": word}))
            await send(chunk({}, "stop"))
        else:
            await send(chunk({"role": "assistant", "content": "Looking it up. "}))
            await send(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_abc",
                                "type": "function",
                                "function": {"name": "weather_lookup", "arguments": ""},
                            }
                        ]
                    }
                )
            )
            for i in range(0, len(ARGUMENTS), 4):
                await send(
                    chunk(
                        {
                            "tool_calls": [
                                {"index": 0, "function": {"arguments": ARGUMENTS[i : i + 4]}}
                            ]
                        }
                    )
                )
            await send(chunk({}, "tool_calls"))
        if self.mode != "malformed" and (body.get("stream_options") or {}).get("include_usage"):
            # As OpenAI does when asked: a last chunk with no choices and the usage.
            usage = USAGE[body["messages"][-1]["role"] == "tool"]
            await send({**chunk({}), "choices": [], "usage": usage})
        await response.write(b"data: [DONE]\n\n")
        return response


@pytest.fixture
async def fake_openai(settings):
    server = FakeOpenAI()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", server.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    server.url = f"http://127.0.0.1:{port}/v1"
    # The operator's list of model servers: a base outside it is refused.
    settings.STUDIO_MODEL_API_BASES = [f"http://127.0.0.1:{port}"]
    yield server
    await runner.cleanup()


def make_agent_thread(owner, url, key="sk-good"):
    from agents_core.models import Agent, AgentTool
    from agents_core.services.threads import thread_create
    from tools_app.models import Tool

    agent = Agent.objects.create(
        slug="local-llm",
        name="Local LLM",
        model="openai/whatever",
        owner=owner,
        instructions=["You are terse.", "Use tools."],
        metadata={"api_base": url},
        default_options={"modelSettings": {"api_key": key}, "toolChoice": "auto"},
    )
    AgentTool.objects.create(
        agent=agent, tool=Tool.objects.get(name="weather_lookup"), key="weather_lookup"
    )
    return thread_create(user=owner, agent=agent)


async def test_tool_call_chunks_stream_through_litellms_http_path(synced, owner, fake_openai):
    thread = await database_sync_to_async(make_agent_thread)(owner, fake_openai.url)
    run, events = await run_to_end(thread, "weather in Paris?", owner)
    assert run.status == "completed", run.error
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
    deltas = [e for e in events if e["type"] == "tool-input-delta"]
    assert "".join(d["argsTextDelta"] for d in deltas) == ARGUMENTS
    # Arrived in pieces and published in pieces: the first event shows a partial value.
    assert len(deltas) >= 2
    first = {}
    for patch in deltas[0]["patches"]:
        if patch["op"] == "set" and patch["path"] == []:
            first = patch["value"]
        elif patch["op"] == "set":
            first[patch["path"][0]] = patch["value"]
        else:
            first[patch["path"][0]] += patch["value"]
    assert first != json.loads(ARGUMENTS)
    assert all(json.loads(ARGUMENTS)[key].startswith(value) for key, value in first.items())
    assert next(e for e in events if e["type"] == "tool-call")["toolCallId"] == "call_abc"
    assert events[-1]["text"] == "The weather in Paris: light rain."
    first, second = fake_openai.requests
    assert first["messages"][:2] == [
        {"role": "system", "content": "You are terse."},
        {"role": "system", "content": "Use tools."},
    ]
    assert first["tools"][0]["function"]["name"] == "weather_lookup"
    assert first["tool_choice"] == "auto" and first["stream"] is True
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_abc"
    assert json.loads(tool_message["content"])["conditions"] == "light rain"
    # include_usage was asked for, and the usage the server reported is counted once.
    assert first["stream_options"] == {"include_usage": True}
    assert (
        run.usage
        == events[-1]["usage"]
        == {"prompt_tokens": 89, "completion_tokens": 19, "total_tokens": 108}
    )


async def test_a_bad_api_key_ends_the_run_with_a_readable_error(synced, owner, fake_openai):
    thread = await database_sync_to_async(make_agent_thread)(owner, fake_openai.url, "sk-bad")
    run, events = await run_to_end(thread, "hello", owner)
    assert squeeze(types(events)) == ["run-start", "run-error"]
    assert events[-1]["code"] == "auth"
    assert "Incorrect API key provided" in events[-1]["error"]
    assert run.status == "failed"


async def test_a_malformed_chunk_ends_the_run_with_run_error(synced, owner, fake_openai):
    fake_openai.mode = "malformed"
    thread = await database_sync_to_async(make_agent_thread)(owner, fake_openai.url)
    run, events = await run_to_end(thread, "hello", owner)
    assert events[-1]["type"] == "run-error" and run.status == "failed"
    assert events[-1]["error"]


async def test_a_provider_that_is_down_ends_the_run_with_run_error(synced, owner, settings):
    settings.STUDIO_MODEL_API_BASES = ["http://127.0.0.1:9"]
    thread = await database_sync_to_async(make_agent_thread)(owner, "http://127.0.0.1:9/v1")
    run, events = await run_to_end(
        thread, "hello", owner, {"modelSettings": {"num_retries": 0, "timeout": 5}}
    )
    assert events[-1]["type"] == "run-error" and run.status == "failed"
    assert events[-1]["code"] in ("unreachable", "unavailable", "provider_error")


async def test_a_stream_the_loop_stops_at_its_last_chunk_gives_its_connection_back():
    """A server that reports usage on its finish chunk (as vLLM and llama.cpp can) and sends
    `[DONE]` after it: the loop stops at litellm's last chunk (nothing to wait for), and
    closing reads the rest first, so every call of a run reuses one connection."""
    import litellm

    from providers import model_stream

    peers, finished = [], []

    async def handle(request):
        peers.append(request.transport.get_extra_info("peername")[1])
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        usage = {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
        for data in (
            chunk({"role": "assistant", "content": "Hi"}),
            {**chunk({}, "stop"), "usage": usage},
        ):
            await response.write(f"data: {json.dumps(data)}\n\n".encode())
        await asyncio.sleep(0.05)
        await response.write(b"data: [DONE]\n\n")
        finished.append(True)
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    base = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/v1"
    try:
        for _ in range(3):
            response = await litellm.acompletion(
                model="openai/local",
                api_base=base,
                api_key="sk-good",
                stream=True,
                messages=[{"role": "user", "content": "hi"}],
            )
            assert not model_stream.read_to_the_end(response, litellm)
            chunks = []
            async for item in response:
                chunks.append(item)
                if model_stream.is_last(response, item):
                    await model_stream.close(response)
                    break
            assert chunks[0].choices[0].delta.content == "Hi"
            assert model_stream.reported_usage(chunks[-1]).total_tokens == 4
    finally:
        await runner.cleanup()
    assert finished == [True, True, True]
    assert len(set(peers)) == 1
