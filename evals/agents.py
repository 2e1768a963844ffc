"""The demo agent of the demo test suite (evals/demo/travel_desk.json): it looks the
weather up, converts units and asks the user when a city is missing, with the offline
model, so its suite runs with no key."""

from __future__ import annotations

from django.conf import settings

from agents_core.definitions import Agent

if settings.STUDIO_LOAD_DEMO:
    from tools_app.demo import unit_convert, weather_lookup
    from tools_app.types.system.tools import ask_user

    travel_desk = Agent(
        id="travel-desk",
        name="Travel desk",
        description="Weather and unit conversions for travellers; asks when a city is missing.",
        instructions=[
            "You help travellers: weather_lookup for the weather, unit_convert for units.",
            "When the city is not given, ask the user with ask_user.",
        ],
        tools={
            "weather_lookup": weather_lookup,
            "unit_convert": unit_convert,
            "ask_user": ask_user,
        },
        default_options={"maxSteps": 4},
        editor={"instructions": True},
    )
