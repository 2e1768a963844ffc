"""A judge model whose provider quotes the refused key in its 401: the suite sees the
provider's words with the key redacted (tools_app.redaction), as a run would."""

from __future__ import annotations

import pytest

from evals.judge import JudgeError, judge_answer
from providers.services import credential_create

pytestmark = pytest.mark.django_db

KEY = "sk-judge-Key0Quoted1In2A3Refusal"


def test_a_key_the_judges_provider_quotes_is_redacted(owner, openai_server):
    openai_server.quotes_key = True  # its own key is another: the call is refused
    credential_create(owner=owner, provider="openai", api_key=KEY, api_base=openai_server.url)

    with pytest.raises(JudgeError) as raised:
        judge_answer("polite", "hello", "openai/gpt-4o-mini", user=owner)

    assert openai_server.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    assert "Incorrect API key provided: [redacted]" in str(raised.value)
    assert KEY not in str(raised.value) and raised.value.__cause__ is None
