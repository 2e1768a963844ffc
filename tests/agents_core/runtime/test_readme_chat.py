"""The README's chat examples, as written, on the demo agents they name: each message
calls the tool the tour says it does, with the offline model."""

from __future__ import annotations

import re

import pytest

from agents_core.models import Agent, Run
from agents_core.services.runs import run_start_safe
from agents_core.services.threads import thread_create
from tests.agents_core.runtime.test_threads_api import finish_runs
from tests.conftest import ROOT

pytestmark = pytest.mark.django_db(transaction=True)

# What each example does: the run's status after it and the tool it calls.
EXPECTED = {
    "use weather_lookup for Paris": ("completed", "weather_lookup"),
    "ask me which city to visit": ("suspended", "ask_user"),
    "submit a plan for the trip": ("suspended", "submit_plan"),
    "use task_write for packing": ("completed", "task_write"),
}


def readme_chat_examples() -> list[tuple[str, str]]:
    """(agent name, message) for every backticked message after "*Chat* → *<agent>*" in
    the tour, up to the next tour step."""
    tour = README_TOUR.search((ROOT / "README.md").read_text()).group(0)
    examples = []
    for chunk in tour.split("*Chat* → *")[1:]:
        name, _, rest = chunk.partition("*")
        rest = re.split(r"\n\d+\. ", rest)[0]
        examples += [(name, message) for message in re.findall(r"`([^`]+)`", rest)]
    return examples


README_TOUR = re.compile(r"## A five-minute tour.*?(?=\n## )", re.S)


def test_the_tour_has_chat_examples_and_each_is_known_here():
    examples = readme_chat_examples()
    assert ("Planner", "ask me which city to visit") in examples
    assert {message for _, message in examples} == set(EXPECTED)


@pytest.mark.parametrize(("agent_name", "message"), readme_chat_examples())
def test_each_readme_chat_example_works_on_its_demo_agent(synced, owner, agent_name, message):
    agent = Agent.objects.get(name=agent_name, source="code")
    thread = thread_create(user=owner, agent=agent)

    run_start_safe(thread=thread, message=message, user=owner)
    finish_runs()

    run = Run.objects.get(thread=thread)
    status, tool = EXPECTED[message]
    assert run.status == status, run.error
    calls = list(run.tool_calls.values_list("tool_name", "status"))
    assert calls[0][0] == tool
    assert all(call_status != "failed" for _, call_status in calls), calls
