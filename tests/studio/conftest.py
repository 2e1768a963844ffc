"""Rows the studio's page-wide tests (headers, CSP in Chromium) share."""

from __future__ import annotations

import pytest

from agents_core.definitions import Agent as AgentDefinition
from agents_core.models import Agent
from agents_core.registry import definitions_sync, discover
from tools_app.models import Tool


@pytest.fixture
def studio_rows(owner):
    """The demo agents and tools, a studio agent and a studio tool of `owner`, who is staff
    (the admin's pages) and a superuser (the editor's)."""
    registry = discover()
    # A code agent whose editor policy opens nothing: its admin page is all read-only.
    registry.add_agent(
        AgentDefinition(
            id="locked-probe", name="Locked probe", model="studio/scripted", editor=False
        )
    )
    definitions_sync(registry=registry)
    owner.is_staff = owner.is_superuser = True
    owner.save(update_fields=["is_staff", "is_superuser"])
    agent = Agent.objects.create(
        slug="headers-probe", name="Headers probe", model="studio/scripted", owner=owner
    )
    tool = Tool.objects.create(
        name="headers_probe",
        description="A studio tool.",
        kind="http",
        owner=owner,
        input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
        config={"url": "https://example.org/search", "method": "GET"},
    )
    return {"agent": agent, "tool": tool}
