"""Drive one test case through a real run: a fresh thread, each turn's message sent with
agents_core's run services, each suspended call answered from the case's script, the
run's end awaited, and what it did collected into an `Observation` for the engine.

The runner goes through the public services only (`thread_create`, `run_start`,
`run_resume`, `run_abort`), so the run executes where chat runs execute: inline in this
process, or in the run workers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.conf import settings

from agents_core.models import MessageRole, Run, RunStatus, Thread, ToolCallStatus
from agents_core.services.runs import run_abort, run_resume, run_start
from agents_core.services.threads import thread_create
from evals.expectations import Observation, check_turn
from evals.judge import judge_answer, similarity_measure
from evals.models import TestCase
from providers.calls import litellm_for

POLL_SECONDS = 0.05
_ENDED = {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.ABORTED}


class TurnFailure(Exception):
    """The turn could not be played to its end (no scripted answer, timeout)."""


@dataclass
class CaseOutcome:
    passed: bool
    thread: Thread | None
    turns: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    duration_ms: float = 0.0


def case_play(*, case: TestCase, user: Any, metadata: dict[str, Any] | None = None) -> CaseOutcome:
    started = time.monotonic()
    thread = thread_create(
        user=user,
        agent=case.agent,
        title=f"Test: {case.name}"[:200],
        metadata={"evalCaseId": case.pk, **(metadata or {})},
    )
    options = case.spec.get("options") or None
    turns: list[dict[str, Any]] = []
    passed, error = True, ""
    for index, turn in enumerate(case.spec["turns"]):
        entry: dict[str, Any] = {"index": index, "message": turn["message"]}
        turns.append(entry)
        try:
            run, obs = _turn_play(thread=thread, turn=turn, user=user, options=options)
        except TurnFailure as exc:
            entry.update(status="error", verdicts=[], error=str(exc))
            passed, error = False, f"turn {index + 1}: {exc}"
            break
        verdicts = check_turn(
            turn.get("expect") or [],
            obs,
            judge=partial(judge_answer, user=user),
            similarity=similarity_measure(),
            judge_model=settings.STUDIO_EVAL_JUDGE_MODEL or case.agent.model,
        )
        entry.update(
            runId=str(run.pk),
            status=obs.status,
            answer=obs.answer,
            toolCalls=[{"name": c["name"], "input": c["input"]} for c in obs.tool_calls],
            usage={"steps": obs.steps, "tokens": obs.tokens, "cost": obs.cost},
            durationMs=round(obs.duration_ms, 1),
            verdicts=[verdict.as_dict() for verdict in verdicts],
        )
        if not all(verdict.passed for verdict in verdicts):
            passed = False
    return CaseOutcome(
        passed=passed,
        thread=thread,
        turns=turns,
        error=error,
        duration_ms=(time.monotonic() - started) * 1000,
    )


def _turn_play(
    *, thread: Thread, turn: dict[str, Any], user: Any, options: dict[str, Any] | None
) -> tuple[Run, Observation]:
    started = time.monotonic()
    run = run_start(thread=thread, message=turn["message"], user=user, options=options)
    answers = list(turn.get("answers") or [])
    while True:
        run = _wait(run)
        if run.status in _ENDED:
            break
        call = run.tool_calls.filter(status=ToolCallStatus.SUSPENDED).first()
        if call is None:
            raise TurnFailure("the run is suspended with no call waiting")
        kind = str((call.suspend_payload or {}).get("kind") or "")
        answer = next(
            (a for a in answers if a.get("tool") == call.tool_name or a.get("kind") == kind), None
        )
        if answer is None:
            run_abort(run=run, user=user)
            raise TurnFailure(
                f"the run asked ({kind or 'suspended'}, {call.tool_name}) and the case has no "
                "scripted answer for it"
            )
        answers.remove(answer)
        run = run_resume(run=run, tool_call_id=call.call_id, payload=answer["payload"], user=user)
    return run, observe(run, duration_ms=(time.monotonic() - started) * 1000)


def _wait(run: Run) -> Run:
    """Wait until the run ends or suspends (polling its row: the run may execute in
    another process)."""
    deadline = time.monotonic() + settings.STUDIO_EVAL_TURN_TIMEOUT
    while True:
        status = Run.objects.filter(pk=run.pk).values_list("status", flat=True).first()
        if status in _ENDED or status == RunStatus.SUSPENDED:
            run.refresh_from_db()
            return run
        if time.monotonic() > deadline:
            run_abort(run=run, user=run.started_by)
            raise TurnFailure(
                f"the run did not end within {settings.STUDIO_EVAL_TURN_TIMEOUT} s and was stopped"
            )
        time.sleep(POLL_SECONDS)


def observe(run: Run, *, duration_ms: float) -> Observation:
    """What the engine needs from a finished run: its answer (the text of its last
    assistant message), calls, usage and status, all read from rows the run saves before
    its status changes (its stream events are written later, in batches)."""
    answer = ""
    for message in run.thread.messages.filter(run=run, role=MessageRole.ASSISTANT).order_by("-pk"):
        texts = [p.get("text", "") for p in message.parts or [] if p.get("type") == "text"]
        if texts:
            answer = "".join(texts)
            break
    calls = [
        {"name": c.tool_name, "input": c.input, "status": c.status, "error": c.error}
        for c in run.tool_calls.order_by("created_at", "pk")
    ]
    usage = run.usage or {}
    return Observation(
        answer=answer,
        tool_calls=calls,
        steps=run.step,
        tokens=int(usage.get("total_tokens") or 0),
        cost=_cost(run.agent.model, usage),
        duration_ms=duration_ms,
        status=run.status,
        error=run.error,
    )


def _cost(model: str, usage: dict[str, Any]) -> float | None:
    """The run's price from litellm's cost map, or None for a model it does not price."""
    try:
        prompt, completion = litellm_for(model).cost_per_token(
            model=model,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )
    except Exception:  # noqa: BLE001 - litellm raises for a model it has no price for
        return None
    return float(prompt + completion)
