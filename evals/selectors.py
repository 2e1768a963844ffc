"""Reads of evals: a user's own cases, suites and suite runs (None for anyone else's),
and the JSON shapes the API, the websocket and the CLI share."""

from __future__ import annotations

import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import QuerySet

from evals.models import CaseResult, Suite, SuiteRun, TestCase


def case_list(*, user: Any, agent: Any) -> QuerySet[TestCase]:
    return TestCase.objects.filter(owner=user, agent=agent)


def case_get(*, user: Any, agent: Any, case_id: Any) -> TestCase | None:
    return case_list(user=user, agent=agent).filter(pk=case_id).first()


def suite_list(*, user: Any) -> QuerySet[Suite]:
    return Suite.objects.filter(owner=user).select_related("agent").prefetch_related("cases")


def suite_get(*, user: Any, slug: str) -> Suite | None:
    return suite_list(user=user).filter(slug=slug).first()


def suite_run_list(*, user: Any) -> QuerySet[SuiteRun]:
    return SuiteRun.objects.filter(owner=user).select_related("suite")


def suite_run_get(*, user: Any, suite_run_id: Any) -> SuiteRun | None:
    try:
        suite_run_id = int(suite_run_id)
    except (TypeError, ValueError):
        return None
    return SuiteRun.objects.filter(owner=user, pk=suite_run_id).select_related("suite").first()


def jsonable(value: Any) -> Any:
    """Dates as ISO text: what a channel layer and a websocket frame can carry."""
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def suite_run_info(suite_run: SuiteRun) -> dict[str, Any]:
    return {
        "id": suite_run.pk,
        "suite": suite_run.suite.slug,
        "status": suite_run.status,
        "repeat": suite_run.repeat,
        "snapshot": suite_run.snapshot,
        "summary": suite_run.summary,
        "createdAt": suite_run.created_at,
        "startedAt": suite_run.started_at,
        "finishedAt": suite_run.finished_at,
    }


def result_info(result: CaseResult) -> dict[str, Any]:
    return {
        "id": result.pk,
        "case": result.case_id,
        "caseName": result.case.name,
        "attempt": result.attempt,
        "status": result.status,
        "threadId": str(result.thread_id) if result.thread_id else None,
        "chatUrl": f"/chat/t/{result.thread_id}/" if result.thread_id else None,
        "agentVersion": result.agent_version,
        "durationMs": round(result.duration_ms, 1),
        "error": result.error,
        "turns": result.turns,
    }


def suite_run_results(*, suite_run: SuiteRun) -> list[dict[str, Any]]:
    return [result_info(r) for r in suite_run.results.select_related("case")]
