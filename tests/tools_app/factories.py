"""factory_boy factories for tools_app rows."""

from __future__ import annotations

import factory
from factory.django import DjangoModelFactory

from agents_core.models import Source
from tests.agents_core.factories import UserFactory
from tools_app.models import Tool


class ToolFactory(DjangoModelFactory):
    class Meta:
        model = Tool

    name = factory.Sequence(lambda n: f"tool_{n}")
    description = "Does one thing for tests."
    kind = "test_echo"
    input_schema = factory.LazyFunction(
        lambda: {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    )
    output_schema = None
    config = factory.LazyFunction(dict)
    source = Source.STUDIO
    owner = factory.SubFactory(UserFactory)

    class Params:
        # A tool synced from code: shared by everyone, owned by nobody.
        code = factory.Trait(source=Source.CODE, owner=None, kind="code")
