"""Code definitions of the NUL-output tests: tools whose result holds NUL characters."""

from __future__ import annotations

from typing import Any

from agents_core.definitions import Agent, create_tool

INPUT = {"type": "object", "properties": {"text": {"type": "string"}}}


def _answer(data: dict[str, Any], context: Any = None) -> dict[str, Any]:
    return {"text": "before\x00after", "key\x00": [data.get("text", ""), "x\x00"]}


def _crash(data: dict[str, Any], context: Any = None) -> dict[str, Any]:
    raise RuntimeError("the disk\x00is full")


nul_answer = create_tool(
    id="nul_answer", description="Answers with NULs.", input_schema=INPUT, execute=_answer
)
nul_crash = create_tool(
    id="nul_crash", description="Fails with a NUL.", input_schema=INPUT, execute=_crash
)
nul_agent = Agent(
    id="nul-agent",
    name="NUL agent",
    instructions="Use the tools you are asked to use.",
    tools={"nul_answer": nul_answer, "nul_crash": nul_crash},
)
