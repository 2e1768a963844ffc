"""Two writers from the same version on PostgreSQL: exactly one wins, nothing is lost."""

from __future__ import annotations

import threading

import psycopg
import pytest
from django.db import connection, connections

from agents_core import overrides
from agents_core.editor.services import revisions
from agents_core.models import Agent, Revision
from common.exceptions import Conflict

pytestmark = pytest.mark.django_db(transaction=True)


def save_in_thread(agent_pk: int, user, text: str, barrier: threading.Barrier, results: dict):
    try:
        agent = Agent.objects.get(pk=agent_pk)
        barrier.wait(timeout=30)
        try:
            revisions.override_save(
                lock_id=None, agent=agent, user=user, version=1, data={"instructions": text}
            )
            results[text] = "saved"
        except Conflict as exc:
            results[text] = exc.extra["current"]
    finally:
        connections.close_all()


def test_concurrent_writers_from_the_same_version_exactly_one_wins(
    code_agent, editor, second_editor
):
    texts = [f"Writer {n}'s instructions." for n in range(8)]
    users = [editor, second_editor] * 4
    barrier = threading.Barrier(len(texts))
    results: dict = {}
    threads = [
        threading.Thread(target=save_in_thread, args=(code_agent.pk, user, text, barrier, results))
        for text, user in zip(texts, users, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    winners = [text for text, outcome in results.items() if outcome == "saved"]
    assert len(results) == len(texts)
    assert len(winners) == 1
    agent = Agent.objects.get(pk=code_agent.pk)
    assert agent.version == 2
    assert overrides.effective_instructions(agent) == winners[0]
    assert Revision.objects.filter(agent=agent).count() == 1
    for text, outcome in results.items():
        if text != winners[0]:
            # Every loser was told what is there now, so it can re-apply its change.
            assert outcome["instructions"]["effective"] == winners[0]
            assert outcome["version"] == 2


def _backend_waiting_on_a_lock(dsn: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as probe:
        row = probe.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        ).fetchone()
        return row[0] > 0


def test_a_writer_blocked_behind_another_transaction_rechecks_the_version(code_agent, editor):
    """The check and the write are one statement: a save waiting on the row lock sees the
    other transaction's bump once it commits, and is refused instead of overwriting."""
    db = connection.settings_dict
    dsn = (
        f"host={db['HOST'] or '127.0.0.1'} port={db['PORT'] or 5432} "
        f"user={db['USER']} dbname={db['NAME']}"
    )
    other = psycopg.connect(dsn)
    other.execute(
        "UPDATE agents_core_agent SET version = version + 1 WHERE id = %s", [code_agent.pk]
    )
    barrier = threading.Barrier(2)
    results: dict = {}
    thread = threading.Thread(
        target=save_in_thread, args=(code_agent.pk, editor, "Blocked writer.", barrier, results)
    )
    thread.start()
    barrier.wait(timeout=30)
    for _ in range(600):
        if _backend_waiting_on_a_lock(dsn):
            break
        threading.Event().wait(0.05)
    else:
        pytest.fail("the second writer never waited on the row lock")
    other.commit()
    other.close()
    thread.join(timeout=60)
    assert results["Blocked writer."]["version"] == 2
    assert Revision.objects.count() == 0
    assert (
        overrides.effective_instructions(Agent.objects.get(pk=code_agent.pk)) != "Blocked writer."
    )
