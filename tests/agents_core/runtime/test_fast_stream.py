"""The fast path of the model stream (providers/fast_stream.py): the same script of
a local OpenAI- or Anthropic-protocol server on 127.0.0.1 run through the loop twice, once
reading litellm's stream wrapper and once the provider's response under it, gives the same
events, usage, errors and requests."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.db import database_sync_to_async

from tests.agents_core.runtime.conftest import run_to_end
from tests.model_servers import Reply

pytestmark = pytest.mark.django_db(transaction=True)

ARGUMENTS = '{"city": "Paris", "units": "metric"}'
# Event fields that differ from one run to the next whatever the path.
VARYING = {"runId", "seq", "ts", "createdAt", "messageId", "durationMs", "threadId", "id"}
MODELS = {"openai": "openai/gpt-4o-mini", "anthropic": "anthropic/claude-haiku-4-5"}
KEYS = {"openai": "sk-good", "anthropic": "ant-good"}


@pytest.fixture
def server(request, openai_server, anthropic_server):
    return {"openai": openai_server, "anthropic": anthropic_server}[request.param]


@pytest.fixture(autouse=True)
def no_retries(settings):
    settings.STUDIO_MODEL_RETRIES = 0


@database_sync_to_async
def _thread(owner: Any, provider: str, url: str, default_options: dict | None = None) -> Any:
    from agents_core.models import Agent, AgentTool
    from agents_core.services.threads import thread_create
    from providers.models import ProviderCredential
    from providers.services import credential_create
    from tools_app.models import Tool

    if not ProviderCredential.objects.filter(owner=owner, provider=provider).exists():
        credential_create(owner=owner, provider=provider, api_key=KEYS[provider], api_base=url)
    agent, _ = Agent.objects.get_or_create(
        slug=f"fast-{provider}",
        defaults={
            "name": "Fast",
            "model": MODELS[provider],
            "owner": owner,
            "default_options": default_options or {},
        },
    )
    AgentTool.objects.get_or_create(
        agent=agent, tool=Tool.objects.get(name="weather_lookup"), key="weather_lookup"
    )
    return thread_create(user=owner, agent=agent)


# The text a delta event carries, by type: the run's sink joins the deltas that reach it in
# one pass of its event loop, so how a stream splits into events depends on timing.
DELTA_TEXT = {"text-delta": "textDelta", "tool-input-delta": "argsTextDelta"}


def _comparable(events: list[dict]) -> list[dict]:
    """The events without what varies between runs, consecutive deltas of one thing joined
    (their text; a tool input's patches are left out, its end value is the `tool-call`)."""
    out: list[dict] = []
    for event in events:
        item = {k: v for k, v in event.items() if k not in VARYING and k != "patches"}
        field = DELTA_TEXT.get(item["type"])
        last = out[-1] if out else None
        same = last is not None and field in last and last["type"] == item["type"]
        if same and all(last.get(k) == v for k, v in item.items() if k != field):
            last[field] += item[field]
        else:
            out.append(item)
    return out


class Paths:
    """Runs a script through the loop on litellm's wrapper or on the fast path; records which
    reader each model call of the run got."""

    def __init__(self, monkeypatch: Any) -> None:
        from providers import fast_stream

        self.monkeypatch = monkeypatch
        self.module = fast_stream
        self.original = fast_stream.reader
        self.readers: list[str] = []

    def use(self, fast: bool) -> None:
        def reader(response: Any, litellm: Any, messages: list[Any]) -> Any:
            chosen = self.original(response, litellm, messages) if fast else response
            self.readers.append(type(chosen).__name__)
            return chosen

        self.readers = []
        self.monkeypatch.setattr(self.module, "reader", reader)

    async def run(
        self, fast: bool, server: Any, script: list[Reply], thread: Any, owner: Any, **kw: Any
    ) -> tuple[Any, list[dict], list[dict], list[str]]:
        self.use(fast)
        server.script = list(script)
        server.requests.clear()
        run, events = await run_to_end(thread, "weather in Paris?", owner, **kw)
        return run, events, [r.body for r in server.requests], self.readers


@pytest.fixture
def paths(monkeypatch):
    return Paths(monkeypatch)


TOOL_SCRIPT = [Reply(text="Looking it up.", tool=("weather_lookup", ARGUMENTS)), Reply("Rain.")]


@pytest.mark.parametrize("server", ["openai", "anthropic"], indirect=True)
async def test_text_and_tool_calls_give_the_same_events_and_usage(
    synced, owner, server, paths, request
):
    provider = request.node.callspec.params["server"]
    thread = await _thread(owner, provider, server.url)
    slow_run, slow, slow_bodies, slow_readers = await paths.run(
        False, server, TOOL_SCRIPT, thread, owner
    )
    thread = await _thread(owner, provider, server.url)
    fast_run, fast, fast_bodies, fast_readers = await paths.run(
        True, server, TOOL_SCRIPT, thread, owner
    )

    assert slow_readers == ["CustomStreamWrapper"] * 2
    assert fast_readers == ["FastStream"] * 2
    assert fast_run.status == slow_run.status == "completed", fast_run.error
    assert _comparable(fast) == _comparable(slow)
    deltas = [e["argsTextDelta"] for e in fast if e["type"] == "tool-input-delta"]
    assert "".join(deltas) == ARGUMENTS
    call = next(e for e in fast if e["type"] == "tool-call")
    assert call["input"] == json.loads(ARGUMENTS) and call["toolName"] == "weather_lookup"
    assert fast[-1]["text"].strip() == "Rain."
    # The usage each call's server reported, counted once per call, on both paths.
    assert fast_run.usage == slow_run.usage
    assert fast_run.usage["prompt_tokens"] == 10 and fast_run.usage["completion_tokens"] == 4
    assert fast_bodies == slow_bodies


BROKEN = {
    "openai": {
        "malformed": 'data: {"choices": [{"delta": {"content": "lo"\n\n',
        "error event": 'data: {"error": {"message": "The server overloaded", "type": "x"}}\n\n',
        "dropped": "",
    },
    "anthropic": {
        "malformed": 'event: content_block_delta\ndata: {"type": "content_block_delta", "in\n\n',
        "error event": (
            'event: error\ndata: {"type": "error", "error": '
            '{"type": "overloaded_error", "message": "Overloaded"}}\n\n'
        ),
        "dropped": "",
    },
}


@pytest.mark.parametrize("server", ["openai", "anthropic"], indirect=True)
@pytest.mark.parametrize("failure", ["malformed", "error event", "dropped", 401, 429, 500])
async def test_errors_end_the_run_with_the_same_code_and_message(
    synced, owner, server, paths, request, failure
):
    provider = request.node.callspec.params["server"]
    if isinstance(failure, int):
        script = [Reply(status=failure, error=f"Failure {failure}")]
        if failure == 401:
            server.key = "another"
    else:
        script = [Reply(text="Hello there", broken=BROKEN[provider][failure])]
    ends = []
    for fast in (False, True):
        thread = await _thread(owner, provider, server.url)
        run, events, _, readers = await paths.run(fast, server, script, thread, owner)
        assert run.status == "failed" and events[-1]["type"] == "run-error"
        ends.append((events[-1]["code"], events[-1]["error"], run.error, readers))
    (slow_code, slow_error, slow_run_error, _), (code, error, run_error, readers) = ends
    assert (code, error, run_error) == (slow_code, slow_error, slow_run_error)
    # Refusals come before any chunk: litellm raised them, no stream was read.
    assert readers == ([] if isinstance(failure, int) else ["FastStream"])
    expected = {401: "auth", 429: "rate_limited", 500: "provider_error"}
    if isinstance(failure, int):
        assert code == expected[failure]


async def test_a_refused_connection_is_unreachable_on_both_paths(synced, owner, settings, paths):
    settings.STUDIO_MODEL_API_BASES = ["http://127.0.0.1:9"]
    ends = []
    for fast in (False, True):
        paths.use(fast)
        thread = await _thread(owner, "openai", "http://127.0.0.1:9/v1")
        run, events = await run_to_end(thread, "hello", owner)
        ends.append((run.status, events[-1]["code"], events[-1]["error"]))
    assert ends[0] == ends[1] and ends[1][0] == "failed"
    assert ends[1][1] in ("unreachable", "unavailable", "provider_error")


async def test_a_fallback_answers_on_the_fast_path(
    synced, owner, openai_server, anthropic_server, paths
):
    from providers.services import credential_create

    paths.use(True)
    openai_server.script = [Reply(status=429)]
    anthropic_server.script = [Reply(text="From Claude.")]
    await database_sync_to_async(credential_create)(
        owner=owner, provider="anthropic", api_key="ant-good", api_base=anthropic_server.url
    )
    thread = await _thread(
        owner,
        "openai",
        openai_server.url,
        default_options={"fallbacks": ["anthropic/claude-haiku-4-5"]},
    )

    run, events = await run_to_end(thread, "hello", owner)

    assert run.status == "completed", run.error
    assert run.model == "anthropic/claude-haiku-4-5" and paths.readers == ["FastStream"]
    assert events[-1]["text"].strip() == "From Claude."


OPTIONS = {
    "openai": {
        "temperature": 0.3,
        "modelSettings": {"maxTokens": 50, "seed": 7},
        "toolChoice": "required",
        "providerOptions": {"openai": {"parallelToolCalls": False, "user": "u-1"}},
    },
    "anthropic": {
        "modelSettings": {"maxTokens": 2048, "topP": 0.5},
        "toolChoice": {"type": "tool", "toolName": "weather_lookup"},
        "providerOptions": {"anthropic": {"thinking": {"type": "enabled", "budgetTokens": 1024}}},
    },
}
EXPECTED = {
    "openai": {
        "temperature": 0.3,
        "max_tokens": 50,
        "seed": 7,
        "tool_choice": "required",
        "parallel_tool_calls": False,
        "user": "u-1",
    },
    "anthropic": {
        "max_tokens": 2048,
        "top_p": 0.5,
        "tool_choice": {"type": "tool", "name": "weather_lookup"},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    },
}


@pytest.mark.parametrize("server", ["openai", "anthropic"], indirect=True)
async def test_options_reach_the_request_as_litellm_maps_them(
    synced, owner, server, paths, request
):
    provider = request.node.callspec.params["server"]
    bodies = []
    for fast in (False, True):
        thread = await _thread(owner, provider, server.url)
        run, _, sent, readers = await paths.run(
            fast, server, [Reply("Fine.")], thread, owner, options=OPTIONS[provider]
        )
        assert run.status == "completed", run.error
        bodies.append(sent)
    assert readers == ["FastStream"]
    assert bodies[0] == bodies[1]
    [body] = bodies[1]
    assert {key: body.get(key) for key in EXPECTED[provider]} == EXPECTED[provider]


async def test_litellm_callbacks_keep_litellms_wrapper(openai_server, monkeypatch):
    """A configured callback reads litellm's assembled response: no fast path then."""
    import litellm

    from providers import fast_stream

    kwargs = {
        "model": "openai/m",
        "api_base": openai_server.url,
        "api_key": "sk-good",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    response = await litellm.acompletion(**kwargs)
    assert type(fast_stream.reader(response, litellm, kwargs["messages"])).__name__ == "FastStream"
    await response.aclose()
    # litellm copies a callback into its other lists on the next call: all are restored.
    for name in ("success_callback", "_async_success_callback", "failure_callback"):
        monkeypatch.setattr(litellm, name, list(getattr(litellm, name)))
    monkeypatch.setattr(litellm, "_async_failure_callback", list(litellm._async_failure_callback))
    monkeypatch.setattr(litellm, "callbacks", [lambda *a, **k: None])
    response = await litellm.acompletion(**kwargs)
    assert fast_stream.reader(response, litellm, kwargs["messages"]) is response
    await response.aclose()


async def test_consecutive_fast_streams_reuse_one_connection():
    """The fast path reads what follows the provider's end marker, so the connection goes
    back to litellm's pool: every call of a run reuses one."""
    import litellm

    from providers import fast_stream
    from tests.model_servers import OpenAIServer, start

    peers: list[int] = []

    class Recording(OpenAIServer):
        async def handle(self, request: Any) -> Any:
            peers.append(request.transport.get_extra_info("peername")[1])
            return await super().handle(request)

    server = Recording(script=[Reply(linger=0.05)])  # [DONE], then the body's end a bit later
    runner = await start(server)
    messages = [{"role": "user", "content": "hi"}]
    kwargs = {"model": "openai/local", "api_base": server.url, "api_key": "sk-good"}
    try:
        for _ in range(3):
            response = await litellm.acompletion(
                **kwargs, messages=messages, stream=True, stream_options={"include_usage": True}
            )
            stream = fast_stream.reader(response, litellm, messages)
            chunks = [chunk async for chunk in stream]
            assert chunks[0].choices[0].delta.content == "OK"
            assert chunks[-1].usage.total_tokens == 7
            await asyncio.sleep(0)
    finally:
        await runner.cleanup()
    assert len(peers) == 3 and len(set(peers)) == 1


async def test_a_base_taken_off_the_operators_list_is_refused_before_any_request(
    synced, owner, openai_server, settings, paths
):
    paths.use(True)
    thread = await _thread(owner, "openai", openai_server.url)  # saved while listed
    settings.STUDIO_MODEL_API_BASES = []

    run, events = await run_to_end(thread, "hello", owner)

    assert run.status == "failed" and events[-1]["code"] == "model_base_refused"
    assert openai_server.requests == [] and paths.readers == []
