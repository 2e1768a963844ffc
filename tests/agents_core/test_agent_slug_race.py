"""Two requests of one user (two tabs) create an agent with the same slug at the same
moment. Slugs are unique per owner: another user's agents never race with these."""

from __future__ import annotations

import pytest

from agents_core.models import Agent
from tests.agents_core.factories import AgentFactory
from tests.agents_core.race import lose_the_race


@pytest.mark.django_db(transaction=True)
def test_the_request_that_loses_the_race_gets_the_same_friendly_error(api, owner):
    response = lose_the_race(
        insert_rival=lambda: AgentFactory(slug="trip-planner", owner=owner, name="First tab"),
        request=lambda: api.post(
            "/api/agents/", {"slug": "trip-planner", "name": "Trip planner"}, format="json"
        ),
    )

    assert response.status_code == 400
    assert response.json() == {
        "slug": ["An agent with the slug 'trip-planner' already exists; pick another one."]
    }
    assert Agent.objects.get(slug="trip-planner").name == "First tab"
