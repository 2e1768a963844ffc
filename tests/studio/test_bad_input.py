"""Every write endpoint of the REST API against a list of bad inputs: each answers a JSON
4xx naming what is wrong (and where, as a JSON path), never a 5xx, and writes nothing.

The endpoints come from the URL confs: a write route missing from ROUTES fails
`test_every_write_route_is_in_the_table`, so a new endpoint cannot go untested here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from agents_core.models import Revision, Run, Thread, ToolCall
from evals.models import Suite, TestCase
from knowledge.models import Document
from knowledge.services.bases import kb_create
from knowledge.store import get_store
from providers.services import credential_create
from tests.agents_core.factories import AgentFactory, AgentToolFactory, SubAgentFactory
from tests.routes import all_routes
from tests.studio.db_state import db_fingerprint
from tests.tools_app.factories import ToolFactory
from tools_app import types
from tools_app.models import ToolSource

pytestmark = pytest.mark.django_db

WRITE_METHODS = ("post", "put", "patch")
SPEC = (
    "openapi: 3.0.0\ninfo: {title: Pets, version: '1'}\n"
    "paths:\n  /pets:\n    get:\n      operationId: listPets\n"
    "      responses: {'200': {description: ok}}\n"
)


@dataclass
class World:
    agent: Any
    thread: Any
    run: Any
    revision: Any
    openapi: Any
    mcp: Any
    kb: Any
    document: Any
    credential: Any
    case: Any = None
    suite: Any = None


@dataclass
class Route:
    url: Callable[[World], str]
    body: dict[str, Any]
    # Typed numeric fields: a number no column holds must be a 4xx, not a database error.
    numbers: list[str] = field(default_factory=list)
    # Top-level fields that carry a whole document as text (no length limit of their own).
    long_fields: tuple[str, ...] = ()


def _agent(tail: str = "") -> Callable[[World], str]:
    return lambda w: f"/api/agents/{w.agent.slug}/{tail}"


def _thread(tail: str = "") -> Callable[[World], str]:
    return lambda w: f"/api/threads/{w.thread.pk}/{tail}"


def _run(tail: str) -> Callable[[World], str]:
    return lambda w: f"/api/runs/{w.run.pk}/{tail}"


def _kb(tail: str = "") -> Callable[[World], str]:
    return lambda w: f"/api/knowledge/{w.kb.slug}/{tail}"


AGENT = {
    "name": "Fresh",
    "description": "Helps.",
    "model": "studio/scripted",
    "instructions": "Be brief.",
    "metadata": {"team": "red"},
    "default_options": {"maxSteps": 3},
    "notification_policy": {"priority": {"low": "now"}},
}
TOOL = {
    "description": "Echoes.",
    "kind": "test_echo",
    "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
    "config": {"prefix": "p"},
    "credentials": {"token": "secret"},
    "model_output": {"pick": ["echo"]},
}
OVERRIDES = {
    "version": 1,
    "name": "Renamed",
    "description": "Helps.",
    "model": "studio/scripted",
    "instructions": "Be brief.",
    "tools": {"bad_tool": "bad_tool"},
    "tool_descriptions": {"bad_tool": "Use it."},
}
PICK = {"key": "GET /pets", "name": "list_pets"}
NOTIFICATION = {
    "source": "ci",
    "kind": "build",
    "summary": "Red.",
    "priority": "low",
    "payload": {"job": "lint"},
    "dedupeKey": "d",
    "coalesceKey": "c",
    "attributes": {"repo": "studio"},
    "metadata": {"by": "test"},
}
CASE = {
    "name": "c",
    "description": "d",
    "spec": {"turns": [{"message": "hi", "expect": [{"type": "answer_contains", "value": "x"}]}]},
}
# A body for endpoints that read none: its field stands for anything a client may send.
NO_BODY: dict[str, Any] = {"note": "ignored"}

ROUTES: dict[tuple[str, str, str], Route] = {
    ("agent-list", "post", ""): Route(lambda w: "/api/agents/", {"slug": "fresh", **AGENT}),
    ("agent-detail", "put", ""): Route(_agent(), {**AGENT, "version": 1}, numbers=["version"]),
    ("agent-detail", "patch", ""): Route(_agent(), {**AGENT, "version": 1}, numbers=["version"]),
    ("agent-import", "post", ""): Route(
        lambda w: "/api/agents/import",
        {
            "document": {
                "format": "agent-studio.agent",
                "version": 1,
                "agent": "imported",
                "agents": [{**AGENT, "slug": "imported", "tools": [], "subagents": []}],
                "tools": [],
            },
            "renames": {"agents": {"imported": "imported-2"}},
            "dry_run": True,
        },
    ),
    ("agent-instructions-preview", "post", ""): Route(
        _agent("instructions-preview"),
        {"instructions": [{"role": "system", "content": "Be brief.", "providerOptions": {}}]},
    ),
    ("agent-duplicate", "post", ""): Route(_agent("duplicate"), {"slug": "copy", "name": "Copy"}),
    ("agent-tool-list", "post", ""): Route(
        _agent("tools/"),
        {"tool": "bad_tool", "key": "other", "description_override": "d", "position": 1},
        numbers=["position"],
    ),
    ("agent-tool-detail", "put", ""): Route(
        _agent("tools/bad_tool/"),
        {"tool": "bad_tool", "key": "bad_tool", "description_override": "d", "position": 1},
        numbers=["position"],
    ),
    ("agent-tool-detail", "patch", ""): Route(
        _agent("tools/bad_tool/"), {"description_override": "d", "position": 1}, ["position"]
    ),
    ("agent-subagent-list", "post", ""): Route(
        _agent("subagents/"),
        {"agent": "bad-other", "key": "other", "description_override": "d", "position": 1},
        numbers=["position"],
    ),
    ("agent-subagent-detail", "put", ""): Route(
        _agent("subagents/kid/"),
        {"agent": "bad-child", "key": "kid", "description_override": "d", "position": 1},
        numbers=["position"],
    ),
    ("agent-subagent-detail", "patch", ""): Route(
        _agent("subagents/kid/"), {"description_override": "d", "position": 1}, ["position"]
    ),
    ("agent-overrides", "put", ""): Route(_agent("overrides/"), OVERRIDES, ["version"]),
    ("agent-overrides", "patch", ""): Route(_agent("overrides/"), OVERRIDES, ["version"]),
    ("agent-overrides-reset", "post", ""): Route(
        _agent("overrides/reset"), {"version": 1, "field": "tool_descriptions", "key": "k"}
    ),
    ("agent-lock", "post", ""): Route(_agent("lock/"), NO_BODY),
    ("agent-lock", "put", ""): Route(_agent("lock/"), NO_BODY),
    ("agent-lock-break", "post", ""): Route(_agent("lock/break"), NO_BODY),
    ("agent-revision-restore", "post", ""): Route(
        lambda w: f"/api/agents/{w.agent.slug}/revisions/{w.revision.pk}/restore",
        {"version": 1},
        numbers=["version"],
    ),
    ("agent-notification-policy", "put", ""): Route(
        _agent("notification-policy"), {"policy": {"priority": {"low": "now"}}}
    ),
    ("thread-list", "post", ""): Route(
        lambda w: "/api/threads/", {"agent": "bad-agent", "title": "t"}
    ),
    ("thread-detail", "patch", ""): Route(_thread(), {"title": "t"}),
    ("thread-runs", "post", ""): Route(
        _thread("runs/"), {"message": "hi", "options": {"maxSteps": 1}}
    ),
    ("thread-send-message", "post", ""): Route(
        _thread("send-message"),
        {"message": "hi", "ifIdle": "persist", "attributes": {"a": "b"}, "streamOptions": {}},
    ),
    ("thread-queue-message", "post", ""): Route(
        _thread("queue-message"), {"message": "hi", "attributes": {"a": "b"}}
    ),
    ("thread-signals", "post", ""): Route(
        _thread("signals/"),
        {
            "type": "user",
            "tagName": "note",
            "contents": "c",
            "attributes": {"a": "b"},
            "metadata": {"m": "n"},
        },
    ),
    ("thread-state-signals", "post", ""): Route(
        _thread("state-signals/"),
        {"id": "cart", "cacheKey": "k", "value": {"items": "x"}, "attributes": {"a": "b"}},
    ),
    ("thread-notifications", "post", ""): Route(_thread("notifications/"), NOTIFICATION),
    ("thread-notifications-digest", "post", ""): Route(_thread("notifications/digest"), NO_BODY),
    ("thread-abort", "post", ""): Route(_thread("abort"), NO_BODY),
    ("run-resume", "post", ""): Route(
        _run("resume"), {"toolCallId": "call_1", "payload": {"answer": "yes"}}
    ),
    ("run-abort", "post", ""): Route(_run("abort"), NO_BODY),
    ("run-client-tool-result", "post", ""): Route(
        _run("client-tool-result"), {"toolCallId": "call_1", "output": {"o": "x"}}
    ),
    ("tool-list", "post", ""): Route(
        lambda w: "/api/tools/",
        {"name": "fresh_tool", **TOOL, "timeout_seconds": 5},
        numbers=["timeout_seconds"],
    ),
    ("tool-detail", "put", ""): Route(
        lambda w: "/api/tools/bad_tool/", {**TOOL, "timeout_seconds": 5}, ["timeout_seconds"]
    ),
    ("tool-detail", "patch", ""): Route(
        lambda w: "/api/tools/bad_tool/", {**TOOL, "timeout_seconds": 5}, ["timeout_seconds"]
    ),
    ("tool-execute", "post", "sync"): Route(
        lambda w: "/api/tools/bad_tool/execute?mode=sync", {"input": {"text": "x"}}
    ),
    ("tool-execute", "post", "async"): Route(
        lambda w: "/api/tools/bad_tool/execute?mode=async", {"input": {"text": "x"}}
    ),
    ("tool-execute", "post", "text"): Route(
        lambda w: "/api/tools/bad_tool/execute", {"input_text": '{"text": "x"}'}
    ),
    ("openapi-preview", "post", ""): Route(
        lambda w: "/api/sources/openapi/preview", {"text": SPEC}, long_fields=("text",)
    ),
    ("openapi-import", "post", ""): Route(
        lambda w: "/api/sources/openapi/import",
        {
            "text": SPEC,
            "picks": [PICK],
            "base_url": "http://127.0.0.1:9",
            "credentials": {"api_key": "k"},
        },
        long_fields=("text",),
    ),
    ("openapi-diff", "post", ""): Route(
        lambda w: f"/api/sources/{w.openapi.pk}/openapi/diff", {"text": SPEC}, long_fields=("text",)
    ),
    ("openapi-reimport", "post", ""): Route(
        lambda w: f"/api/sources/{w.openapi.pk}/openapi/reimport",
        {"text": SPEC, "add": [PICK]},
        long_fields=("text",),
    ),
    ("mcp-register", "post", ""): Route(
        lambda w: "/api/sources/mcp/",
        {
            "url": "http://127.0.0.1:9/mcp",
            "headers": {"X-Token": "t"},
            "name": "m",
            "oauth": {"client_id": "c", "client_secret": "s"},
        },
    ),
    ("connector-add", "post", ""): Route(
        lambda w: "/api/connectors/jira/add",
        {
            "instance_url": "https://example.atlassian.net",
            "auth": "api_token",
            "credentials": {"username": "me@example.com", "password": "token"},
            "picks": [{"key": "GET /rest/api/3/search/jql"}],
        },
    ),
    ("web-search", "put", ""): Route(
        lambda w: "/api/settings/web-search/", {"provider": "brave", "api_key": "BSA-key-123456"}
    ),
    ("web-search-test", "post", ""): Route(
        lambda w: "/api/settings/web-search/test", {"query": "weather"}
    ),
    ("mcp-refresh", "post", ""): Route(lambda w: f"/api/sources/{w.mcp.pk}/mcp/refresh", NO_BODY),
    ("mcp-pick", "post", ""): Route(
        lambda w: f"/api/sources/{w.mcp.pk}/mcp/pick",
        {"picks": [{"remote_name": "echo", "name": "mcp_echo"}]},
    ),
    ("knowledge-list", "post", ""): Route(
        lambda w: "/api/knowledge/",
        {"name": "Docs", "slug": "docs-new", "description": "d", "embedding_model": ""},
    ),
    ("knowledge-detail", "patch", ""): Route(_kb(), {"name": "Docs", "description": "d"}),
    ("knowledge-document-list", "post", ""): Route(
        _kb("documents/"), {"text": "Hello there.", "title": "Greeting"}, long_fields=("text",)
    ),
    ("knowledge-document-reindex", "post", ""): Route(
        lambda w: f"/api/knowledge/{w.kb.slug}/documents/{w.document.pk}/reindex", NO_BODY
    ),
    ("knowledge-search", "post", ""): Route(
        _kb("search"),
        {"query": "hello", "k": 3, "mode": "fts", "filters": {"kinds": ["text"]}},
        numbers=["k"],
    ),
    ("knowledge-cancel", "post", ""): Route(_kb("cancel"), NO_BODY),
    ("knowledge-tool", "post", ""): Route(
        _kb("tool"), {"name": "kb_search", "description": "Searches.", "k": 3}, numbers=["k"]
    ),
    ("evals-case-list", "post", ""): Route(_agent("tests/"), CASE),
    ("evals-case-detail", "put", ""): Route(
        lambda w: f"/api/agents/bad-agent/tests/{w.case.pk}/", CASE
    ),
    ("evals-case-detail", "patch", ""): Route(
        lambda w: f"/api/agents/bad-agent/tests/{w.case.pk}/", CASE
    ),
    ("evals-case-import", "post", ""): Route(
        _agent("tests/import"), {"version": 1, "cases": [CASE]}, numbers=["version"]
    ),
    ("evals-suite-list", "post", ""): Route(
        lambda w: "/api/suites/",
        {"agent": "bad-agent", "name": "S", "slug": "s-new", "cases": [1], "repeat": 1},
        numbers=["repeat"],
    ),
    ("evals-suite-detail", "patch", ""): Route(
        lambda w: "/api/suites/bad-suite/", {"name": "S", "repeat": 1}, numbers=["repeat"]
    ),
    ("evals-suite-runs", "post", ""): Route(
        lambda w: "/api/suites/bad-suite/runs/", {"repeat": 1}, numbers=["repeat"]
    ),
    ("url-check", "post", ""): Route(lambda w: "/api/url-check", {"url": "https://example.com/"}),
    ("a2a-add", "post", ""): Route(
        lambda w: "/api/sources/a2a/",
        {
            "card_url": "http://127.0.0.1:9/card",
            "name": "helper",
            "headers": {"X-Token": "t"},
            "timeout_seconds": 5,
        },
        numbers=["timeout_seconds"],
    ),
    ("provider-list", "post", ""): Route(
        lambda w: "/api/providers/",
        {"provider": "openai", "name": "team-openai", "api_key": "sk-abc", "api_base": ""},
    ),
    ("provider-detail", "patch", ""): Route(
        lambda w: f"/api/providers/{w.credential.pk}/", {"name": "renamed", "api_key": "sk-x"}
    ),
    ("provider-test", "post", ""): Route(
        lambda w: f"/api/providers/{w.credential.pk}/test", {"model": "gpt-4o-mini"}
    ),
}


# --- the bad inputs -------------------------------------------------------------------------
@dataclass
class Bad:
    body: bytes
    content_type: str = "application/json"
    status: int | None = 400  # None: any 4xx
    code: str | None = None
    path: str | None = None


def _text(value: Any) -> bytes:
    return json.dumps(value).encode()


def _with(body: dict[str, Any], raw_member: str) -> bytes:
    """`body` with one more member written as raw JSON text (`"n": 1e999`)."""
    text = json.dumps(body)
    return (text[:-1] + (", " if body else "") + raw_member + "}").encode()


def _leaves(value: Any, parts: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*parts, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*parts, index))
    else:
        yield parts, value


def _replaced(value: Any, parts: tuple, new: Any) -> Any:
    if not parts:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[parts[0]] = _replaced(value[parts[0]], parts[1:], new)
    return copy


def _path(parts: tuple) -> str:
    from common.json_input import json_path

    return json_path(parts)


def bad_inputs(route: Route) -> dict[str, Callable[[], Bad]]:
    """label -> the bad input (built when a test asks for it: some are megabytes)."""
    deep = 100_000
    body = route.body
    form = "application/x-www-form-urlencoded"
    cases: dict[str, Callable[[], Bad]] = {
        "deep-arrays": lambda: Bad(
            _with(body, '"deep": ' + "[" * deep + "]" * deep), code="too_deep"
        ),
        "deep-objects": lambda: Bad(
            _with(body, '"deep": ' + '{"a": ' * deep + "1" + "}" * deep), code="too_deep"
        ),
        "invalid-json": lambda: Bad(b'{"name": }', code="invalid_json", path="$"),
        "array": lambda: Bad(b"[1, 2]", code="not_an_object", path="$"),
        "string": lambda: Bad(b'"text"', code="not_an_object", path="$"),
        "null": lambda: Bad(b"null", code="not_an_object", path="$"),
        "text-plain": lambda: Bad(_text(body), content_type="text/plain", status=415),
        "invalid-utf8": lambda: Bad(b'{"name": "\xff\xfe"}', code="invalid_encoding", path="$"),
        "number-1e999": lambda: Bad(
            _with(body, '"n": 1e999'), code="number_out_of_range", path="$.n"
        ),
        "number-400-digits": lambda: Bad(
            _with(body, '"n": -1' + "0" * 400), code="number_out_of_range", path="$.n"
        ),
        "number-nan": lambda: Bad(_with(body, '"n": NaN'), code="invalid_json", path="$"),
        "nul-in-key": lambda: Bad(
            _text({**body, "k\x00": 1}), code="nul_character", path='$["k\\u0000"]'
        ),
        "body-10mb": lambda: Bad(
            _text({**body, "pad": "x" * 10_500_000}), status=413, code="body_too_large"
        ),
        # The source views also take forms and uploads: there a form without a spec is a 400.
        "form": lambda: Bad(b"a=b", content_type=form, status=None if route.long_fields else 415),
    }
    for parts, value in _leaves(body):
        if isinstance(value, str):
            cases.update(_string_cases(route, parts))
    for name in route.numbers:
        for label, number in (("huge", 10**30), ("negative", -(10**30)), ("big-float", 1e300)):
            cases[f"{label}-{name}"] = lambda name=name, number=number: Bad(
                _text({**body, name: number}), status=None
            )
    if "input_schema" in body:
        cases["deep-schema"] = lambda: _deep_schema(body)
    return cases


def _string_cases(route: Route, parts: tuple) -> dict[str, Callable[[], Bad]]:
    body, where = route.body, _path(parts)

    def long() -> Bad:
        text = _text(_replaced(body, parts, "x" * 1_000_001))
        if parts[0] in route.long_fields:
            return Bad(text, status=None)  # no length limit: the document itself is bad
        return Bad(text, code="string_too_long", path=where)

    return {
        f"nul{where}": lambda: Bad(
            _text(_replaced(body, parts, "a\x00b")), code="nul_character", path=where
        ),
        f"1mb{where}": long,
    }


def _deep_schema(body: dict[str, Any]) -> Bad:
    """An input schema nested 5,000 deep: refused before jsonschema recurses into it."""
    nested = '{"type": "object", "properties": {"a": ' * 5_000 + '{"type": "string"}'
    rest = {k: v for k, v in body.items() if k != "input_schema"}
    return Bad(_with(rest, '"input_schema": ' + nested + "}}" * 5_000), code="too_deep")


CASES = [
    pytest.param(key, label, id=f"{key[0]}-{key[1]}{'-' + key[2] if key[2] else ''}-{label}")
    for key, route in ROUTES.items()
    for label in bad_inputs(route)
]


# --- the world every case runs in ------------------------------------------------------------
@pytest.fixture
def echo_type() -> Iterator[None]:
    before = dict(types.TYPE_MODULES)
    types.register("test_echo", "tests.tools_app.echo_type")
    yield
    types.TYPE_MODULES.clear()
    types.TYPE_MODULES.update(before)
    types.get_type.cache_clear()


@pytest.fixture
def world(owner, echo_type) -> Iterator[World]:
    agent = AgentFactory(slug="bad-agent", owner=owner)
    child = AgentFactory(slug="bad-child", owner=owner)
    AgentFactory(slug="bad-other", owner=owner)
    tool = ToolFactory(name="bad_tool", owner=owner)
    AgentToolFactory(agent=agent, tool=tool, key="bad_tool")
    SubAgentFactory(parent=agent, child=child, key="kid")
    revision = Revision.objects.create(
        agent=agent, version=1, author=owner, fields=["name"], before={}, after={}
    )
    thread = Thread.objects.create(agent=agent, owner=owner, resource_id=str(owner.pk))
    run = Run.objects.create(thread=thread, agent=agent, status="suspended")
    ToolCall.objects.create(
        run=run,
        call_id="call_1",
        tool_name="bad_tool",
        tool=tool,
        status="suspended",
        suspend_payload={"kind": "ask-user", "question": "?"},
    )
    openapi = ToolSource.objects.create(kind="openapi", name="pets", owner=owner)
    mcp = ToolSource.objects.create(
        kind="mcp",
        name="m",
        owner=owner,
        url="http://127.0.0.1:9/mcp",
        document={"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]},
    )
    kb = kb_create(owner=owner, name="Bad docs", slug="bad-docs", embedding_model="")
    document = Document.objects.create(kb=kb, kind="text", title="t", status="ready")
    credential = credential_create(owner=owner, provider="openai", api_key="sk-stored")
    case = TestCase.objects.create(agent=agent, owner=owner, name="bad-case", spec=CASE["spec"])
    suite = Suite.objects.create(agent=agent, owner=owner, slug="bad-suite", name="Bad")
    suite.cases.set([case])
    yield World(agent, thread, run, revision, openapi, mcp, kb, document, credential, case, suite)
    get_store().drop(table=kb.table_name)


def _write_routes() -> set[tuple[str, str]]:
    routes = set()
    for route, pattern in all_routes():
        view = getattr(pattern.callback, "cls", None)
        if route.startswith("api/") and view is not None:
            routes |= {(pattern.name, m) for m in WRITE_METHODS if hasattr(view, m)}
    return routes


def test_every_write_route_is_in_the_table():
    covered = {(name, method) for name, method, _ in ROUTES}
    assert _write_routes() - covered == set(), "write routes without bad-input cases"
    assert covered - _write_routes() == set(), "cases for routes that do not exist"


@pytest.mark.parametrize("key,label", CASES)
def test_bad_input_is_a_json_4xx_and_writes_nothing(api, world, key, label):
    route = ROUTES[key]
    bad = bad_inputs(route)[label]()
    before = db_fingerprint()

    response = api.generic(
        key[1].upper(), route.url(world), data=bad.body, content_type=bad.content_type
    )

    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    if bad.status is not None:
        assert response.status_code == bad.status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert isinstance(body, dict) and body, body
    messages = [body["detail"]] if "detail" in body else list(body.values())
    assert all(messages), body
    if bad.code is not None:
        assert body["code"] == bad.code, body
        error = body["errors"][0]
        assert error["message"]
        if bad.path is not None:
            assert error["path"] == bad.path, body
    assert db_fingerprint() == before


# --- strings longer than their column --------------------------------------------------------
LONGER_THAN_COLUMN = [
    (("agent-list", "post", ""), "name", 201),
    (("agent-detail", "patch", ""), "model", 201),
    (("agent-overrides", "put", ""), "name", 201),
    (("agent-overrides", "put", ""), "model", 201),
    (("agent-tool-list", "post", ""), "key", 65),
    (("agent-subagent-list", "post", ""), "key", 59),
    (("thread-list", "post", ""), "title", 201),
    (("thread-detail", "patch", ""), "title", 201),
    (("thread-signals", "post", ""), "tagName", 65),
    (("thread-signals", "post", ""), "type", 17),
    (("thread-state-signals", "post", ""), "id", 201),
    (("thread-state-signals", "post", ""), "cacheKey", 201),
    (("thread-notifications", "post", ""), "source", 101),
    (("thread-notifications", "post", ""), "kind", 101),
    (("thread-notifications", "post", ""), "dedupeKey", 201),
    (("tool-list", "post", ""), "name", 65),
    (("mcp-register", "post", ""), "name", 201),
    (("provider-list", "post", ""), "name", 65),
    (("provider-detail", "patch", ""), "name", 65),
    (("provider-test", "post", ""), "model", 201),
    (("evals-case-list", "post", ""), "name", 201),
    (("evals-suite-list", "post", ""), "name", 201),
]


@pytest.mark.parametrize(
    "key,name,length",
    [pytest.param(k, n, length, id=f"{k[0]}-{k[1]}-{n}") for k, n, length in LONGER_THAN_COLUMN],
)
def test_a_string_longer_than_its_column_is_a_400_naming_the_field(api, world, key, name, length):
    route = ROUTES[key]
    before = db_fingerprint()

    # A model string is provider/model: the longest one that still reads as one.
    value = "openai/" + "m" * (length - 7) if name == "model" else "a" * length
    response = api.generic(
        key[1].upper(),
        route.url(world),
        data=_text({**route.body, name: value}),
        content_type="application/json",
    )

    assert response.status_code == 400, response.content[:300]
    body = response.json()
    # The field's own errors, or a message about it (the signal services word theirs).
    assert body.get(name) or body.get("detail"), body
    assert db_fingerprint() == before
