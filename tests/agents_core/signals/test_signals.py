"""send_message, send_signal and send_state_signal on an active thread, and the drain."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from agents_core.models import Message, MessageRole, Signal, SignalStatus
from agents_core.signals.delivery import signals_drain_for_run
from agents_core.signals.services import (
    send_message,
    send_signal,
    send_state_signal,
)
from common.exceptions import ApplicationError

pytestmark = pytest.mark.django_db


def test_a_message_for_a_running_run_is_delivered_before_its_next_model_call(thread, running_run):
    result = send_message(thread=thread, message="also check Oslo", attributes={"from": "pm"})
    assert (result.decision, result.run_id) == ("deliver", running_run.id)
    assert signals_drain_for_run(running_run) == ['<message from="pm">also check Oslo</message>']
    signal = Signal.objects.get()
    assert (signal.status, signal.delivered_in_run_id) == (SignalStatus.DELIVERED, running_run.id)
    # A second drain (the next step) finds nothing new.
    assert signals_drain_for_run(running_run) == []


def test_a_delivered_signal_is_written_to_the_threads_memory(thread, running_run):
    send_message(thread=thread, message="plain words")
    signals_drain_for_run(running_run)
    message = Message.objects.get(role=MessageRole.SIGNAL)
    assert message.run_id == running_run.id
    assert message.parts[0]["text"] == "plain words"


@pytest.mark.parametrize("choice,status", [("persist", "persisted"), ("discard", "discarded")])
def test_if_active_persist_or_discard_keeps_it_out_of_the_run(thread, running_run, choice, status):
    result = send_message(thread=thread, message="fyi", if_active=choice)
    assert result.decision == choice
    assert result.signal.status == status
    assert signals_drain_for_run(running_run) == []
    assert Message.objects.filter(role=MessageRole.SIGNAL).count() == (choice == "persist")


@pytest.mark.parametrize("choice,status", [("persist", "persisted"), ("discard", "discarded")])
def test_if_idle_persist_or_discard_does_not_wake_the_thread(thread, choice, status):
    result = send_message(thread=thread, message="fyi", if_idle=choice)
    assert (result.decision, result.run_id) == (choice, None)
    assert result.signal.status == status
    assert not thread.runs.exists()


def test_an_unknown_choice_is_refused(thread):
    with pytest.raises(ApplicationError, match="ifIdle must be one of"):
        send_message(thread=thread, message="x", if_idle="shout")


def test_an_unknown_signal_type_is_refused_with_a_clear_error(thread):
    with pytest.raises(ApplicationError) as caught:
        send_signal(thread=thread, type="telepathy", contents="x")
    assert "Unknown signal type 'telepathy'" in caught.value.message
    assert "user, state, reactive, notification" in caught.value.message
    assert not Signal.objects.exists()


def test_tag_name_sets_the_tag_the_model_sees(thread, running_run):
    send_signal(
        thread=thread,
        type="reactive",
        tag_name="build-status",
        contents={"ok": False},
        attributes={"pipeline": "main"},
    )
    [text] = signals_drain_for_run(running_run)
    element = ET.fromstring(text)
    assert element.tag == "build-status"
    assert element.attrib == {"pipeline": "main"}
    assert element.text == '{"ok": false}'


def test_a_hostile_tag_name_is_refused(thread):
    with pytest.raises(ApplicationError, match="not a valid XML name"):
        send_signal(thread=thread, type="user", tag_name='x onload="', contents="x")


def test_an_unchanged_state_is_skipped_and_says_so(thread, running_run):
    first = send_state_signal(thread=thread, id="cart", cache_key="v1", value={"items": 1})
    again = send_state_signal(thread=thread, id="cart", cache_key="v1", value={"items": 1})
    assert first.decision == "deliver"
    assert again.decision == "skip"
    assert "unchanged" in again.reason
    assert again.signal.id == first.signal.id
    assert Signal.objects.count() == 1


def test_a_new_cache_key_or_mode_is_sent(thread, running_run):
    send_state_signal(thread=thread, id="cart", cache_key="v1", value={"items": 1})
    assert (
        send_state_signal(thread=thread, id="cart", cache_key="v2", value={"items": 2}).decision
        == "deliver"
    )
    assert (
        send_state_signal(
            thread=thread, id="cart", mode="delta", cache_key="v2", delta={"items": "+1"}
        ).decision
        == "deliver"
    )
    # The one in force is now the delta: the v1 snapshot is a change again.
    assert (
        send_state_signal(thread=thread, id="cart", cache_key="v1", value={"items": 1}).decision
        == "deliver"
    )
    texts = signals_drain_for_run(running_run)
    assert [ET.fromstring(t).attrib["mode"] for t in texts] == [
        "snapshot",
        "snapshot",
        "delta",
        "snapshot",
    ]


def test_a_state_without_a_cache_key_is_always_sent(thread, running_run):
    send_state_signal(thread=thread, id="cart", value={"items": 1})
    assert send_state_signal(thread=thread, id="cart", value={"items": 1}).decision == "deliver"


def test_a_state_on_an_idle_thread_is_persisted_not_woken(thread):
    result = send_state_signal(thread=thread, id="cart", cache_key="v1", value={"items": 1})
    assert result.decision == "persist"
    assert not thread.runs.exists()
    assert (
        send_state_signal(thread=thread, id="cart", cache_key="v1", value={"items": 1}).decision
        == "skip"
    )


def test_a_state_needs_its_value_or_delta(thread):
    with pytest.raises(ApplicationError, match="A delta needs contents or delta"):
        send_state_signal(thread=thread, id="cart", mode="delta", value={"x": 1})
