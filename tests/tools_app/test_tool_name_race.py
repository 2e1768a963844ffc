"""Two requests of one user (two tabs) create a tool with the same name at the same
moment. Names are unique per owner: another user's tools never race with these."""

from __future__ import annotations

import pytest

from tests.agents_core.race import lose_the_race
from tests.tools_app.factories import ToolFactory
from tools_app.models import Tool


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("tool_types")
def test_the_request_that_loses_the_race_gets_the_same_friendly_error(api, owner):
    response = lose_the_race(
        insert_rival=lambda: ToolFactory(name="get_weather", owner=owner, description="tab"),
        request=lambda: api.post(
            "/api/tools/", {"name": "get_weather", "kind": "test_echo"}, format="json"
        ),
    )

    assert response.status_code == 400
    assert response.json() == {
        "name": ["A tool named 'get_weather' already exists; pick another name."]
    }
    assert Tool.objects.get(name="get_weather").description == "tab"
