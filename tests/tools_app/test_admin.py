"""The Django admin for tools: validation like the API, credentials never shown."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from tests.tools_app.factories import ToolFactory
from tools_app.crypto import credentials_set
from tools_app.models import Tool

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("tool_types")]

SECRET = "admin-must-not-show-this"


@pytest.fixture
def staff(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


def tool_form(**overrides):
    data = {
        "name": "admin_tool",
        "description": "Made in the admin.",
        "kind": "http",
        "input_schema": json.dumps({"type": "object", "properties": {}}),
        "output_schema": "null",
        "execution_mode": "sync",
        "timeout_seconds": "30",
        "config": json.dumps({"url": "https://api.example.com/items", "method": "GET"}),
        "model_output": "{}",
    }
    data.update(overrides)
    return data


def test_the_tool_page_shows_whether_credentials_are_set_but_never_them(staff, owner):
    tool = ToolFactory(name="private_api", owner=owner)
    credentials_set(tool, {"token": SECRET})

    page = staff.get(reverse("admin:tools_app_tool_change", args=[tool.pk])).content.decode()
    listing = staff.get(reverse("admin:tools_app_tool_changelist")).content.decode()

    assert "Credentials" in page or "credentials" in page
    for body in (page, listing):
        assert SECRET not in body
        assert tool.credentials_encrypted not in body
    assert 'alt="True"' in page  # the boolean icon of has_credentials


def test_a_tool_added_in_the_admin_is_validated_like_the_api(staff):
    response = staff.post(
        reverse("admin:tools_app_tool_add"),
        tool_form(
            name="Bad Name",
            input_schema=json.dumps({"type": "object", "properties": {"a": {"type": "strng"}}}),
            config=json.dumps({"method": "GET"}),
        ),
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "snake_case" in errors["name"][0]
    assert errors["input_schema"][0].startswith("$.properties.a.type: ")
    assert "'url' is a required property" in errors["config"][0]
    assert not Tool.objects.filter(description="Made in the admin.").exists()


def test_a_tool_added_in_the_admin_belongs_to_whoever_added_it(staff, admin_user):
    response = staff.post(reverse("admin:tools_app_tool_add"), tool_form())

    assert response.status_code == 302
    tool = Tool.objects.get(name="admin_tool")
    assert (tool.owner, tool.source) == (admin_user, "studio")


def test_a_code_tool_is_view_only_in_the_admin(staff):
    tool = ToolFactory(name="shared_code_tool", code=True, description="From code.")
    url = reverse("admin:tools_app_tool_change", args=[tool.pk])

    page = staff.get(url)
    post = staff.post(url, tool_form(name="shared_code_tool", description="Changed."))

    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    assert post.status_code == 403
    assert Tool.objects.get(pk=tool.pk).description == "From code."


def test_the_tool_list_filters_by_kind_and_searches_by_name(staff, owner):
    ToolFactory(name="findable_tool", owner=owner)
    url = reverse("admin:tools_app_tool_changelist")

    assert "findable_tool" in staff.get(url, {"q": "findable"}).content.decode()
    assert "findable_tool" in staff.get(url, {"kind__exact": "test_echo"}).content.decode()
    assert "findable_tool" not in staff.get(url, {"kind__exact": "http"}).content.decode()
