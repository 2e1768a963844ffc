"""The inbox merges a pending duplicate (dedupe key) and combines related ones (coalesce key)."""

from __future__ import annotations

import pytest

from agents_core.models import NotificationRecord, NotificationStatus, Thread
from agents_core.signals.notifications import send_notification_signal

pytestmark = pytest.mark.django_db


def low(thread, summary, **extra):
    extra.setdefault("source", "ci")
    return send_notification_signal(thread=thread, summary=summary, priority="low", **extra)


def test_a_pending_duplicate_is_merged_into_one_record(thread):
    first = low(thread, "build 1 failed", dedupe_key="build", payload={"n": 1})
    second = low(thread, "build 1 failed again", dedupe_key="build", payload={"n": 2})
    assert second.merged == "dedupe"
    record = NotificationRecord.objects.get()
    assert record.id == first.notification.id == second.notification.id
    assert (record.summary, record.payload, record.count) == ("build 1 failed again", {"n": 2}, 1)


def test_the_same_dedupe_key_from_another_source_is_not_a_duplicate(thread):
    low(thread, "a", dedupe_key="k", source="ci")
    result = low(thread, "b", dedupe_key="k", source="pager")
    assert result.merged is None or result.merged == ""
    assert NotificationRecord.objects.count() == 2


def test_a_duplicate_of_a_record_already_digested_starts_a_new_record(thread):
    first = low(thread, "a", dedupe_key="k")
    NotificationRecord.objects.filter(id=first.notification.id).update(
        status=NotificationStatus.DIGESTED
    )
    low(thread, "a", dedupe_key="k")
    assert NotificationRecord.objects.count() == 2


def test_a_duplicate_on_another_thread_is_not_merged(thread, agent, owner):
    other = Thread.objects.create(agent=agent, owner=owner, resource_id=str(owner.pk))
    low(thread, "a", dedupe_key="k")
    low(other, "a", dedupe_key="k")
    assert NotificationRecord.objects.count() == 2


def test_related_notifications_are_combined_with_a_count(thread):
    for n in range(1, 4):
        result = low(thread, f"comment {n} on PR 7", coalesce_key="pr-7", source=f"user{n}")
    assert result.merged == "coalesce"
    record = NotificationRecord.objects.get()
    assert record.count == 3
    assert record.summary == "comment 3 on PR 7"
    assert record.metadata["coalesced"] == [f"comment {n} on PR 7" for n in range(1, 4)]


def test_a_merge_keeps_the_higher_priority_and_redecides(thread, running_run):
    low(thread, "disk at 80%", dedupe_key="disk", source="monitor")
    result = send_notification_signal(
        thread=thread,
        source="monitor",
        summary="disk at 99%",
        priority="urgent",
        dedupe_key="disk",
    )
    record = NotificationRecord.objects.get()
    assert record.priority == "urgent"
    assert result.decision == "deliver"
    assert result.signal.run_id == running_run.id
    assert "disk at 99%" in result.signal.contents


def test_coalesced_records_show_their_count_to_the_model(thread, running_run):
    from agents_core.signals.delivery import signals_drain_for_run
    from agents_core.signals.digest import notifications_digest_thread_now

    for _ in range(4):
        low(thread, "a comment", coalesce_key="pr-7")
    notifications_digest_thread_now(thread=thread)
    [text] = signals_drain_for_run(running_run)
    assert "a comment (x4)" in text
    assert 'count="4"' in text
