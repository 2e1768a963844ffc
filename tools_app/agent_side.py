"""What tools need from the app that runs agents, lent to them instead of imported.

tools_app never imports the agent side. The app that runs agents installs an `AgentSide`
when Django starts (its AppConfig.ready); the agent loop may pass its own in the execution
context. Through it:
- a code tool (and a system tool) finds its Python definition by name;
- an agent tool, and a sub-agent binding, runs an agent to its answer (one function);
- the task tools read and write the chat thread's task list;
- web_search asks the model provider's own search (litellm's web_search_options).
Without an installed side, those tools fail with a clear message; every other type runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol


class TaskList(Protocol):
    """One thread's task list: rows `{id, title, status, notes, position}` in order."""

    def items(self) -> list[dict[str, Any]]: ...

    def replace(self, items: list[dict[str, Any]]) -> None: ...

    def save(self, task_id: int, changes: dict[str, Any]) -> bool:
        """False when the store refuses a second task in progress (a race lost)."""
        ...


@dataclass(frozen=True)
class AgentSide:
    # A code tool's definition (tools_app.definitions.ToolDefinition) by name, or None.
    tool_definition: Callable[[str], Any]
    # Runs an agent to its answer: (agent slug, prompt, execution context) -> the text.
    # Raises tools_app.errors.ToolError when the agent cannot run or does not answer.
    run_agent: Callable[[str, str, Any], Awaitable[str]]
    # The agent of that slug the user may run (their own, or a code agent), or None.
    agent_get: Callable[[Any, str], Any]
    # The task list of a thread, by the thread's primary key.
    task_list: Callable[[Any], TaskList]
    # web_search through the model provider's own search: (query, count, model or "" for
    # the run's agent's, execution context) -> [{title, url, snippet}]; raises
    # tools_app.websearch.backends.SearchError.
    model_search: Callable[[str, int, str, Any], Awaitable[list[dict[str, str]]]] | None = None


_installed: AgentSide | None = None


def agent_side_install(side: AgentSide | None) -> None:
    global _installed
    _installed = side


def agent_side_get() -> AgentSide | None:
    return _installed
