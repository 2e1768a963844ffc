"""Re-importing an OpenAPI source: what a new version of its spec changes per operation
(added / removed / changed, with what changed), and applying it to the source's tools.
Importing itself is tools_app.sources.openapi."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from common.exceptions import ApplicationError
from tools_app.models import Tool, ToolKind, ToolSource
from tools_app.sources.common import get_credentials, names_check
from tools_app.sources.openapi import _document, _operations, _tool_fields
from tools_app.sources.openapi_spec import Operation, spec_title


def _group_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    changes = []
    old_props, new_props = old.get("properties", {}), new.get("properties", {})
    for group in ("path", "query", "header", "cookie"):
        before = (old_props.get(group) or {}).get("properties", {})
        after = (new_props.get(group) or {}).get("properties", {})
        changes += [f"{group} parameter added: {n}" for n in after if n not in before]
        changes += [f"{group} parameter removed: {n}" for n in before if n not in after]
        changes += [
            f"{group} parameter changed: {n}"
            for n in after
            if n in before and before[n] != after[n]
        ]
        if set((old_props.get(group) or {}).get("required", [])) != set(
            (new_props.get(group) or {}).get("required", [])
        ):
            changes.append(f"{group} parameters: required list changed")
    if old_props.get("body") != new_props.get("body") or ("body" in old.get("required", [])) != (
        "body" in new.get("required", [])
    ):
        changes.append("request body changed")
    if old.get("$defs") != new.get("$defs") and not changes:
        changes.append("referenced schemas changed")
    return changes


def operation_changes(old: Operation, new: Operation) -> list[str]:
    changes = []
    if old.operation_id != new.operation_id:
        changes.append(f"operationId: {old.operation_id or '-'} -> {new.operation_id or '-'}")
    if old.tool_description != new.tool_description:
        changes.append("summary/description changed")
    changes += _group_changes(old.input_schema, new.input_schema)
    if old.output_schema != new.output_schema:
        changes.append("response schema changed")
    for key, label in (("base_url", "server URL"), ("auth", "authentication")):
        if old.config.get(key) != new.config.get(key):
            changes.append(f"{label} changed")
    return changes


def _source_tools(source: ToolSource) -> dict[str, Tool]:
    tools = Tool.objects.live().filter(owner=source.owner, config__source_id=source.id)
    return {tool.config.get("operation_key"): tool for tool in tools}


def _new_version(
    source: ToolSource, text: str | bytes | None, url: str | None, document: dict | None
) -> tuple[dict[str, Any], str]:
    """The new document: given as text, a URL or a document (a connector's shipped spec),
    else fetched again from the source's own URL."""
    if document is None and text is None:
        url = url or source.url
    tls = get_credentials(source) if source.credentials_encrypted else None
    return _document(text=text, url=url, tls=tls, document=document)


def openapi_diff(
    *,
    source: ToolSource,
    text: str | bytes | None = None,
    url: str | None = None,
    document: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What re-importing would change, per operation (nothing is stored)."""
    document, url = _new_version(source, text, url, document)
    old = {op.key: op for op in _operations(source.document, source.url)}
    new = {op.key: op for op in _operations(document, url)}
    tools = _source_tools(source)
    entries = []
    for key in sorted(set(old) | set(new)):
        tool = tools.get(key)
        if key not in old:
            status, changes = "added", []
        elif key not in new:
            status, changes = "removed", []
        else:
            changes = operation_changes(old[key], new[key])
            status = "changed" if changes else "unchanged"
        op = new.get(key) or old[key]
        entries.append(
            {
                "key": key,
                "status": status,
                "changes": changes,
                "tool": tool.name if tool else None,
                "suggested_name": op.suggested_name,
                "description": op.tool_description,
            }
        )
    return {
        "source": source.id,
        "title": spec_title(document),
        "operations": entries,
        "document": document,
        "url": url,
    }


@transaction.atomic
def openapi_reimport(
    *,
    source: ToolSource,
    text: str | bytes | None = None,
    url: str | None = None,
    add: list[dict[str, str]] | None = None,
    document: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Apply a re-import: update the tools of changed operations, retire the tools of
    removed ones (gone_at, like code tools removed from code), optionally add new picks."""
    source = ToolSource.objects.select_for_update().get(pk=source.pk)
    document, url = _new_version(source, text, url, document)
    new = {op.key: op for op in _operations(document, url)}
    updated, retired = [], []
    for key, tool in _source_tools(source).items():
        if key not in new:
            tool.gone_at = timezone.now()
            tool.save(update_fields=["gone_at", "updated_at"])
            retired.append(tool.name)
            continue
        fields = _tool_fields(new[key], source)
        if source.config.get("base_url"):
            fields["config"]["base_url"] = source.config["base_url"].rstrip("/")
        fields["config"] = {**tool.config, **fields["config"]}  # keep follow_redirects etc.
        kept = (tool.config.get("auth") or {}).get("openid_url")
        if kept and kept == (fields["config"].get("auth") or {}).get("openid_url"):
            fields["config"]["auth"] = tool.config["auth"]  # completed by discovery at import
        if any(getattr(tool, k) != v for k, v in fields.items()):
            for k, v in fields.items():
                setattr(tool, k, v)
            tool.save()
            updated.append(tool.name)
    source.document, source.imported_at = document, timezone.now()
    source.url = url or source.url
    source.save()
    added = []
    if add:
        names = [
            p.get("name") or (new[p["key"]].suggested_name if p.get("key") in new else "")
            for p in add
        ]
        errors = [
            {"path": f"$.add[{i}].key", "message": f"no operation {p.get('key')!r}"}
            for i, p in enumerate(add)
            if p.get("key") not in new
        ]
        errors += names_check(names, owner=source.owner, path="$.add[{i}].name")
        if errors:
            raise ApplicationError(
                f"{errors[0]['path']}: {errors[0]['message']}",
                code="invalid_picks",
                extra={"errors": errors},
            )
        for pick, name in zip(add, names, strict=True):
            Tool.objects.create(
                name=name,
                kind=ToolKind.OPENAPI,
                owner=source.owner,
                **_tool_fields(new[pick["key"]], source),
            )
            added.append(name)
    return {"updated": updated, "retired": retired, "added": added}
