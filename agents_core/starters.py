"""Starting points for a new agent (the "From a template" choice of /agents/new/).

Each is an export document (agents_core.services.agent_io) of one agent that binds only
built-in tools, so it imports for every user; the page swaps in the slug and name the
user picks.
"""

from __future__ import annotations

from typing import Any

from agents_core.services.agent_io import FORMAT, VERSION

TASK_TOOLS = ("task_write", "task_update", "task_complete", "task_check")


def _document(slug: str, name: str, tools: tuple[str, ...], **fields: Any) -> dict[str, Any]:
    agent = {
        "slug": slug,
        "name": name,
        "description": "",
        "instructions": "",
        "metadata": {},
        "default_options": {"maxSteps": 8},
        "notification_policy": {},
        **fields,
        "tools": [
            {"key": tool, "tool": tool, "description_override": "", "requires_approval": False}
            for tool in tools
        ],
        "subagents": [],
    }
    return {"format": FORMAT, "version": VERSION, "agent": slug, "agents": [agent], "tools": []}


STARTERS: list[dict[str, Any]] = [
    {
        "id": "blank",
        "name": "Blank",
        "description": "No instructions and no tools: start from nothing.",
        "document": _document("my-agent", "My agent", ()),
    },
    {
        "id": "planner",
        "name": "Planner",
        "description": "Asks what it needs, proposes a plan for approval, then works "
        "through a task list (ask_user, submit_plan and the task tools).",
        "document": _document(
            "my-planner",
            "Planner",
            ("ask_user", "submit_plan", *TASK_TOOLS),
            description="Plans work with the user and tracks it as tasks.",
            instructions=[
                "Ask the user with ask_user when something you need is missing.",
                "Propose your plan with submit_plan and wait for approval.",
                "Track the approved plan with task_write, task_update and task_complete; "
                "keep one task in progress at a time.",
            ],
        ),
    },
    {
        "id": "web-researcher",
        "name": "Web researcher",
        "description": "Searches and reads web pages, then answers with sources "
        "(web_search, web_fetch).",
        "document": _document(
            "my-researcher",
            "Web researcher",
            ("web_search", "web_fetch"),
            description="Answers questions from the web, citing its sources.",
            instructions="Search with web_search, read the best pages with web_fetch, and "
            "answer in one paragraph that names the pages you used.",
        ),
    },
]
