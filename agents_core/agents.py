"""Demo agents that work offline with the scripted model."""

from __future__ import annotations

from django.conf import settings

from agents_core.definitions import Agent

if settings.STUDIO_LOAD_DEMO:
    from tools_app.demo import unit_convert, weather_lookup

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
