"""JSON Schema patterns are user patterns: the errors of an input a tool's schema refuses
are listed with RE2 (common/patterns.py), so a pattern that backtracks for ever in
Python's `re` is answered at once with its path and the right verdict."""

from __future__ import annotations

from agents_core.definitions import create_tool
from tools_app.services.execute import tool_execute

SCHEMA = {
    "type": "object",
    "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}},
    "patternProperties": {"^(b+)+$": {"type": "integer"}},
    "required": ["code"],
}


def _echo(data, context=None):
    return {"echo": data}


def test_a_nested_quantifier_in_a_schema_is_checked_in_linear_time(code_tool, owner):
    tool = code_tool(
        create_tool(id="pattern_echo", description="echo", execute=_echo, input_schema=SCHEMA)
    )
    stalling = "a" * 60 + "!"  # about 2**60 steps for re.search

    refused = tool_execute(tool=tool, input={"code": stalling, "b" * 60 + "!": "x"}, user=owner)
    accepted = tool_execute(tool=tool, input={"code": "a" * 60, "bbb": 3}, user=owner)

    assert refused.status == "failed"
    assert [(e["path"], e["message"]) for e in refused.errors] == [
        ("$.code", f"'{stalling}' does not match '^(a+)+$'")
    ]
    assert accepted.status == "completed", accepted.errors


def test_a_pattern_with_lookaround_is_checked_by_the_bounded_engine_not_re(code_tool, owner):
    # RE2 has no lookaround; Python's re would backtrack about 2**60 steps on this input.
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^(?!x)(a+)+$"}},
        "required": ["code"],
    }
    tool = code_tool(
        create_tool(id="lookaround_echo", description="echo", execute=_echo, input_schema=schema)
    )
    stalling = "a" * 60 + "!"

    refused = tool_execute(tool=tool, input={"code": stalling}, user=owner)
    accepted = tool_execute(tool=tool, input={"code": "a" * 60}, user=owner)

    assert refused.status == "failed"
    assert [(e["path"], e["message"]) for e in refused.errors] == [
        ("$.code", f"'{stalling}' does not match '^(?!x)(a+)+$'")
    ]
    assert accepted.status == "completed", accepted.errors
