"""Users, agents (code and studio), tools with encrypted credentials, their bindings, and
the editor's overrides, revisions and locks, as 0.1.0 stored them."""

from __future__ import annotations

from typing import Any

from tests.upgrade.ledger import Ledger, Sealed
from tests.upgrade.rows_0_1_0.times import at


def write_studio(ledger: Ledger) -> dict[str, Any]:
    """Users, agents, tools and their bindings."""
    add = ledger.add
    ada = add("auth.User", username="ada", email="ada@example.com", password="!ada-unusable")
    grace = add("auth.User", username="grace", email="grace@example.com", password="!g")
    admin = add("auth.User", username="root", is_staff=True, is_superuser=True, password="!r")

    # Agents: a code agent with an editor policy, a studio one, one gone from code.
    weather = add(
        "agents_core.Agent",
        slug="weather",
        name="Weather",
        description="Answers questions about the weather.",
        model="openai/gpt-4o-mini",
        instructions=["You report the weather.", "Use metric units."],
        metadata={"team": "support", "tier": 2, "tags": ["demo", "code"]},
        default_options={"maxSteps": 5, "temperature": 0.2, "toolChoice": "auto"},
        source="code",
        editor_policy={"instructions": True, "tools": {"descriptions": True}},
        notification_policy={"low": "digest", "urgent": "now"},
        code_hash="a" * 64,
        version=3,
    )
    trip = add(
        "agents_core.Agent",
        slug="trip-planner",
        name="Trip planner",
        model="anthropic/claude-haiku-4-5",
        instructions={
            "role": "system",
            "content": "Plan trips day by day.",
            "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}},
        },
        metadata={"color": "teal", "starred": True},
        source="studio",
        owner=ada,
        version=2,
    )
    add(
        "agents_core.Agent",
        slug="legacy",
        name="Legacy",
        model="studio/scripted",
        instructions="Old.",
        source="code",
        gone_at=at(1),
    )

    # Tools: a code tool, a studio HTTP tool with encrypted credentials.
    get_weather = add(
        "tools_app.Tool",
        name="get_weather",
        description="Today's weather in a city.",
        kind="code",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
        output_schema={"type": "object", "properties": {"celsius": {"type": "number"}}},
        execution_mode="sync",
        timeout_seconds=10.0,
        source="code",
        code_hash="b" * 64,
    )
    lookup = add(
        "tools_app.Tool",
        name="lookup_order",
        description="Looks an order up by its id.",
        kind="http",
        input_schema={"type": "object", "required": ["id"]},
        execution_mode="async",
        timeout_seconds=45.5,
        config={"method": "GET", "url": "https://shop.example.com/orders/{id}"},
        credentials_encrypted=Sealed({"api_key": "shop-credential-1234"}),
        model_output={"transform": "pick", "fields": ["status"]},
        source="studio",
        owner=ada,
    )
    source = add(
        "tools_app.ToolSource",
        kind="openapi",
        name="Shop API",
        owner=ada,
        url="https://shop.example.com/openapi.json",
        document={"openapi": "3.1.0", "paths": {"/orders/{id}": {}}},
        config={"auth": {"type": "header", "name": "X-Shop"}},
        credentials_encrypted=Sealed({"X-Shop": "shop-header-5678"}),
        imported_at=at(2),
    )
    add(
        "tools_app.OAuthToken",
        key=f"source:{source.pk}:ada",
        source=source,
        user=ada,
        digest="c" * 64,
        token_encrypted=Sealed({"access_token": "oauth-access-1", "refresh_token": "r-2"}),
        expires_at=at(60),
    )
    add(
        "tools_app.WebSearchSetting",
        owner=ada,
        provider="brave",
        secret_encrypted=Sealed({"api_key": "brave-credential-9012"}),
        key_hint="bra…9012",
    )
    add("agents_core.AgentTool", agent=weather, tool=get_weather, key="weather", source="code")
    add(
        "agents_core.AgentTool",
        agent=trip,
        tool=lookup,
        key="order",
        description_override="Look up one order by id.",
        requires_approval=True,
        position=1,
    )
    add(
        "agents_core.SubAgent",
        parent=trip,
        child=weather,
        key="forecaster",
        description_override="Ask for the forecast.",
    )
    return {
        "ada": ada,
        "grace": grace,
        "admin": admin,
        "weather": weather,
        "trip": trip,
        "lookup": lookup,
    }


def write_editor(ledger: Ledger, *, weather, grace, admin) -> None:
    add = ledger.add
    add(
        "agents_core.EditorOverride",
        agent=weather,
        instructions=["You report the weather.", "Answer in one sentence."],
        tool_descriptions={"weather": "Today's weather, in Celsius."},
        tools_removed=["radar"],
        tools_added={"order": "lookup_order"},
        updated_by=grace,
    )
    first = add(
        "agents_core.Revision",
        agent=weather,
        version=2,
        kind="save",
        author=grace,
        fields=["instructions"],
        before={"instructions": None},
        after={"instructions": ["You report the weather.", "Answer in one sentence."]},
        stripped=["model"],
        code_values={"instructions": ["You report the weather.", "Use metric units."]},
    )
    add(
        "agents_core.Revision",
        agent=weather,
        version=3,
        kind="restore",
        author=grace,
        fields=["tool_descriptions"],
        after={"tool_descriptions": {"weather": "Today's weather, in Celsius."}},
        restored_from=first,
    )
    add(
        "agents_core.EditLock",
        agent=weather,
        holder=admin,
        acquired_at=at(5),
        expires_at=at(10),
        ended_at=at(6),
        ended_by=grace,
        end_reason="broken",
    )
    add(
        "agents_core.EditLock",
        agent=weather,
        holder=grace,
        acquired_at=at(6),
        expires_at=at(11),
        renewed_at=at(8),
        renew_count=2,
    )
