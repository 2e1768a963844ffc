"""The exceptions a tool raises on purpose, caught by the pipeline (tools_app.execution),
and how one it did not mean to raise reads in its run."""

from __future__ import annotations

from typing import Any


class ToolSuspended(Exception):  # noqa: N818 - the contract's name
    """Raised by a tool that must wait for a human (ask_user, submit_plan, client tools)."""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(payload.get("kind", "suspended"))
        self.payload = payload


class ToolError(Exception):
    """A failure a tool reports on purpose; `output` (optional) is still shown."""

    def __init__(self, message: str, *, output: Any = None, errors: list | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.output = output
        self.errors = errors or []


class InputError(ToolError):
    """The input text or value is not acceptable (syntax or schema)."""


def crash_message(exc: BaseException) -> str:
    """How an exception a tool raised reads in its run: the type, and the text if any."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
