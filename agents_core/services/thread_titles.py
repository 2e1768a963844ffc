"""Thread titles as the agent's model summarises them: once a thread's run completes while
its title is still the first-message placeholder (`Thread.title_auto`, set by run_start
when the agent's `generateTitle` is on), the agent's model is asked for a title of a few
words from that exchange. It runs in a Celery task (`thread_title_generate_task`), off the
run's path; the title is stored only if the user has not renamed the thread meanwhile, and
a `thread-updated` event tells the chat. A model that fails leaves the placeholder."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from agents_core.models import MessageRole, Run, RunStatus, Thread
from agents_core.runtime.bus.events import events_emit_sync
from agents_core.runtime.run.setup import load_setup
from providers.calls import completion
from providers.offline_title import ANSWER_LABEL, TITLE_MARKER

logger = logging.getLogger(__name__)

TITLE_INSTRUCTION = (
    f"{TITLE_MARKER} Write a title of at most six words for the conversation below: its "
    "subject, in the language of the user. Reply with the title only, without quotes."
)
# The Celery task, by name (agents_core.tasks imports the services that start runs).
TITLE_TASK = "agents_core.tasks.thread_title_generate_task"
TITLE_WORDS = 8
EXCHANGE_CHARS = 4000
TITLE_MAX_TOKENS = 40
TITLE_TIMEOUT = 60


def title_exchange(run: Run) -> str:
    """The run's user message and answer, as the title request gives them to the model."""
    first = run.messages.filter(role=MessageRole.USER).order_by("id").first()
    question = " ".join(
        str(part.get("text") or "") for part in (first.parts if first else []) if part
    ).strip() or str((run.state or {}).get("message") or "")
    answer = str((run.state or {}).get("finalText") or "")
    return f"User: {question[:EXCHANGE_CHARS]}{ANSWER_LABEL}{answer[:EXCHANGE_CHARS]}"


def title_clean(reply: str) -> str:
    """The model's reply as a title: its first line, without quotes, markup or a final
    full stop, at most TITLE_WORDS words."""
    line = next((part for part in reply.splitlines() if part.strip()), "")
    line = line.strip().removeprefix("Title:").strip(" \t\"'`*#“”‘’")
    words = line.rstrip(".").split()
    return " ".join(words[:TITLE_WORDS])[:200]


def title_request(run: Run) -> dict[str, Any]:
    """litellm's arguments: the agent's model with the run's credentials, base and
    settings, the instruction and the exchange, no tools. Raises ModelError when the run
    could not call its model."""
    setup = load_setup(run.id)
    call = setup.model_calls[0]
    kwargs: dict[str, Any] = {
        "model": call.model,
        "messages": [
            {"role": "system", "content": TITLE_INSTRUCTION},
            {"role": "user", "content": title_exchange(run)},
        ],
        "max_retries": 0,
        **setup.model_kwargs(call),
    }
    kwargs.setdefault("max_tokens", TITLE_MAX_TOKENS)
    kwargs.setdefault("timeout", TITLE_TIMEOUT)
    return kwargs


def thread_title_generate(*, run_id: Any) -> str | None:
    """Title the thread of `run_id` (a completed run) with the model's summary; the new
    title, or None when there is nothing to do or the model failed."""
    run = Run.objects.select_related("thread").filter(pk=run_id).first()
    if run is None or run.status != RunStatus.COMPLETED or not run.thread.title_auto:
        return None
    thread, placeholder = run.thread, run.thread.title
    try:
        response = completion(**title_request(run))
        title = title_clean(response.choices[0].message.content or "")
    except Exception:  # noqa: BLE001 - any failure keeps the placeholder; the run is done
        logger.warning(
            "Thread %s: no title from the model; the placeholder stays", thread.pk, exc_info=True
        )
        title = ""
    with transaction.atomic():
        # The placeholder check is the claim: a rename (or another copy of this task)
        # that got there first leaves nothing to update.
        claimed = Thread.objects.filter(pk=thread.pk, title_auto=True, title=placeholder)
        if not title:
            claimed.update(title_auto=False)
            return None
        if claimed.update(title=title, title_auto=False) != 1:
            return None
        events_emit_sync(
            thread_id=thread.pk,
            run_id=run.pk,
            events=[{"type": "thread-updated", "runId": str(run.pk), "title": title}],
        )
    return title


def title_wanted(run_id: Any) -> bool:
    """Whether a completed run's thread waits for its summarised title."""
    return Thread.objects.filter(runs=run_id, title_auto=True).exists()
