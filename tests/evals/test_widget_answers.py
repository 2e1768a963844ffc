"""An agent test answers a widget tool's form by the suspension's kind (`widget`), with
the values the chat would send; the run resumes with them as the tool's output."""

from __future__ import annotations

import json

import pytest

from agents_core.models import Agent, AgentTool, ToolCall
from evals.models import TestCase
from evals.runner import case_play
from tests.tools_app.engine.test_widget_type import FORM
from tools_app.models import Tool
from tools_app.types.widget.schemas import WIDGET_SCHEMAS

pytestmark = pytest.mark.django_db(transaction=True)
VALUES = {"guests": 2, "arrival": "2026-05-01"}


def test_a_case_answers_a_widget_form_by_kind(owner, synced):
    tool = Tool.objects.create(
        name="book_form",
        kind="widget",
        owner=owner,
        input_schema=WIDGET_SCHEMAS["form"],
        config={"widget": "form"},
        timeout_seconds=3600,
    )
    agent = Agent.objects.create(
        slug="booker", name="Booker", model="studio/scripted", owner=owner, source="studio"
    )
    AgentTool.objects.create(agent=agent, tool=tool, key="book_form", position=0)
    spec = {
        "turns": [
            {
                "message": f"use book_form with {json.dumps(FORM)}",
                "answers": [{"kind": "widget", "payload": {"values": VALUES}}],
                "expect": [{"type": "tool_called", "tool": "book_form"}, {"type": "no_error"}],
            }
        ]
    }
    case = TestCase.objects.create(agent=agent, owner=owner, name="form", spec=spec)

    outcome = case_play(case=case, user=owner)

    assert outcome.passed, outcome.error
    assert ToolCall.objects.get(tool_name="book_form").output == {"values": VALUES}
