"""Export, import, duplicate and the starting points: /api/agents/<slug>/export,
/api/agents/import, /api/agents/<slug>/duplicate, /api/agent-templates/."""

from __future__ import annotations

import json

import pytest

from agents_core.models import Agent, Source
from agents_core.runtime.storage.messages import instruction_messages
from tests.agents_core.factories import AgentFactory, AgentToolFactory, SubAgentFactory
from tests.studio.db_state import db_fingerprint
from tests.tools_app.factories import ToolFactory
from tools_app.models import Tool

pytestmark = pytest.mark.django_db

PYTHON_CODE = "def run(input):\n    return {'text': input['text'].upper()}\n"


@pytest.fixture
def travel(owner):
    """A studio agent with a studio Python tool, a code tool and a studio sub-agent."""
    shout = ToolFactory(
        name="shout",
        kind="python",
        owner=owner,
        config={"code": PYTHON_CODE},
        output_schema={"type": "object"},
    )
    helper = AgentFactory(slug="trip-helper", name="Trip helper", owner=owner, instructions=["A."])
    AgentToolFactory(agent=helper, tool=shout, key="loud", requires_approval=True)
    agent = AgentFactory(
        slug="trip",
        name="Trip",
        owner=owner,
        instructions={"role": "system", "content": "Plan trips."},
        default_options={"maxSteps": 4, "temperature": 0.2},
        metadata={"team": "red"},
    )
    AgentToolFactory(agent=agent, tool=Tool.objects.get(name="ask_user"), key="ask")
    AgentToolFactory(agent=agent, tool=shout, key="shout", description_override="Shout it.")
    SubAgentFactory(parent=agent, child=helper, key="helper")
    return agent


def _exported(api, slug: str) -> dict:
    response = api.get(f"/api/agents/{slug}/export?format=json")
    assert response.status_code == 200, response.content
    return response.json()


def test_the_export_holds_the_agent_its_studio_sub_agents_and_studio_tools(api, travel):
    document = _exported(api, "trip")

    assert document["agent"] == "trip"
    assert [a["slug"] for a in document["agents"]] == ["trip", "trip-helper"]
    assert [t["name"] for t in document["tools"]] == ["shout"]
    root = document["agents"][0]
    assert root["tools"] == [
        {"key": "ask", "tool": "ask_user", "description_override": "", "requires_approval": False},
        {
            "key": "shout",
            "tool": "shout",
            "description_override": "Shout it.",
            "requires_approval": False,
        },
    ]
    assert root["subagents"] == [
        {"key": "helper", "agent": "trip-helper", "description_override": ""}
    ]
    assert "credentials" not in document["tools"][0]


def test_importing_an_export_under_new_names_reproduces_the_agent(api, travel):
    document = _exported(api, "trip")
    renames = {
        "agents": {"trip": "trip-2", "trip-helper": "trip-helper-2"},
        "tools": {"shout": "shout_2"},
    }

    response = api.post(
        "/api/agents/import", {"document": document, "renames": renames}, format="json"
    )

    assert response.status_code == 201, response.content
    copy = _exported(api, "trip-2")
    expected = document
    for entry in expected["agents"]:
        entry["slug"] = renames["agents"][entry["slug"]]
        for binding in entry["subagents"]:
            binding["agent"] = renames["agents"][binding["agent"]]
        for binding in entry["tools"]:
            binding["tool"] = renames["tools"].get(binding["tool"], binding["tool"])
    expected["tools"][0]["name"] = "shout_2"
    expected["agent"] = "trip-2"
    assert copy == expected
    assert Agent.objects.get(slug="trip-2").owner.username == "owner"


def test_a_name_clash_is_refused_with_a_free_name_to_suggest_and_nothing_written(api, travel):
    document = _exported(api, "trip")
    before = db_fingerprint()

    response = api.post("/api/agents/import", {"document": document}, format="json")

    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "name_clash"
    assert {(c["kind"], c["name"], c["suggestion"]) for c in body["clashes"]} == {
        ("agent", "trip", "trip-2"),
        ("agent", "trip-helper", "trip-helper-2"),
        ("tool", "shout", "shout_2"),
    }
    assert body["clashes"][0]["path"] == "$.document.agents[0].slug"
    assert db_fingerprint() == before


def test_a_dry_run_says_what_it_would_create_and_writes_nothing(api, travel):
    document = _exported(api, "trip")
    renames = {"agents": {"trip": "t2", "trip-helper": "h2"}, "tools": {"shout": "s2"}}
    before = db_fingerprint()

    response = api.post(
        "/api/agents/import",
        {"document": document, "renames": renames, "dry_run": True},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert response.json() == {
        "agent": "t2",
        "agents": [
            {"slug": "t2", "name": "Trip", "tools": ["ask", "shout"], "subagents": ["helper"]},
            {"slug": "h2", "name": "Trip helper", "tools": ["loud"], "subagents": []},
        ],
        "tools": ["s2"],
    }
    assert db_fingerprint() == before


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d["agents"][0].update(model="no-slash"), "$.document.agents[0].model"),
        (lambda d: d["agents"][1].update(instructions=5), "$.document.agents[1].instructions"),
        (
            lambda d: d["agents"][0]["default_options"].update(maxSteps=0),
            "$.document.agents[0].default_options",
        ),
        (
            lambda d: d["tools"][0].update(input_schema={"type": "strng"}),
            "$.document.tools[0].input_schema",
        ),
        (
            lambda d: d["agents"][0]["tools"][0].update(tool="nope"),
            "$.document.agents[0].tools[0].tool",
        ),
        (
            lambda d: d["agents"][0]["tools"][1].update(key="bad key"),
            "$.document.agents[0].tools[1].key",
        ),
        (
            lambda d: d["agents"][1]["subagents"].append({"key": "up", "agent": "c2"}),
            "$.document.agents[1].subagents[0].agent",
        ),
        (lambda d: d.update(format="other"), "$.document.format"),
        (lambda d: d.update(agents=[]), "$.document.agents"),
        (lambda d: d["agents"][0].update(tools="x"), "$.document.agents[0].tools"),
    ],
)
def test_a_bad_document_is_refused_at_its_json_path_and_nothing_written(api, travel, change, path):
    document = _exported(api, "trip")
    change(document)
    renames = {"agents": {"trip": "c2", "trip-helper": "h2"}, "tools": {"shout": "s2"}}
    before = db_fingerprint()

    response = api.post(
        "/api/agents/import", {"document": document, "renames": renames}, format="json"
    )

    assert response.status_code == 400, response.content
    assert path in [error["path"] for error in response.json()["errors"]]
    assert db_fingerprint() == before


def test_an_outsider_cannot_export_or_duplicate_anothers_agent(outsider_api, travel):
    assert outsider_api.get("/api/agents/trip/export?format=json").status_code == 404
    assert outsider_api.get("/api/agents/trip/export?format=python").status_code == 404
    response = outsider_api.post(
        "/api/agents/trip/duplicate", {"slug": "mine", "name": "M"}, format="json"
    )
    assert response.status_code == 404


def test_importing_needs_a_signed_in_user(anon_client):
    response = anon_client.post("/api/agents/import", {"document": {}}, format="json")
    assert response.status_code in (401, 403)


def test_an_outsider_cannot_bind_anothers_tool_by_importing(outsider_api, travel):
    document = {
        "format": "agent-studio.agent",
        "version": 1,
        "agent": "thief",
        "agents": [{"slug": "thief", "name": "Thief", "tools": [{"tool": "shout"}]}],
    }
    response = outsider_api.post("/api/agents/import", {"document": document}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "$.document.agents[0].tools[0].tool"
    assert not Agent.objects.filter(slug="thief").exists()


def test_a_user_duplicates_a_code_agent_into_a_studio_agent_they_own(api, owner):
    code = Agent.objects.get(slug="weather-assistant")

    response = api.post(
        "/api/agents/weather-assistant/duplicate",
        {"slug": "my-weather", "name": "Mine"},
        format="json",
    )

    assert response.status_code == 201, response.content
    copy = Agent.objects.get(slug="my-weather")
    assert (copy.source, copy.owner, copy.name) == (Source.STUDIO, owner, "Mine")
    assert copy.instructions == code.instructions
    assert [(b.key, b.tool.name) for b in copy.tool_bindings.all()] == [
        (b.key, b.tool.name) for b in code.tool_bindings.all()
    ]
    assert copy.default_options == code.default_options


def test_duplicating_onto_a_taken_slug_is_a_field_error(api, travel):
    response = api.post(
        "/api/agents/trip/duplicate", {"slug": "trip-helper", "name": "X"}, format="json"
    )
    assert response.status_code == 400
    assert "slug" in response.json()


def test_every_starting_point_imports_for_a_new_user(api):
    templates = api.get("/api/agent-templates/").json()

    assert {t["id"] for t in templates} >= {"blank", "planner"}
    for index, template in enumerate(templates):
        document = template["document"]
        document["agents"][0].update(slug=f"from-template-{index}", name=template["name"])
        response = api.post("/api/agents/import", {"document": document}, format="json")
        assert response.status_code == 201, (template["id"], response.content)
    planner = Agent.objects.get(
        slug=f"from-template-{[t['id'] for t in templates].index('planner')}"
    )
    assert {"ask_user", "submit_plan", "task_write"} <= {
        b.tool.name for b in planner.tool_bindings.all()
    }


def test_an_unknown_export_format_is_a_clear_400(api, travel):
    response = api.get("/api/agents/trip/export?format=yaml")
    assert response.status_code == 400
    assert "json or python" in response.json()["detail"]


def test_the_instructions_preview_is_what_the_run_sends(api, travel):
    travel.model = "anthropic/claude-sonnet-4-5"  # the provider whose options apply
    travel.save()
    instructions = [
        {"role": "system", "content": "Plan."},
        {
            "role": "system",
            "content": "Cached.",
            "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}},
        },
    ]
    response = api.post(
        "/api/agents/trip/instructions-preview", {"instructions": instructions}, format="json"
    )
    assert response.status_code == 200
    messages = response.json()["messages"]
    assert messages == instruction_messages(instructions, travel.model)  # the run's function
    assert messages[0] == {"role": "system", "content": "Plan."}
    assert "ephemeral" in json.dumps(messages[1])  # the cache hint reaches the model
    bad = api.post("/api/agents/trip/instructions-preview", {"instructions": 5}, format="json")
    assert bad.status_code == 400
    assert "instructions" in bad.json()


def test_an_outsider_gets_no_preview_of_anothers_agent(outsider_api, travel):
    response = outsider_api.post(
        "/api/agents/trip/instructions-preview", {"instructions": "x"}, format="json"
    )
    assert response.status_code == 404
