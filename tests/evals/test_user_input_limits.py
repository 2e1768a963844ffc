"""What a test case's author writes cannot stall a worker or reach a model server the
operator did not allow: answer patterns are matched with RE2 (common/patterns.py), and
judge models and the case's run options pass the gate of every model call
(providers/gate.py), at save (a 400 with the JSON path) and when the suite plays.

`ollama/...` models have no endpoint of their own: litellm sends them to OLLAMA_API_BASE,
here the `ollama_canary` server on 127.0.0.1, which must never see a connection.
"""

from __future__ import annotations

import pytest

from agents_core.models import Agent
from evals.models import CaseResult, Suite, TestCase
from evals.services.cases import case_create
from evals.services.suite_runs import suite_run_execute, suite_run_start
from tests.evals.conftest import wait_finished

pytestmark = pytest.mark.django_db(transaction=True)

MESSAGE = "a" * 60  # the offline model quotes it: "... You said: 'aaa...a'. ..."


def spec_with(*expect: dict, **extra) -> dict:
    return {"turns": [{"message": MESSAGE, "expect": list(expect)}], **extra}


def post_case(api, spec: dict):
    return api.post("/api/agents/travel-desk/tests/", {"name": "x", "spec": spec}, format="json")


def suite_of(owner, *cases: TestCase) -> Suite:
    suite = Suite.objects.create(agent=cases[0].agent, owner=owner, slug="limits", name="Limits")
    suite.cases.set(cases)
    return suite


def verdicts(result: CaseResult) -> list[dict]:
    return [verdict for turn in result.turns for verdict in turn["verdicts"]]


# --- answer patterns ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pattern", "why"),
    [(r"(a)\1", "invalid escape sequence"), ("(?=a)a", "invalid perl operator")],
)
def test_a_pattern_with_a_backreference_or_lookaround_is_refused_at_save(api, synced, pattern, why):
    response = post_case(api, spec_with({"type": "answer_regex", "pattern": pattern}))

    assert response.status_code == 400, response.json()
    (error,) = response.json()["errors"]
    assert error["path"] == "$.spec.turns[0].expect[0].pattern"
    assert why in error["message"] and "RE2" in error["message"]
    assert not TestCase.objects.exists()


def test_a_json_schema_pattern_re2_cannot_match_is_refused_at_save(api, synced):
    schema = {"type": "object", "properties": {"city": {"type": "string", "pattern": "(?<!x)P"}}}
    expect = {"type": "tool_called", "tool": "weather_lookup", "argsSchema": schema}

    response = post_case(api, spec_with(expect))

    assert response.status_code == 400, response.json()
    (error,) = response.json()["errors"]
    assert error["path"] == "$.spec.turns[0].expect[0].argsSchema.properties.city.pattern"
    assert "RE2" in error["message"]
    assert not TestCase.objects.exists()


def test_a_pattern_that_backtracks_for_ever_in_re_is_matched_at_once_in_a_celery_worker(
    owner, synced, celery_worker
):
    """`(a+)+$` at the end of a run of 60 a's takes Python's re about 2**60 steps; RE2 reads
    the answer once. Both expectations get their right verdict."""
    agent = Agent.objects.get(slug="travel-desk")
    spec = spec_with(
        {"type": "answer_regex", "pattern": "(a+)+$"},
        {"type": "answer_regex", "pattern": "(a+)+'"},
    )
    case = case_create(agent=agent, owner=owner, name="nested quantifiers", spec=spec)

    suite_run = wait_finished(suite_run_start(suite=suite_of(owner, case), user=owner))

    (result,) = suite_run.results.all()
    stalling, matching = verdicts(result)
    assert (stalling["passed"], matching["passed"]) == (False, True), verdicts(result)
    assert stalling["reason"] == "the answer does not match /(a+)+$/"
    assert suite_run.status == "failed"


# --- judge models and run options ---------------------------------------------------------------
def test_a_judge_model_on_a_server_without_a_base_is_refused_at_save(api, synced, ollama_canary):
    judge = {"type": "judge", "rubric": "says hello", "model": "ollama/llama3"}

    response = post_case(api, spec_with(judge))

    assert response.status_code == 400, response.json()
    (error,) = response.json()["errors"]
    assert error["path"] == "$.spec.turns[0].expect[0].model"
    assert "ollama/ models call a server somebody runs" in error["message"]
    assert not TestCase.objects.exists()


def test_a_cases_run_options_with_a_refused_fallback_are_refused_at_save(
    api, synced, ollama_canary
):
    spec = spec_with({"type": "no_error"}, options={"fallbacks": ["ollama/llama3"]})

    response = post_case(api, spec)

    assert response.status_code == 400, response.json()
    assert response.json()["errors"][0]["path"] == "$.spec.options.fallbacks[0]"
    assert not TestCase.objects.exists()


def test_a_saved_judge_model_that_is_refused_fails_its_expectation_and_calls_nothing(
    owner, synced, ollama_canary
):
    # Written directly, as a case saved before the rule would be.
    case = TestCase.objects.create(
        agent=Agent.objects.get(slug="travel-desk"),
        owner=owner,
        name="judged",
        spec=spec_with({"type": "judge", "rubric": "says hello", "model": "ollama/llama3"}),
    )
    suite_run = suite_run_start(suite=suite_of(owner, case), user=owner, enqueue=False)

    suite_run = suite_run_execute(suite_run_id=suite_run.pk)

    assert ollama_canary.connections == []
    (result,) = suite_run.results.all()
    (verdict,) = verdicts(result)
    assert not verdict["passed"]
    assert "the judge model ollama/llama3 was not called" in verdict["reason"], verdict
