"""The thread list: every conversation of the caller with its active run, in a constant
number of queries however many threads there are."""

from __future__ import annotations

import pytest

from agents_core.models import Run, Thread
from tests.agents_core.factories import AgentFactory

pytestmark = pytest.mark.django_db


def make_threads(owner, count: int) -> list[Thread]:
    agents = [AgentFactory(owner=owner) for _ in range(3)]
    threads = Thread.objects.bulk_create(
        Thread(agent=agents[i % 3], owner=owner, resource_id=str(owner.pk), title=f"t{i}")
        for i in range(count)
    )
    Run.objects.bulk_create(
        Run(thread=thread, agent=thread.agent, status=status)
        for thread in threads[::2]
        for status in ("completed", "running")
    )
    return threads


def test_listing_200_threads_takes_a_constant_number_of_queries(
    api, owner, django_assert_max_num_queries
):
    make_threads(owner, 200)

    with django_assert_max_num_queries(2):
        response = api.get("/api/threads/")

    results = response.json()["results"]
    assert len(results) == 200
    active = [t for t in results if t["activeRun"] is not None]
    assert len(active) == 100 and {t["activeRun"]["status"] for t in active} == {"running"}
    assert {t["agent"] for t in results} == set(
        Thread.objects.values_list("agent__slug", flat=True)
    )


def test_the_list_leaves_out_sub_agent_threads_and_others_threads(api, owner, outsider):
    mine = make_threads(owner, 2)
    make_threads(outsider, 2)
    Thread.objects.filter(pk=mine[1].pk).update(metadata={"parentThreadId": str(mine[0].pk)})

    results = api.get("/api/threads/").json()["results"]

    assert [t["id"] for t in results] == [str(mine[0].pk)]


def test_the_list_filters_by_agent(api, owner):
    threads = make_threads(owner, 6)

    results = api.get(f"/api/threads/?agent={threads[0].agent.slug}").json()["results"]

    assert sorted(t["id"] for t in results) == sorted(str(t.pk) for t in threads[0::3])


def test_a_thread_reads_as_the_chat_expects(api, owner):
    thread = make_threads(owner, 1)[0]
    run = thread.runs.get(status="running")

    data = api.get(f"/api/threads/{thread.pk}/").json()

    assert data == {
        "id": str(thread.pk),
        "agent": thread.agent.slug,
        "agentName": thread.agent.name,
        "title": "t0",
        "resourceId": str(owner.pk),
        "metadata": {},
        "lastSeq": 0,
        "activeRun": {
            "id": str(run.pk),
            "thread": str(thread.pk),
            "agent": thread.agent.slug,
            "status": "running",
            "step": 0,
            "error": "",
            "usage": {},
            "model": run.model,
            "options": {},
            "createdAt": run.created_at.isoformat(),
            "finishedAt": None,
        },
        "createdAt": thread.created_at.isoformat(),
        "updatedAt": Thread.objects.get(pk=thread.pk).updated_at.isoformat(),
    }
