"""A run launched while messages are being taken on its event loop waits for them before its
set-up (runtime/execution/active.py), so that a burst of chats gets its `run-start` answers
first; the wait is bounded."""

from __future__ import annotations

import asyncio

import pytest


async def test_a_run_launched_while_a_message_is_taken_starts_after_it():
    from agents_core.runtime.execution import active

    order: list[str] = []

    async def run() -> None:
        await active.messages_taken()
        order.append("run")

    async with active.taking_message():
        task = asyncio.ensure_future(run())
        async with active.taking_message():
            await asyncio.sleep(0.02)
            order.append("first taken")
        await asyncio.sleep(0.02)
        assert order == ["first taken"]  # one message is still being taken
        order.append("second taken")
    await task
    assert order == ["first taken", "second taken", "run"]


async def test_with_no_message_being_taken_a_run_does_not_wait():
    from agents_core.runtime.execution import active

    waiter = asyncio.ensure_future(active.messages_taken(timeout=3600))
    await asyncio.sleep(0)
    assert waiter.done()


async def test_the_wait_ends_after_its_timeout_while_a_message_is_still_taken():
    from agents_core.runtime.execution import active

    async with active.taking_message():
        await active.messages_taken(timeout=0.01)
        assert active._taking[asyncio.get_running_loop()] == 1
    assert asyncio.get_running_loop() not in active._taking


@pytest.mark.django_db(transaction=True)
def test_a_chat_on_a_thread_with_a_waiting_run_closes_it_first(make_thread, owner, monkeypatch):
    """The socket's chat reads whether a run waits with the thread (one query less per
    message), and such a message, taken alone out of its batch, closes that run before it
    starts the new one."""
    from agents_core.models import Run, RunStatus
    from agents_core.runtime.execution import active
    from agents_core.selectors import threads_for_messages
    from agents_core.services.run_chats import Chat, chats_start

    launched: list = []
    monkeypatch.setattr(active, "launch_many", launched.extend)
    thread = make_thread()
    key = (owner.pk, str(thread.pk))
    assert threads_for_messages([(owner, thread.pk)])[key].has_suspended is False
    waiting = Run.objects.create(
        thread=thread, agent=thread.agent, status=RunStatus.SUSPENDED, started_by=owner
    )
    assert threads_for_messages([(owner, thread.pk)])[key].has_suspended is True

    assert chats_start([Chat(owner, thread.pk, "something else", {})]) == [None]

    waiting.refresh_from_db()
    assert waiting.status == RunStatus.ABORTED
    new = Run.objects.get(pk=launched[0])
    assert (new.status, new.state["message"]) == (RunStatus.RUNNING, "something else")
