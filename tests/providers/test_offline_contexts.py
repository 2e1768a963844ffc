"""The offline model and finished background jobs (`<context>` messages): each is mentioned
once, wherever the thread numbered it. A job that finishes while a step streams may be
numbered before that step's answer although the step never saw it."""

from __future__ import annotations

from providers.offline_script import script

CONTEXT = '<context>function [rt_report] completed with response {"pages": 3}</context>'
CALL = {"id": "c1", "type": "function", "function": {"name": "rt_report", "arguments": "{}"}}


def _conversation(answer: str) -> list[dict]:
    return [
        {"role": "user", "content": "use rt_report for the budget"},
        {"role": "assistant", "content": "Calling rt_report. ", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "pending"}'},
        {"role": "user", "content": CONTEXT},
        {"role": "assistant", "content": answer},
        {"role": "user", "content": "what happened?"},
    ]


def test_a_job_numbered_before_an_answer_that_never_saw_it_is_mentioned_next():
    text, calls = script(_conversation("rt_report is running in the background."), None, "auto")
    assert calls == []
    assert text.count("function [rt_report] completed") == 1
    assert text.startswith("A background job finished: ")


def test_a_job_an_answer_mentioned_is_not_mentioned_again():
    first, _ = script(_conversation("")[:4], None, "auto")
    assert first.count("function [rt_report] completed") == 1
    text, _ = script(_conversation(first), None, "auto")
    assert "function [rt_report] completed" not in text
