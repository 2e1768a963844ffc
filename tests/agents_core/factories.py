"""factory_boy factories for agents_core rows."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model
from factory.django import DjangoModelFactory

from agents_core.models import Agent, AgentTool, Source, SubAgent


class UserFactory(DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password("password")


class AgentFactory(DjangoModelFactory):
    class Meta:
        model = Agent

    slug = factory.Sequence(lambda n: f"agent-{n}")
    name = factory.Sequence(lambda n: f"Agent {n}")
    description = "Helps with tests."
    model = "studio/scripted"
    instructions = "Be brief."
    source = Source.STUDIO
    owner = factory.SubFactory(UserFactory)

    class Params:
        # An agent synced from code: shared by everyone, owned by nobody.
        code = factory.Trait(source=Source.CODE, owner=None)


class AgentToolFactory(DjangoModelFactory):
    class Meta:
        model = AgentTool

    agent = factory.SubFactory(AgentFactory)
    tool = factory.SubFactory("tests.tools_app.factories.ToolFactory")
    key = factory.LazyAttribute(lambda binding: binding.tool.name)
    source = Source.STUDIO
    position = factory.Sequence(int)


class SubAgentFactory(DjangoModelFactory):
    class Meta:
        model = SubAgent

    parent = factory.SubFactory(AgentFactory)
    child = factory.SubFactory(AgentFactory)
    key = factory.LazyAttribute(lambda binding: binding.child.slug)
    source = Source.STUDIO
    position = factory.Sequence(int)
