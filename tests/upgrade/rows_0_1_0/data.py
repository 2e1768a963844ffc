"""Knowledge bases and documents, eval suites and their runs, provider keys, spans, and a
thread's signals and inbox, as 0.1.0 stored them."""

from __future__ import annotations

from tests.upgrade.ledger import Ledger, Sealed
from tests.upgrade.rows_0_1_0.times import at


def write_knowledge(ledger: Ledger, *, ada) -> None:
    add = ledger.add
    base = add(
        "knowledge.KnowledgeBase",
        owner=ada,
        slug="travel",
        name="Travel notes",
        description="Guides and bookings.",
        embedding_model="openai/text-embedding-3-small",
        embedding_dim=1536,
        chunk_chars=1200,
        chunk_overlap=150,
    )
    add(
        "knowledge.Document",
        kb=base,
        kind="file",
        title="Lisbon guide",
        filename="lisbon.pdf",
        format="pdf",
        content=b"%PDF-1.7 three days in Lisbon\x00\xff",
        content_hash="d" * 64,
        size=31,
        pages=3,
        status="ready",
        chunk_count=12,
        chunks_done=12,
        chunks_embedded=12,
        attempts=1,
        started_at=at(1),
        finished_at=at(1.5),
    )
    root = add(
        "knowledge.Document",
        kb=base,
        kind="url",
        source_url="https://guide.example.com/",
        format="html",
        status="ready",
        crawl_depth=2,
        crawl_max_pages=10,
    )
    add(
        "knowledge.Document",
        kb=base,
        kind="url",
        source_url="https://guide.example.com/tram",
        status="failed",
        error="The page answered 404.",
        crawl_root=root,
        crawl_depth=1,
        heartbeat_at=at(3),
    )


def write_evals(ledger: Ledger, *, ada, trip, thread) -> None:
    add = ledger.add
    ask = add(
        "evals.TestCase",
        agent=trip,
        owner=ada,
        name="asks for dates",
        description="A trip needs dates.",
        spec={"turns": [{"message": "Plan a trip", "expect": [{"contains": "dates"}]}]},
    )
    budget = add("evals.TestCase", agent=trip, owner=ada, name="keeps to a budget", spec={})
    suite = add("evals.Suite", agent=trip, owner=ada, slug="smoke", name="Smoke", repeat=2)
    ledger.link(suite, "cases", [ask, budget])
    suite_run = add(
        "evals.SuiteRun",
        suite=suite,
        owner=ada,
        status="failed",
        repeat=2,
        snapshot={"version": 2, "model": "anthropic/claude-haiku-4-5"},
        summary={"passed": 1, "failed": 1},
        started_at=at(20),
        finished_at=at(21),
        worker="worker-2:77",
        attempts=1,
        lease_expires_at=at(22),
    )
    add(
        "evals.CaseResult",
        suite_run=suite_run,
        case=ask,
        attempt=1,
        status="passed",
        turns=[{"message": "Plan a trip", "status": "completed", "verdicts": [True]}],
        thread=thread,
        agent_version=2,
        duration_ms=812.5,
        finished_at=at(20.5),
    )
    add(
        "evals.CaseResult",
        suite_run=suite_run,
        case=budget,
        attempt=1,
        status="failed",
        error="The agent ran out of steps.",
    )


def write_providers_and_traces(ledger: Ledger, *, ada, thread, run, tool_run, console_run) -> None:
    add = ledger.add
    add(
        "providers.ProviderCredential",
        owner=ada,
        provider="openai",
        name="my-openai",
        secret_encrypted=Sealed({"api_key": "provider-credential-3456"}),
        key_hint="pro…3456",
    )
    add(
        "providers.ProviderCredential",
        provider="openai_compatible",
        name="local-vllm",
        api_base="http://127.0.0.1:8000/v1",
    )
    add(
        "traces.Span",
        span_id="0123456789abcdef",
        trace_id=run.pk,
        run=run,
        kind="run",
        name="trip-planner",
        start=at(1),
        end=at(3),
        attributes={"model": "anthropic/claude-haiku-4-5", "usage": {"totalTokens": 168}},
        exported_at=at(4),
    )
    add(
        "traces.Span",
        span_id="fedcba9876543210",
        trace_id=run.pk,
        parent_id="0123456789abcdef",
        run=run,
        tool_run=tool_run,
        kind="tool",
        name="order",
        start=at(2),
        end=at(2.2),
        attributes={"input": {"id": 17}},
    )
    add(
        "traces.Span",
        span_id="00000000000000aa",
        trace_id=console_run.pk,
        tool_run=console_run,
        kind="tool",
        name="lookup_order",
        start=at(9),
        status="error",
        error="Input failed validation at $.id.",
    )
    add(
        "agents_core.NotificationRecord",
        thread=thread,
        source="shop",
        kind="order.shipped",
        summary="Order 17 shipped.",
        priority="high",
        payload={"order": 17},
        dedupe_key="order-17-shipped",
        count=2,
        status="delivered",
        action="now",
        delivered_at=at(12),
    )
    add(
        "agents_core.Signal",
        thread=thread,
        run=run,
        type="message",
        tag_name="user-note",
        contents="Prefer trains.",
        attributes={"from": "ada"},
        decision="deliver",
        status="delivered",
        delivered_in_run=run,
        created_by=ada,
        delivered_at=at(2),
    )
