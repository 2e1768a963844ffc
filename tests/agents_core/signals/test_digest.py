"""The digest job: due records grouped per thread into one summary signal, delivered or
persisted by the policy, exactly once even when two jobs run at the same time."""

from __future__ import annotations

import threading
import xml.etree.ElementTree as ET

import pytest
from django.db import connections

from agents_core.definitions import Agent as AgentDefinition
from agents_core.models import (
    Message,
    MessageRole,
    NotificationRecord,
    NotificationStatus,
    Signal,
    SignalStatus,
    StreamEvent,
    Thread,
)
from agents_core.registry import Registry, reset_registry
from agents_core.signals.delivery import signals_drain_for_run
from agents_core.signals.digest import notifications_digest
from agents_core.signals.notifications import send_notification_signal
from tests.agents_core.factories import AgentFactory


def low(thread, summary, **extra):
    return send_notification_signal(
        thread=thread, source="ci", summary=summary, priority="low", **extra
    )


@pytest.mark.django_db
def test_due_records_become_one_summary_signal_per_thread(thread, agent, owner, running_run):
    other = Thread.objects.create(agent=agent, owner=owner, resource_id=str(owner.pk))
    low(thread, "build 1 passed")
    low(thread, "build 2 failed")
    low(other, "someone starred the repo")
    report = notifications_digest()
    assert len(report.delivered) == 2 and report.records == 3
    assert NotificationRecord.objects.filter(status=NotificationStatus.DIGESTED).count() == 3
    [text] = signals_drain_for_run(running_run)
    element = ET.fromstring(text)
    assert element.tag == "notifications"
    assert element.attrib == {"count": "2", "priority": "low", "digest": "true"}
    assert element.text.splitlines() == ["- [low] ci: build 1 passed", "- [low] ci: build 2 failed"]


@pytest.mark.django_db
def test_a_low_digest_for_an_idle_thread_reaches_subscribers_without_waking_the_model(
    thread, django_capture_on_commit_callbacks
):
    low(thread, "nightly report ready")
    with django_capture_on_commit_callbacks(execute=True):
        notifications_digest()
    signal = Signal.objects.get()
    assert (signal.decision, signal.status) == ("persist", SignalStatus.PERSISTED)
    assert not thread.runs.exists()
    assert Message.objects.filter(thread=thread, role=MessageRole.SIGNAL).count() == 1
    events = {e.type: e.payload for e in StreamEvent.objects.filter(thread=thread)}
    assert events["signal"]["signal"]["tagName"] == "notifications"
    assert events["notification"]["notification"]["status"] == "digested"


@pytest.mark.django_db
def test_records_not_yet_due_wait_for_a_later_digest(thread, settings):
    settings.STUDIO_DIGEST_DELAY = 3600
    low(thread, "later")
    assert notifications_digest().records == 0
    assert NotificationRecord.objects.get().status == NotificationStatus.PENDING


@pytest.mark.django_db
def test_a_second_digest_finds_nothing_left_to_deliver(thread):
    low(thread, "once")
    assert notifications_digest().records == 1
    assert notifications_digest().records == 0
    assert Signal.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_digests_at_the_same_moment_deliver_each_record_once(thread):
    for n in range(5):
        low(thread, f"event {n}")
    start = threading.Barrier(2)
    reports, errors = [], []

    def digest():
        try:
            start.wait(10)
            reports.append(notifications_digest())
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    workers = [threading.Thread(target=digest) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert not errors, errors
    assert sorted(report.records for report in reports) == [0, 5]
    assert Signal.objects.count() == 1
    assert set(NotificationRecord.objects.values_list("status", flat=True)) == {"digested"}


@pytest.fixture
def failing_policy_agent(owner):
    def policy(notification, *, active):
        if notification["source"] == "digest":
            raise RuntimeError("policy service unreachable")
        return None

    definition = AgentDefinition(id="flaky", name="Flaky", notification_policy=policy)
    reset_registry(Registry(agents={"flaky": definition}))
    yield AgentFactory(slug="flaky", code=True)
    reset_registry(None)


@pytest.mark.django_db
def test_a_record_that_keeps_failing_is_marked_failed_with_its_error(
    failing_policy_agent, owner, settings
):
    settings.STUDIO_DIGEST_MAX_ATTEMPTS = 3
    thread = Thread.objects.create(
        agent=failing_policy_agent, owner=owner, resource_id=str(owner.pk)
    )
    low(thread, "will not go through")
    for attempt in (1, 2):
        report = notifications_digest()
        assert "policy service unreachable" in report.failed[str(thread.id)]
        record = NotificationRecord.objects.get()
        assert (record.status, record.attempts) == (NotificationStatus.PENDING, attempt)
    notifications_digest()
    record = NotificationRecord.objects.get()
    assert (record.status, record.attempts) == (NotificationStatus.FAILED, 3)
    assert "PolicyError" in record.error and "policy service unreachable" in record.error
    assert not Signal.objects.exists()
    assert notifications_digest().records == 0
