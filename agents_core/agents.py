"""Demo agents that work offline with the scripted model."""

from __future__ import annotations

from django.conf import settings

from agents_core.definitions import Agent

if settings.STUDIO_LOAD_DEMO:
    from tools_app.demo import unit_convert, weather_lookup
    from tools_app.types.system.tasks import task_check, task_complete, task_update, task_write
    from tools_app.types.system.tools import ask_user, submit_plan, web_fetch, web_search

    weather_assistant = Agent(
        id="weather-assistant",
        name="Weather assistant",
        description="Answers weather questions and converts units.",
        instructions=[
            "You are a concise weather assistant.",
            "Use weather_lookup for current conditions and unit_convert for conversions.",
        ],
        tools={"weather_lookup": weather_lookup, "unit_convert": unit_convert},
        default_options={"maxSteps": 5},
        editor={"instructions": True, "tools": {"description": True}},
    )

    researcher = Agent(
        id="researcher",
        name="Researcher",
        description="Looks facts up with its tools and reports them back.",
        instructions="You research questions with your tools and answer in one paragraph.",
        tools={"weather_lookup": weather_lookup},
    )

    supervisor = Agent(
        id="supervisor",
        name="Supervisor",
        description="Delegates research to a sub-agent and converts units itself.",
        instructions={
            "role": "system",
            "content": "You coordinate work: delegate research to agent-researcher.",
        },
        tools={"unit_convert": unit_convert},
        agents={"researcher": researcher},
        default_options={"maxSteps": 6},
    )

    # The built-in tools that suspend a run or keep state, on one agent: a question, a plan
    # to approve, a task list (README: the tour's chat examples run on it).
    planner = Agent(
        id="task-planner",
        name="Planner",
        description="Asks what it needs, proposes a plan for approval, tracks it as tasks.",
        instructions=[
            "Ask the user with ask_user when something you need is missing.",
            "Propose a plan with submit_plan and wait for approval before acting on it.",
            "Track approved work with task_write, task_update, task_complete and task_check.",
            "Look up facts with weather_lookup, web_search and web_fetch, or ask agent-researcher.",
        ],
        tools={
            "ask_user": ask_user,
            "submit_plan": submit_plan,
            "task_write": task_write,
            "task_update": task_update,
            "task_complete": task_complete,
            "task_check": task_check,
            "weather_lookup": weather_lookup,
            "web_search": web_search,
            "web_fetch": web_fetch,
        },
        agents={"researcher": researcher},
        default_options={"maxSteps": 8},
    )
