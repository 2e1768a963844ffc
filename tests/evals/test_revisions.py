"""Each suite run records the agent as it ran: version, revision, model and the
instructions in effect, and each result the agent version it ran against."""

from __future__ import annotations

import pytest

from agents_core.editor.services.revisions import override_save
from evals.services.suite_runs import result_play, suite_run_execute, suite_run_start

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_change_of_instructions_between_suite_runs_is_recorded(demo, owner, admin_user):
    agent = demo.agent
    first = suite_run_execute(
        suite_run_id=suite_run_start(suite=demo, user=owner, enqueue=False).pk
    )
    override_save(
        agent=agent,
        user=admin_user,
        data={"instructions": "Answer in French."},
        version=agent.version,
        lock_id=None,
    )
    second = suite_run_execute(
        suite_run_id=suite_run_start(suite=demo, user=owner, enqueue=False).pk
    )

    before, after = first.snapshot, second.snapshot
    assert before["revision"] is None and after["revision"] == after["agentVersion"]
    assert after["agentVersion"] == before["agentVersion"] + 1
    assert after["instructions"] == "Answer in French." != before["instructions"]
    assert before["model"] == after["model"] == "studio/scripted"
    assert {r.agent_version for r in first.results.all()} == {before["agentVersion"]}
    assert {r.agent_version for r in second.results.all()} == {after["agentVersion"]}


def test_an_edit_while_a_suite_run_plays_is_recorded_per_result(demo, owner, admin_user):
    """The cases of one suite run played before and after an edit of the agent's
    instructions record the version each was played against."""
    agent = demo.agent
    suite_run = suite_run_start(suite=demo, user=owner, enqueue=False)
    first, *rest = list(suite_run.results.order_by("pk"))
    version = agent.version
    result_play(result_id=first.pk)
    override_save(
        agent=agent,
        user=admin_user,
        data={"instructions": "Answer in French."},
        version=agent.version,
        lock_id=None,
    )
    for result in rest:
        result_play(result_id=result.pk)

    first.refresh_from_db()
    assert first.agent_version == version
    assert {r.agent_version for r in suite_run.results.exclude(pk=first.pk)} == {version + 1}
