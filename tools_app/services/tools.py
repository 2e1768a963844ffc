"""Writes of tools made in the studio. Code tools are synced from code (agents_core.registry)
and are read-only here."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from common.exceptions import ApplicationError
from tools_app.crypto import credentials_set
from tools_app.models import Source, Tool

TOOL_FIELDS = (
    "name",
    "description",
    "kind",
    "input_schema",
    "output_schema",
    "execution_mode",
    "timeout_seconds",
    "config",
    "model_output",
)


def tool_ensure_editable(tool: Tool) -> None:
    if tool.source == Source.CODE:
        raise ApplicationError(
            f"Tool {tool.name!r} is defined in code; edit its overrides instead.",
            status_code=403,
            code="defined_in_code",
        )


def _name_taken(name: str) -> ValidationError:
    return ValidationError({"name": f"A tool named {name!r} already exists; pick another name."})


def _save_unique(tool: Tool, **save_kwargs: Any) -> None:
    """Save, turning a lost race for the unique name into the same friendly error. A name
    is unique among the owner's tools and the shared ones: another user's tools never make
    it taken, so no answer tells anyone that someone else has a tool of that name."""

    def taken() -> bool:
        rivals = Tool.objects.namespace_of(tool.owner_id).filter(name=tool.name)
        return rivals.exclude(pk=tool.pk).exists()

    if taken():
        raise _name_taken(tool.name)
    try:
        # A savepoint, so that the caller's transaction survives the IntegrityError.
        with transaction.atomic():
            tool.save(**save_kwargs)
    except IntegrityError as exc:
        if taken():
            raise _name_taken(tool.name) from exc
        raise


@transaction.atomic
def tool_create(
    *,
    owner: Any,
    name: str,
    kind: str,
    credentials: dict[str, str] | None = None,
    **fields: Any,
) -> Tool:
    """Create a studio tool; credentials are stored encrypted in the same transaction."""
    unknown = set(fields) - set(TOOL_FIELDS)
    if unknown:
        raise TypeError(f"tool_create() got unexpected fields {sorted(unknown)}")
    tool = Tool(name=name, kind=kind, owner=owner, source=Source.STUDIO, **fields)
    _save_unique(tool, force_insert=True)
    if credentials:
        credentials_set(tool, credentials)
    return tool


@transaction.atomic
def tool_update(*, tool: Tool, data: dict[str, Any]) -> Tool:
    """Apply the given fields (a PUT sends all of them, a PATCH some).

    Credentials change only when `data` has the key: clients never read them back, so a
    PUT without them keeps the stored ones; None or {} clears them.
    """
    tool_ensure_editable(tool)
    data = dict(data)
    has_credentials, credentials = "credentials" in data, data.pop("credentials", None)
    for field, value in data.items():
        if field not in TOOL_FIELDS:
            raise TypeError(f"tool_update() cannot set {field!r}")
        setattr(tool, field, value)
    _save_unique(tool)
    if has_credentials:
        credentials_set(tool, credentials)
    return tool


@transaction.atomic
def tool_delete(*, tool: Tool) -> None:
    """Delete a studio tool; its bindings on agents and its test runs go with it."""
    tool_ensure_editable(tool)
    tool.delete()
