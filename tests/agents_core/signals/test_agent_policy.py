"""An agent's own notification policy: per priority, per source, or a function in code."""

from __future__ import annotations

import pytest

from agents_core.definitions import Agent as AgentDefinition
from agents_core.models import NotificationRecord, Thread
from agents_core.registry import Registry, reset_registry
from agents_core.signals.notifications import send_notification_signal
from agents_core.signals.policy import policy_decide, policy_table, policy_validate
from common.exceptions import ApplicationError
from tests.agents_core.factories import AgentFactory

pytestmark = pytest.mark.django_db


def notify(thread, priority, source="ci"):
    return send_notification_signal(thread=thread, source=source, summary="x", priority=priority)


def test_a_per_priority_rule_replaces_the_default(thread, agent, running_run):
    agent.notification_policy = {"priority": {"low": {"active": "now"}}}
    agent.save()
    assert notify(thread, "low").decision == "deliver"
    assert notify(thread, "medium").decision == "digest"


def test_a_per_source_rule_wins_over_the_priority_rule(thread, agent, running_run):
    agent.notification_policy = {
        "priority": {"urgent": "digest"},
        "source": {"pager": "now", "newsletter": {"urgent": {"active": "persist"}}},
    }
    agent.save()
    assert notify(thread, "urgent", source="pager").decision == "deliver"
    assert notify(thread, "urgent", source="ci").decision == "digest"
    assert notify(thread, "urgent", source="newsletter").decision == "persist"
    assert not thread.runs.exclude(id=running_run.id).exists()


def test_an_idle_summary_means_full_delivery_now(agent):
    agent.notification_policy = {"priority": {"low": "summary"}}
    decide = policy_decide(agent=agent, notification={"priority": "low"}, active=False)
    assert decide == "now"
    assert policy_decide(agent=agent, notification={"priority": "low"}, active=True) == "summary"


def test_the_effective_table_is_the_default_with_the_agents_rules(agent):
    agent.notification_policy = {"priority": {"medium": {"active": "now"}}}
    table = policy_table(agent=agent)
    assert table["medium"] == {"active": "now", "idle": "now"}
    assert table["high"] == {"active": "summary", "idle": "now"}
    assert table["low"] == {"active": "digest", "idle": "digest"}


@pytest.mark.parametrize(
    "policy,path",
    [
        ({"priority": {"low": "shout"}}, "$.priority.low.active"),
        ({"priority": {"critical": "now"}}, "$.priority.critical"),
        ({"source": {"ci": {"active": "now", "asleep": "now"}}}, "$.source.ci"),
        ({"priority": {"high": {"idle": "later"}}}, "$.priority.high.idle"),
    ],
)
def test_an_invalid_policy_is_refused_with_the_path(policy, path):
    with pytest.raises(ApplicationError) as caught:
        policy_validate(policy)
    assert path in [error["path"] for error in caught.value.extra["errors"]]


@pytest.fixture
def code_agent(owner):
    calls = []

    def policy(notification, *, active):
        calls.append((notification["source"], active))
        if notification["source"] == "boss":
            return "now"
        if notification["source"] == "spam":
            return "persist"
        return None

    definition = AgentDefinition(id="with-policy", name="With policy", notification_policy=policy)
    previous = reset_registry(Registry(agents={"with-policy": definition}))
    row = AgentFactory(slug="with-policy", code=True)
    yield row, calls
    reset_registry(None)
    del previous


def test_a_policy_function_in_code_decides_and_none_falls_back_to_the_table(code_agent, owner):
    row, calls = code_agent
    thread = Thread.objects.create(agent=row, owner=owner, resource_id=str(owner.pk))
    from tests.agents_core.signals.conftest import make_running_run

    make_running_run(thread)
    assert notify(thread, "low", source="boss").decision == "deliver"
    assert notify(thread, "urgent", source="spam").decision == "persist"
    assert notify(thread, "low", source="ci").decision == "digest"
    assert calls == [("boss", True), ("spam", True), ("ci", True)]
    assert NotificationRecord.objects.count() == 3


def test_a_policy_function_that_fails_leaves_the_record_in_the_inbox_for_the_digest(owner):
    from agents_core.signals.digest import notifications_digest

    def policy(notification, *, active):
        if notification["source"] == "flaky":
            raise ConnectionError("rules service down")
        return None

    reset_registry(
        Registry(
            agents={"picky": AgentDefinition(id="picky", name="Picky", notification_policy=policy)}
        )
    )
    try:
        row = AgentFactory(slug="picky", code=True)
        thread = Thread.objects.create(agent=row, owner=owner, resource_id=str(owner.pk))
        result = notify(thread, "urgent", source="flaky")
        assert result.decision == "digest"
        assert "rules service down" in result.reason
        record = NotificationRecord.objects.get()
        assert (record.status, record.action, record.attempts) == ("pending", "digest", 1)
        assert "ConnectionError" in record.error
        assert notifications_digest().records == 1
        record.refresh_from_db()
        assert record.status == "digested"
    finally:
        reset_registry(None)
