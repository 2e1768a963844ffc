"""Chat messages that arrive together are taken together (services/run_chats.py, through the
one run start, services/runs.runs_start): one read, one statement for the runs, one for
their `run-start` events; each message still gets its own run and `run-start`, or its own
error, and a batch is written whole or not at all."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async

from tests.agents_core.runtime.conftest import settle
from tests.agents_core.runtime.test_websocket import communicator

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def launched(monkeypatch) -> list[Any]:
    """The runs launched (not executed: these tests look at the start only)."""
    from agents_core.runtime.execution import active

    runs: list[Any] = []
    monkeypatch.setattr(active, "launch", runs.append)
    monkeypatch.setattr(active, "launch_many", runs.extend)
    return runs


@pytest.fixture
def inserted(monkeypatch) -> list[int]:
    """How many runs each `runs_insert` call inserted; minus how many it was given when
    its statement was refused (nothing of it written)."""
    from agents_core.services import run_rows

    sizes: list[int] = []
    real = run_rows.runs_insert

    def counted(new: list[Any]) -> None:
        try:
            real(new)
        except Exception:
            sizes.append(-len(new))
            raise
        sizes.append(len(new))

    monkeypatch.setattr(run_rows, "runs_insert", counted)
    return sizes


def _codes(results: list[Any]) -> list[str | None]:
    return [getattr(result, "code", None) for result in results]


def test_messages_taken_together_make_one_statement_per_kind_for_all_of_them(
    make_thread, owner, outsider, launched, inserted, django_assert_max_num_queries
):
    from agents_core.models import Run, StreamEvent
    from agents_core.services.run_chats import Chat, chats_start
    from agents_core.services.threads import title_summary

    threads = [make_thread() for _ in range(6)]
    foreign = make_thread(user=outsider)
    chats = [Chat(owner, thread.pk, f"hello {n}", {}) for n, thread in enumerate(threads)]
    chats.insert(2, Chat(owner, foreign.pk, "not mine", {}))
    chats.insert(4, Chat(owner, threads[0].pk, "   ", {}))
    chats.append(Chat(owner, threads[1].pk, "bad options", {"maxSteps": 0}))
    # The thread read, BEGIN, the runs with their messages and titles, the events'
    # thread lock and insert (and their savepoint), COMMIT: not one set per message.
    with django_assert_max_num_queries(8):
        results = chats_start(chats)

    assert _codes(results) == [
        None, None, "not_found", None, "empty_message", None, None, None, "invalid_options"
    ]  # fmt: skip
    assert inserted == [6]
    runs = {run.thread_id: run for run in Run.objects.filter(thread__in=threads)}
    assert Run.objects.count() == 6 and set(runs) == {thread.pk for thread in threads}
    assert sorted(str(pk) for pk in launched) == sorted(str(run.pk) for run in runs.values())
    for n, thread in enumerate(threads):
        run = runs[thread.pk]
        assert run.state == {"message": f"hello {n}"} and run.status == "running"
        assert run.messages.get().parts == [{"type": "text", "text": f"hello {n}"}]
        thread.refresh_from_db()
        assert thread.title == title_summary(f"hello {n}") and thread.title_auto
        assert thread.last_seq == 1
        (event,) = StreamEvent.objects.filter(thread=thread)
        assert (event.seq, event.type, event.run_id) == (1, "run-start", run.pk)


def test_a_second_message_for_a_thread_in_the_batch_meets_the_first_ones_run(
    make_thread, owner, launched, inserted
):
    from agents_core.models import Run
    from agents_core.services.run_chats import Chat, chats_start

    first, second = make_thread(), make_thread()
    chats = [Chat(owner, first.pk, "one", {}), Chat(owner, first.pk, "two", {})]
    chats.append(Chat(owner, second.pk, "three", {}))
    results = chats_start(chats)
    assert _codes(results) == [None, "run_running", None]
    assert inserted == [2, -1]  # the second message alone, after the batch: refused
    assert Run.objects.get(thread=first).state == {"message": "one"}
    assert Run.objects.filter(thread=second).count() == 1


def test_a_batch_whose_statement_fails_takes_each_message_alone(
    make_thread, owner, launched, inserted, monkeypatch
):
    """A run started on one of the threads after the batch read them (by another process):
    the statement fails whole and every message gets its own outcome."""
    from agents_core.models import Run
    from agents_core.services import run_chats
    from agents_core.services.run_chats import Chat, chats_start
    from agents_core.services.runs import run_start

    raced, other = make_thread(), make_thread()
    read = run_chats.threads_for_messages

    def read_then_race(sent: list[Any]) -> dict[Any, Any]:
        threads = read(sent)
        run_start(thread=raced, message="from elsewhere", user=owner)
        return threads

    monkeypatch.setattr(run_chats, "threads_for_messages", read_then_race)
    results = chats_start([Chat(owner, raced.pk, "mine", {}), Chat(owner, other.pk, "ok", {})])
    assert _codes(results) == ["run_running", None]
    # The race's run, the batch (refused whole), then each message alone.
    assert inserted == [1, -2, -1, 1]
    assert Run.objects.get(thread=raced).state == {"message": "from elsewhere"}
    assert Run.objects.get(thread=other).state == {"message": "ok"}


async def test_messages_sent_at_once_on_many_sockets_each_get_their_run_start_or_error(
    make_thread, owner, inserted, settings
):
    settings.STUDIO_OFFLINE_DELAY = 0.05  # the runs stream while the second message comes
    threads = [await database_sync_to_async(make_thread)() for _ in range(6)]
    comms = [communicator(thread, owner) for thread in threads]
    for comm in comms:
        assert (await comm.connect())[0]
    frames = [{"type": "chat", "text": f"say hello {n}"} for n in range(len(comms))]
    frames[3] = {"type": "chat", "text": "bad", "options": {"maxSteps": 0}}
    for comm, frame in zip(comms, frames, strict=True):
        await comm.send_json_to(frame)
    await comms[5].send_json_to({"type": "chat", "text": "twice"})

    async def until(comm: Any, kinds: set[str]) -> list[dict[str, Any]]:
        seen = []
        while not seen or seen[-1]["type"] not in kinds:
            seen.append(await comm.receive_json_from(timeout=30))
        return seen

    ends = {"run-finish", "run-error"}
    received = await asyncio.gather(
        *(until(comm, {"error"} if n == 3 else ends) for n, comm in enumerate(comms))
    )
    from agents_core.models import Run

    for n, (thread, events) in enumerate(zip(threads, received, strict=True)):
        if n == 3:
            assert events[-1]["code"] == "invalid_options" and events[-1]["request"] == "chat"
            continue
        runs = [run async for run in Run.objects.filter(thread=thread)]
        assert len(runs) == 1
        starts = [event for event in events if event["type"] == "run-start"]
        assert [event["runId"] for event in starts] == [str(runs[0].pk)]
        assert events[-1]["type"] == "run-finish"
    # The socket that sent twice: its second message met its first one's run.
    fifth = (
        received[5] + await until(comms[5], {"error"})
        if not any(event["type"] == "error" for event in received[5])
        else received[5]
    )
    assert [event["code"] for event in fifth if event["type"] == "error"] == ["run_running"]
    # Every new run was inserted once, in whatever batches the socket's timing made (the
    # batching itself is checked without sockets above).
    assert sum(size for size in inserted if size > 0) == 5
    await settle()
    for comm in comms:
        await comm.disconnect()


def test_runs_start_checks_each_start_as_run_start_does(
    make_thread, owner, outsider, launched, inserted
):
    """The run start itself refuses a thread that is not the starter's (not only the
    thread read before it), an empty message and options the agent does not allow; a
    thread read without its run flags is started alone (run_start_safe), never batched."""
    from agents_core.models import Run
    from agents_core.services.run_rows import Start
    from agents_core.services.runs import runs_start

    foreign, plain, empty, bad = (make_thread(user=outsider), *(make_thread() for _ in range(3)))
    results = runs_start(
        [
            Start(foreign, "not mine", owner),
            Start(plain, "hello", owner),
            Start(empty, "  ", owner),
            Start(bad, "bad options", owner, {"maxSteps": 0}),
        ]
    )
    assert _codes(results) == ["not_found", None, "empty_message", "invalid_options"]
    assert inserted == [1]
    (run,) = Run.objects.all()
    assert results[1] == run and run.thread_id == plain.pk and launched == [run.pk]


def test_a_message_from_a_signed_out_user_is_refused(make_thread, owner, launched, inserted):
    from django.contrib.auth.models import AnonymousUser

    from agents_core.models import Run
    from agents_core.services.run_chats import Chat, chats_start

    thread = make_thread()
    results = chats_start([Chat(AnonymousUser(), thread.pk, "hello", {})])
    assert _codes(results) == ["not_found"]
    assert inserted == [] and not Run.objects.exists()
