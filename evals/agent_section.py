"""The `tests` section of an exported agent's document (agents_core.services.agent_io):
the exporting user's cases and suites of the agent, created again for the importing
user under the imported agent."""

from __future__ import annotations

from typing import Any

from agents_core.models import Agent
from common.exceptions import ApplicationError
from evals.services.cases import cases_export, cases_import


def tests_export(*, agent: Agent, owner: Any) -> dict[str, Any] | None:
    document = cases_export(agent=agent, owner=owner)
    if not document["cases"]:
        return None
    return {key: document[key] for key in ("version", "cases", "suites")}


def tests_load(*, agent: Agent, owner: Any, value: Any, path: str) -> None:
    try:
        cases_import(agent=agent, owner=owner, data=value)
    except ApplicationError as exc:
        errors = [
            {**error, "path": path + str(error.get("path", "$"))[1:]}
            for error in exc.extra.get("errors", [])
        ]
        message = f"{errors[0]['path']}: {errors[0]['message']}" if errors else exc.message
        raise ApplicationError(
            message, code=exc.code, status_code=exc.status_code, extra={"errors": errors}
        ) from exc
