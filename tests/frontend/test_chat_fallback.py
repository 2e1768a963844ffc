"""The chat's run footer names the model that answered: here the agent's own model is rate
limited (a local OpenAI-protocol server answering 429) and its fallback, the offline
model, answers."""

from __future__ import annotations

import pytest

from agents_core.models import Agent, Run
from providers.services import credential_create
from tests.conftest import daphne_process
from tests.frontend.test_chat import open_chat, send, wait_idle
from tests.model_servers import Reply

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]


def test_the_footer_shows_the_fallback_that_answered(browser, owner, openai_server):
    openai_server.script = [Reply(status=429)]
    credential_create(owner=owner, provider="openai", api_key="sk-good", api_base=openai_server.url)
    Agent.objects.create(
        slug="falls",
        name="Falls",
        model="openai/gpt-4o-mini",
        owner=owner,
        source="studio",
        default_options={"fallbacks": ["studio/scripted"]},
    )
    env = {"STUDIO_MODEL_API_BASES": openai_server.origin, "STUDIO_MODEL_RETRY_BACKOFF": "0.01"}
    with daphne_process(**env) as server:
        page = open_chat(browser, server, "/chat/falls/")
        send(page, "hello there")
        wait_idle(page)

        footer = page.locator(".turn-assistant .run-facts-line")
        footer.wait_for()
        assert footer.inner_text().startswith("studio/scripted · 1 step")
        page.context.close()
    assert Run.objects.get().model == "studio/scripted"
    assert len(openai_server.requests) == 3  # the first try and two retries
