"""Waking an idle thread (one run even when two wake it at once) and the message queue."""

from __future__ import annotations

import pytest

from agents_core.models import (
    Message,
    MessageRole,
    Run,
    RunStatus,
    Signal,
    SignalStatus,
)
from agents_core.signals.delivery import signals_on_run_end
from agents_core.signals.notifications import send_notification_signal
from agents_core.signals.services import queue_message, send_message
from tests.agents_core.race import lose_the_race


def finish(run: Run) -> Run | None:
    """End a run the way the loop does: final status saved, then the signals hook."""
    Run.objects.filter(id=run.id).update(status=RunStatus.COMPLETED)
    run.refresh_from_db()
    return signals_on_run_end(run)


def first_input(run: Run) -> Message:
    return Message.objects.filter(run=run).order_by("id").first()


@pytest.mark.django_db
def test_a_message_wakes_an_idle_thread_as_the_users_first_input(thread, owner):
    result = send_message(thread=thread, message="What's the weather in Oslo?", user=owner)
    assert result.decision == "wake"
    run = Run.objects.get(id=result.run_id)
    assert run.status == RunStatus.RUNNING
    message = first_input(run)
    assert (message.role, message.parts[0]["text"]) == ("user", "What's the weather in Oslo?")


@pytest.mark.django_db
def test_a_signal_that_wakes_a_thread_is_its_first_input_as_a_signal(thread):
    result = send_notification_signal(
        thread=thread, source="ci", summary='deploy "v2" <done>', priority="urgent"
    )
    run = Run.objects.get(id=result.run_id)
    message = first_input(run)
    assert message.role == MessageRole.SIGNAL
    assert message.parts[0]["text"] == (
        '<notification source="ci" priority="urgent">deploy "v2" &lt;done&gt;</notification>'
    )
    assert run.state["message"] == ""


@pytest.mark.django_db
def test_queued_messages_start_one_run_each_in_the_order_they_were_queued(thread, running_run):
    for text in ("first", "second", "third"):
        assert queue_message(thread=thread, message=text).decision == "queue"
    assert Signal.objects.filter(status=SignalStatus.QUEUED).count() == 3
    order, run = [], running_run
    while (run := finish(run)) is not None:
        order.append(first_input(run).parts[0]["text"])
    assert order == ["first", "second", "third"]
    assert not Signal.objects.filter(status=SignalStatus.QUEUED).exists()


@pytest.mark.django_db
def test_a_queued_message_on_an_idle_thread_runs_at_once(thread):
    result = queue_message(thread=thread, message="now please")
    assert result.decision == "wake"
    assert first_input(Run.objects.get(id=result.run_id)).parts[0]["text"] == "now please"


@pytest.mark.django_db
def test_a_signal_the_run_never_drained_starts_the_next_run(thread, running_run):
    send_message(thread=thread, message="late addition")
    next_run = finish(running_run)
    assert next_run is not None
    assert first_input(next_run).parts[0]["text"] == "late addition"


@pytest.mark.django_db
def test_the_full_high_notification_is_delivered_when_the_run_ends(thread, running_run):
    send_notification_signal(
        thread=thread, source="pager", summary="db down", priority="high", payload={"host": "db1"}
    )
    next_run = finish(running_run)
    text = first_input(next_run).parts[0]["text"]
    assert 'priority="high"' in text and "db1" in text and "delivery" not in text
    from agents_core.models import NotificationRecord

    assert NotificationRecord.objects.get().status == "delivered"


@pytest.mark.django_db
def test_a_suspended_run_keeps_the_queue_waiting(thread, running_run):
    queue_message(thread=thread, message="after the answer")
    Run.objects.filter(id=running_run.id).update(status=RunStatus.SUSPENDED)
    running_run.refresh_from_db()
    assert signals_on_run_end(running_run) is None
    assert Signal.objects.get().status == SignalStatus.QUEUED


@pytest.mark.django_db(transaction=True)
def test_two_wakes_at_once_start_one_run_and_the_other_message_goes_into_it(thread, settings):
    # Runs go to a run worker that this test does not start: the woken run stays
    # `running`, so the loser must find it and deliver into it.
    settings.STUDIO_RUN_EXECUTOR = "worker"
    result = lose_the_race(
        insert_rival=lambda: send_message(thread=thread, message="first"),
        request=lambda: send_message(thread=thread, message="second"),
    )
    run = Run.objects.get()
    assert (result.decision, result.run_id) == ("deliver", run.id)
    second = Signal.objects.get(contents="second")
    assert (second.status, second.run_id) == (SignalStatus.PENDING, run.id)
    assert first_input(run).parts[0]["text"] == "first"


@pytest.mark.django_db
def test_a_queued_message_keeps_its_stream_options_for_the_run_it_starts(thread, running_run):
    queue_message(thread=thread, message="later", stream_options={"maxSteps": 2})
    next_run = finish(running_run)
    assert next_run.options == {"maxSteps": 2}


@pytest.mark.django_db
def test_unknown_stream_options_are_refused_and_nothing_is_written(thread):
    from common.exceptions import ApplicationError

    with pytest.raises(ApplicationError, match="Unknown run options"):
        send_message(thread=thread, message="hi", stream_options={"warp": 9})
    assert not Signal.objects.exists() and not thread.runs.exists()


@pytest.mark.django_db
def test_a_low_digest_the_run_never_read_is_persisted_without_waking(thread, running_run):
    from agents_core.signals.digest import notifications_digest

    send_notification_signal(thread=thread, source="ci", summary="nightly", priority="low")
    notifications_digest()
    assert Signal.objects.get().status == SignalStatus.PENDING
    assert finish(running_run) is None
    digest = Signal.objects.get()
    assert (digest.status, digest.decision) == (SignalStatus.PERSISTED, "persist")
    assert Message.objects.filter(role=MessageRole.SIGNAL).count() == 1
    assert thread.runs.count() == 1


@pytest.mark.django_db
def test_a_state_the_run_never_read_is_kept_in_memory(thread, running_run):
    from agents_core.signals.services import send_state_signal

    send_state_signal(thread=thread, id="cart", value={"n": 1})
    assert finish(running_run) is None
    assert Signal.objects.get().status == SignalStatus.PERSISTED
