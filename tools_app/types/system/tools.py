"""The built-in system tools as code definitions of kind "system"."""

from __future__ import annotations

from typing import Any

from tools_app.definitions import create_tool
from tools_app.types.system.web_fetch import INPUT_SCHEMA, OUTPUT_SCHEMA
from tools_app.types.system.web_fetch import web_fetch as fetch_url
from tools_app.websearch import INPUT_SCHEMA as SEARCH_INPUT
from tools_app.websearch import OUTPUT_SCHEMA as SEARCH_OUTPUT
from tools_app.websearch import web_search as search_web

ASK_USER_RESUME = {
    "type": "object",
    "properties": {
        "answer": {
            "description": "Text (free-text), one option (single) or a list of options (multi).",
            "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
        }
    },
    "required": ["answer"],
    "additionalProperties": False,
}
PLAN_RESUME = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["approved"],
    "additionalProperties": False,
}


def _resumed(context: Any, schema: dict[str, Any]) -> Any:
    """The answer that resumes a suspended call (validated), or None on the first call."""
    payload = getattr(context, "resume_payload", None)
    if payload is None:
        return None
    from tools_app.errors import ToolError
    from tools_app.validation import schema_errors

    errors = schema_errors(schema, payload)
    if errors:
        raise ToolError(
            f"Invalid answer: {errors[0]['path']}: {errors[0]['message']}", errors=errors
        )
    return payload


def ask(input: dict[str, Any], context: Any = None) -> dict[str, Any]:  # noqa: A002
    from tools_app.errors import ToolError, ToolSuspended

    mode = input.get("mode", "free-text")
    answer = _resumed(context, ASK_USER_RESUME)
    if answer is None:
        raise ToolSuspended(
            {
                "kind": "ask-user",
                "question": input["question"],
                "mode": mode,
                "options": input.get("options", []),
            }
        )
    value = answer["answer"]
    options = input.get("options", [])
    if mode == "single" and (not isinstance(value, str) or value not in options):
        raise ToolError(f"The answer must be one of the options: {options}.")
    if mode == "multi" and (not isinstance(value, list) or set(value) - set(options)):
        raise ToolError(f"The answer must be a list of options among {options}.")
    if mode == "free-text" and not isinstance(value, str):
        raise ToolError("The answer must be text.")
    return {"answer": value}


def plan(input: dict[str, Any], context: Any = None) -> dict[str, Any]:  # noqa: A002
    from tools_app.errors import ToolSuspended

    decision = _resumed(context, PLAN_RESUME)
    if decision is None:
        raise ToolSuspended(
            {"kind": "plan-approval", "plan": input["plan"], "steps": input.get("steps", [])}
        )
    return {"approved": decision["approved"], "reason": decision.get("reason", "")}


web_fetch = create_tool(
    id="web_fetch",
    kind="system",
    description="Fetch a public web page or API over http(s) and return its text "
    "(cut at 100,000 characters). Local and private addresses are refused.",
    input_schema=INPUT_SCHEMA,
    output_schema=OUTPUT_SCHEMA,
    timeout=20.0,
    execute=fetch_url,
)

web_search = create_tool(
    id="web_search",
    kind="system",
    description="Search the web; returns up to `count` results, each with a title, a URL "
    "and a snippet. Fetch a result's page with web_fetch to read it.",
    input_schema=SEARCH_INPUT,
    output_schema=SEARCH_OUTPUT,
    timeout=30.0,
    execute=search_web,
)

ask_user = create_tool(
    id="ask_user",
    kind="system",
    description="Ask the user a question and wait for the answer: free text, or one or "
    "several of the given options.",
    input_schema={
        "type": "object",
        "properties": {
            "question": {"type": "string", "minLength": 1},
            "mode": {
                "type": "string",
                "enum": ["free-text", "single", "multi"],
                "default": "free-text",
            },
            "options": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 2,
                "uniqueItems": True,
            },
        },
        "required": ["question"],
        "additionalProperties": False,
        "if": {"properties": {"mode": {"enum": ["single", "multi"]}}, "required": ["mode"]},
        "then": {"required": ["options"]},
    },
    resume_schema=ASK_USER_RESUME,
    timeout=3600.0,
    execute=ask,
)

submit_plan = create_tool(
    id="submit_plan",
    kind="system",
    description="Submit a plan to the user for approval before acting on it; returns "
    "whether it was approved and why.",
    input_schema={
        "type": "object",
        "properties": {
            "plan": {"type": "string", "minLength": 1},
            "steps": {"type": "array", "items": {"type": "string", "minLength": 1}},
        },
        "required": ["plan"],
        "additionalProperties": False,
    },
    resume_schema=PLAN_RESUME,
    timeout=3600.0,
    execute=plan,
)
