"""Reads of agents_core.

Ownership of threads lives here and nowhere else: `threads_for(user)` is every thread a user
may see or act on, and each view, consumer and API that takes a thread or run id from a
client goes through `thread_for`/`run_for`, which answer 404 for anyone else's, so that a
stranger cannot tell whether an id exists.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, Prefetch, QuerySet

from agents_core.models import Agent, AgentTool, ImportJob, Run, RunStatus, SubAgent, Thread
from common.exceptions import NotFound


def agent_list(*, user: Any) -> QuerySet[Agent]:
    """Live agents the user may see, with their bindings prefetched."""
    return (
        Agent.objects.live()
        .visible_to(user)
        .prefetch_related(
            Prefetch("tool_bindings", queryset=AgentTool.objects.select_related("tool")),
            Prefetch("subagent_bindings", queryset=SubAgent.objects.select_related("child")),
        )
    )


def agent_get(*, user: Any, slug: str) -> Agent | None:
    return agent_list(user=user).filter(slug=slug).first()


def import_job_get(*, user: Any, job_id: Any) -> ImportJob | None:
    """One of the user's own import jobs (anyone else's is None: a 404)."""
    return ImportJob.objects.defer("request").filter(pk=job_id, owner_id=user.pk).first()


def threads_for(user: Any) -> QuerySet[Thread]:
    """The threads `user` owns; an anonymous user owns none."""
    if user is None or not getattr(user, "is_authenticated", False):
        return Thread.objects.none()
    return Thread.objects.filter(owner_id=user.pk)


def thread_for(user: Any, pk: Any, *, with_runs: bool = False) -> Thread:
    """One of `user`'s threads, with its agent (and `active_runs` if asked, for
    serializing); NotFound (404) otherwise."""
    threads = threads_for(user).select_related("agent")
    thread = (_with_active_runs(threads) if with_runs else threads).filter(pk=pk).first()
    if thread is None:
        raise NotFound("No such thread.", code="not_found")
    return thread


def threads_for_messages(sent: list[tuple[Any, Any]]) -> dict[tuple[Any, str], Thread]:
    """The threads chat messages are sent to, each `(user, thread id)`, by
    `(user.pk, str(id))`, all in one query: a thread that is not its sender's is not among
    them (as `thread_for`). Each with its agent and whether a run waits for an answer on
    it (`has_suspended`) or runs (`has_running`), which the run start then does not ask."""
    owners = {user.pk for user, _ in sent if getattr(user, "is_authenticated", False)}
    runs = Run.objects.filter(thread=OuterRef("pk"))
    threads = (
        Thread.objects.filter(owner_id__in=owners, pk__in={str(pk) for _, pk in sent})
        .select_related("agent")
        .annotate(
            has_suspended=Exists(runs.filter(status=RunStatus.SUSPENDED)),
            has_running=Exists(runs.filter(status=RunStatus.RUNNING)),
        )
    )
    return {(thread.owner_id, str(thread.pk)): thread for thread in threads}


def thread_list(*, user: Any, agent: str | None = None) -> QuerySet[Thread]:
    """The user's conversations, newest first, ready for serializing in a constant number of
    queries. Sub-agent threads belong to their parent's conversation and are left out."""
    threads = threads_for(user).exclude(metadata__has_key="parentThreadId")
    if agent:
        threads = threads.filter(agent__slug=agent)
    return _with_active_runs(threads).order_by("-updated_at")


def runs_for(user: Any) -> QuerySet[Run]:
    """The runs of `user`'s threads."""
    return Run.objects.filter(thread__in=threads_for(user))


def run_for(user: Any, pk: Any) -> Run:
    """One run of `user`'s threads, with its thread and agent; NotFound (404) otherwise."""
    run = runs_for(user).select_related("thread", "agent").filter(pk=pk).first()
    if run is None:
        raise NotFound("No such run.", code="not_found")
    return run


def _with_active_runs(threads: QuerySet[Thread]) -> QuerySet[Thread]:
    """Threads with their agent and `active_runs` (running or suspended, newest first)."""
    active = Run.objects.active().select_related("agent").order_by("-created_at")
    return threads.select_related("agent").prefetch_related(
        Prefetch("runs", queryset=active, to_attr="active_runs")
    )
