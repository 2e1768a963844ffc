"""An agent exported as Python (GET /api/agents/<slug>/export?format=python) and loaded as
a code definition is the same agent: the round trip through the code-first API."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from agents_core.models import Agent, Source
from agents_core.registry import Registry, definitions_sync, get_registry
from agents_core.services.agent_io import agent_document
from tests.agents_core.factories import AgentFactory, AgentToolFactory, SubAgentFactory
from tests.tools_app.factories import ToolFactory
from tools_app.models import Tool

pytestmark = pytest.mark.django_db

PYTHON_CODE = "def run(input):\n    return {'text': input['text'].upper()}\n"


@pytest.fixture
def crew(owner):
    shout = ToolFactory(
        name="shout",
        kind="python",
        owner=owner,
        config={"code": PYTHON_CODE},
        execution_mode="async",
        timeout_seconds=12.0,
    )
    helper = AgentFactory(slug="crew-helper", name="Helper", owner=owner, instructions=["A.", "B."])
    AgentToolFactory(agent=helper, tool=shout, key="loud", requires_approval=True)
    agent = AgentFactory(
        slug="crew",
        name="Crew",
        owner=owner,
        model="studio/scripted",
        instructions=[
            {
                "role": "system",
                "content": "Lead.",
                "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}},
            }
        ],
        default_options={"maxSteps": 4, "toolChoice": "auto"},
        metadata={"team": "red"},
        notification_policy={"priority": {"low": "digest"}},
    )
    AgentToolFactory(agent=agent, tool=Tool.objects.get(name="ask_user"), key="ask")
    AgentToolFactory(agent=agent, tool=shout, key="shout", requires_approval=True)
    SubAgentFactory(parent=agent, child=helper, key="helper")
    SubAgentFactory(parent=agent, child=Agent.objects.get(slug="researcher"), key="research")
    return agent


def _load(text: str, tmp_path, name: str) -> object:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_the_python_export_loads_as_code_definitions_of_the_same_agent(api, crew, tmp_path):
    before = agent_document(agent=crew)
    response = api.get("/api/agents/crew/export?format=python")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/x-python")
    assert "left out" not in response.content.decode()  # everything here is expressible
    # The names must be free for code: the studio originals go first.
    Agent.objects.filter(slug__in=["crew", "crew-helper"]).delete()
    Tool.objects.filter(name="shout").delete()

    module = _load(response.content.decode(), tmp_path, "exported_crew")
    registry = Registry(tools=dict(get_registry().tools), agents=dict(get_registry().agents))
    registry.collect_module(module)
    definitions_sync(registry=registry)

    synced = Agent.objects.get(slug="crew")
    assert synced.source == Source.CODE
    after = agent_document(agent=synced)
    assert after["agents"][0] == before["agents"][0]
    assert (
        agent_document(agent=Agent.objects.get(slug="crew-helper"))["agents"][0]
        == (before["agents"][1])
    )
    tool = Tool.objects.get(name="shout")
    assert {key: getattr(tool, key) for key in before["tools"][0] if key != "name"} == {
        key: value for key, value in before["tools"][0].items() if key != "name"
    }


def test_what_code_cannot_express_is_named_at_the_top_of_the_module(api, crew):
    binding = crew.tool_bindings.get(key="ask")
    binding.description_override = "Ask briefly."
    binding.requires_approval = True
    binding.save()

    text = api.get("/api/agents/crew/export?format=python").content.decode()

    assert "# - crew: requires_approval of tool key 'ask'" in text
    assert "# - crew: the description override of 'ask'" in text
