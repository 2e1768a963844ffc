"""The tool panel's pages: signed-in only, and a tool page only for a tool one may see."""

from __future__ import annotations

import pytest
from django.test import Client

from tools_app.models import Tool

pytestmark = pytest.mark.django_db


@pytest.fixture
def client_for(db):
    def make(user) -> Client:
        client = Client()
        client.force_login(user)
        return client

    return make


def test_the_panel_pages_render_for_a_signed_in_user(client_for, owner):
    client = client_for(owner)
    for path in ("/tools/", "/tools/new/", "/tools/unit_convert/", "/tools/unit_convert/edit/"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert b'id="tools-app"' in response.content
    assert b'id="nav-tools"' in client.get("/").content


def test_an_anonymous_visitor_is_sent_to_the_login_page():
    response = Client().get("/tools/unit_convert/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_another_users_studio_tool_is_not_found(client_for, owner, outsider):
    Tool.objects.create(
        name="private_tool", kind="python", owner=outsider, config={"code": "return 1"}
    )
    assert client_for(owner).get("/tools/private_tool/").status_code == 404
    assert client_for(outsider).get("/tools/private_tool/").status_code == 200
    assert client_for(owner).get("/tools/no_such_tool/").status_code == 404
