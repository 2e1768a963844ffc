"""The notification policy table, each priority on an active and on an idle thread.

urgent: now; high: now when idle, else a summary now and the full notification when the
thread is idle; medium: now when idle, else the digest; low: always the digest.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from agents_core.models import (
    NotificationRecord,
    NotificationStatus,
    Run,
    Signal,
    SignalStatus,
    StreamEvent,
)
from agents_core.signals.delivery import signals_drain_for_run
from agents_core.signals.notifications import send_notification_signal

pytestmark = pytest.mark.django_db


def notify(thread, priority, **extra):
    return send_notification_signal(
        thread=thread,
        source="ci",
        kind="build",
        summary=f"{priority} thing happened",
        priority=priority,
        payload={"build": 42},
        **extra,
    )


def test_urgent_on_an_active_thread_goes_into_the_running_run(thread, running_run):
    result = notify(thread, "urgent")
    assert result.decision == "deliver"
    assert result.run_id == running_run.id
    signal = result.signal
    assert (signal.status, signal.run_id) == (SignalStatus.PENDING, running_run.id)
    [text] = signals_drain_for_run(running_run)
    element = ET.fromstring(text)
    assert element.tag == "notification"
    assert element.attrib == {"source": "ci", "kind": "build", "priority": "urgent"}
    assert element.text == 'urgent thing happened\n{"build": 42}'
    record = NotificationRecord.objects.get()
    assert record.status == NotificationStatus.DELIVERED


def test_urgent_on_an_idle_thread_wakes_it(thread):
    result = notify(thread, "urgent")
    assert result.decision == "wake"
    run = Run.objects.get(id=result.run_id)
    assert run.thread_id == thread.id
    assert result.signal.delivered_in_run_id == run.id
    assert NotificationRecord.objects.get().status == NotificationStatus.DELIVERED


def test_high_on_an_idle_thread_wakes_it_with_the_full_notification(thread):
    result = notify(thread, "high")
    assert result.decision == "wake"
    assert result.signal.metadata["delivery"] == "full"
    assert '{"build": 42}' in result.signal.contents


def test_high_on_an_active_thread_sends_a_summary_now_and_queues_the_full_one(thread, running_run):
    result = notify(thread, "high")
    assert result.decision == "summary"
    summary, full = Signal.objects.order_by("id")
    assert (summary.status, summary.run_id) == (SignalStatus.PENDING, running_run.id)
    assert summary.attributes["delivery"] == "summary"
    assert summary.contents == "high thing happened"
    assert full.status == SignalStatus.QUEUED
    assert '{"build": 42}' in full.contents
    assert NotificationRecord.objects.get().status == NotificationStatus.SUMMARIZED
    [text] = signals_drain_for_run(running_run)
    assert 'delivery="summary"' in text


def test_medium_on_an_idle_thread_wakes_it(thread):
    assert notify(thread, "medium").decision == "wake"


def test_medium_on_an_active_thread_waits_for_the_digest(thread, running_run):
    result = notify(thread, "medium")
    assert result.decision == "digest"
    record = NotificationRecord.objects.get()
    assert (record.status, record.action) == (NotificationStatus.PENDING, "digest")
    assert record.due_at is not None
    assert not Signal.objects.exists()
    assert signals_drain_for_run(running_run) == []


@pytest.mark.parametrize("active", [True, False], ids=["active", "idle"])
def test_low_always_waits_for_the_digest(thread, active):
    if active:
        Run.objects.create(thread=thread, agent=thread.agent, status="running")
    result = notify(thread, "low")
    assert result.decision == "digest"
    assert not Signal.objects.exists()
    assert Run.objects.count() == (1 if active else 0)


def test_every_decision_is_published_on_the_threads_stream(
    thread, running_run, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        notify(thread, "low")
        notify(thread, "urgent")
    types = list(StreamEvent.objects.filter(thread=thread).values_list("type", flat=True))
    assert types.count("notification") == 2
    assert types.count("signal") == 1
    event = StreamEvent.objects.filter(type="notification").first().payload
    assert event["decision"] == "digest"
    assert event["notification"]["priority"] == "low"
