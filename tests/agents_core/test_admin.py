"""The Django admin for agents_core: every model registered and usable."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from agents_core.models import Agent, Run, SubAgent, Thread, ToolCall
from tests.agents_core.factories import AgentFactory, AgentToolFactory, SubAgentFactory
from tests.tools_app.factories import ToolFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


@pytest.fixture
def content(owner):
    agent = AgentFactory(slug="planner", name="Planner", owner=owner)
    AgentToolFactory(agent=agent, key="lookup_key", tool=ToolFactory(name="lookup", owner=owner))
    SubAgentFactory(parent=agent, key="helper_key", child=AgentFactory(slug="helper", owner=owner))
    thread = Thread.objects.create(
        agent=agent, owner=owner, resource_id=str(owner.pk), title="Trip"
    )
    run = Run.objects.create(thread=thread, agent=agent, status="completed")
    ToolCall.objects.create(run=run, call_id="call_1", tool_name="lookup_key", status="completed")
    return agent


@pytest.mark.parametrize("app_label", ["agents_core", "tools_app"])
def test_every_model_has_an_admin(app_label):
    models = set(apps.get_app_config(app_label).get_models())

    missing = {model.__name__ for model in models if not admin.site.is_registered(model)}

    assert missing == set()


@pytest.mark.parametrize(
    "model",
    [m for label in ("agents_core", "tools_app") for m in apps.get_app_config(label).get_models()],
    ids=lambda model: model.__name__,
)
def test_every_changelist_renders_with_a_search_and_its_filters(staff, content, model):
    model_admin = admin.site._registry[model]
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")

    response = staff.get(url, {"q": "planner"})

    assert response.status_code == 200
    assert model_admin.search_fields, f"{model.__name__} has no search"
    assert model_admin.list_filter, f"{model.__name__} has no filters"


def test_the_agent_page_shows_its_tool_and_sub_agent_bindings(staff, content):
    response = staff.get(reverse("admin:agents_core_agent_change", args=[content.pk]))

    assert response.status_code == 200
    body = response.content.decode()
    assert "lookup_key" in body and "helper_key" in body


def test_the_agent_list_finds_an_agent_by_name_and_filters_by_source(staff, content):
    url = reverse("admin:agents_core_agent_changelist")

    found = staff.get(url, {"q": "Planner"}).content.decode()
    studio_only = staff.get(url, {"source__exact": "studio"}).content.decode()
    code_only = staff.get(url, {"source__exact": "code"}).content.decode()

    # The studio agent's slug as its row's link (the demo code agent `task-planner` is
    # also named Planner, so the bare word is not enough).
    row = ">planner</a>"
    assert row in found
    assert row in studio_only
    assert row not in code_only


def test_an_agent_added_in_the_admin_is_validated_like_the_api(staff):
    response = staff.post(
        reverse("admin:agents_core_agent_add"),
        {
            "slug": "Bad Slug",
            "name": "X",
            "model": "no-provider",
            "instructions": "42",
            "default_options": '{"maxSteps": 0}',
            "metadata": "{}",
            "notification_policy": "{}",
            "tool_bindings-TOTAL_FORMS": "0",
            "tool_bindings-INITIAL_FORMS": "0",
            "subagent_bindings-TOTAL_FORMS": "0",
            "subagent_bindings-INITIAL_FORMS": "0",
        },
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert {"slug", "model", "instructions", "default_options"} <= set(errors)
    assert not Agent.objects.filter(name="X").exists()


def test_an_agent_added_in_the_admin_belongs_to_whoever_added_it(staff, admin_user):
    response = staff.post(
        reverse("admin:agents_core_agent_add"),
        {
            "slug": "admin-made",
            "name": "Admin made",
            "model": "studio/scripted",
            "instructions": '"Be brief."',
            "default_options": "{}",
            "metadata": "{}",
            "notification_policy": "{}",
            "tool_bindings-TOTAL_FORMS": "0",
            "tool_bindings-INITIAL_FORMS": "0",
            "subagent_bindings-TOTAL_FORMS": "0",
            "subagent_bindings-INITIAL_FORMS": "0",
        },
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
    agent = Agent.objects.get(slug="admin-made")
    assert (agent.owner, agent.source, agent.instructions) == (admin_user, "studio", "Be brief.")


def test_a_sub_agent_binding_that_closes_a_cycle_is_refused_in_the_admin(staff, content):
    helper = Agent.objects.get(slug="helper")

    response = staff.post(
        reverse("admin:agents_core_subagent_add"),
        {"parent": helper.pk, "child": content.pk, "key": "back", "position": 0},
    )

    assert response.status_code == 200
    assert "cycle" in str(response.context["adminform"].form.errors["child"])
    assert not SubAgent.objects.filter(parent=helper).exists()


def test_code_owned_bindings_are_view_only_in_the_admin(staff):
    agent = AgentFactory(slug="shared", code=True)
    binding = AgentToolFactory(agent=agent, key="coded", tool=ToolFactory(code=True), source="code")

    page = staff.get(reverse("admin:agents_core_agenttool_change", args=[binding.pk]))
    delete = staff.post(
        reverse("admin:agents_core_agenttool_delete", args=[binding.pk]), {"post": "yes"}
    )

    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    assert delete.status_code == 403
    assert agent.tool_bindings.count() == 1


def test_the_admin_needs_a_staff_login(client, owner):
    client.force_login(owner)

    response = client.get(reverse("admin:agents_core_agent_changelist"))

    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_a_code_agents_row_is_read_only_in_the_admin(staff):
    agent = AgentFactory(slug="shared", code=True, name="From code")

    page = staff.get(reverse("admin:agents_core_agent_change", args=[agent.pk]))

    form = page.context["adminform"].form
    assert not {"name", "model", "instructions", "owner"} & set(form.fields)
    assert "From code" in page.content.decode()
