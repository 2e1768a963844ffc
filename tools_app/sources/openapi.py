"""OpenAPI sources: preview a spec, import picked operations as tools, re-import with a
per-operation diff. The spec reading itself is tools_app.sources.openapi_spec."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.db import transaction
from django.utils import timezone

from studio.exceptions import ApplicationError
from tools_app.auth import TLS_FIELDS, credentials_errors
from tools_app.auth.pem import ssl_context
from tools_app.models import Tool, ToolKind, ToolSource
from tools_app.models_sources import SourceKind
from tools_app.sources.common import fetch_text, get_credentials, names_check, set_credentials
from tools_app.sources.openapi_load import SpecError, spec_load
from tools_app.sources.openapi_security import openid_completed
from tools_app.sources.openapi_spec import (
    Operation,
    server_urls,
    spec_operations,
    spec_title,
)
from tools_app.sources.openapi_validate import spec_validate

MAX_SPEC_BYTES = 5_000_000


def _refuse(errors: dict[str, str]) -> None:
    """400 with each unusable credential at its JSON path (none: nothing happens)."""
    if errors:
        path, message = next(iter(errors.items()))
        raise ApplicationError(
            f"{path}: {message}",
            code="invalid_credentials",
            extra={"errors": [{"path": p, "message": m} for p, m in errors.items()]},
        )


def _tls(credentials: dict[str, Any] | None) -> dict[str, str]:
    """The TLS material among `credentials` (checked: 400 at its path when unusable)."""
    tls = {k: v for k, v in (credentials or {}).items() if k in TLS_FIELDS and v}
    errors = credentials_errors(None, tls, path="$.credentials") if tls else {}
    _refuse(errors)
    return tls


def _document(
    *, text: str | bytes | None, url: str | None, tls: dict[str, str] | None = None
) -> tuple[dict[str, Any], str]:
    """The parsed and validated document, and the URL it came from ("" if pasted); a spec
    fetched by URL uses the TLS material given (a private CA, a client certificate)."""
    if url:
        context = ssl_context(tls) if tls else None
        text = async_to_sync(fetch_text)(url, max_bytes=MAX_SPEC_BYTES, ssl_context=context)
    if text is None:
        raise ApplicationError("Give the spec as text, as a file or as a URL.", code="no_spec")
    if len(text) > MAX_SPEC_BYTES:
        raise ApplicationError("The spec is larger than 5 MB.", code="spec_too_large")
    try:
        document = spec_load(text)
    except SpecError as exc:
        raise ApplicationError(
            str(exc),
            code="invalid_spec",
            extra={"errors": exc.errors or [{"path": "$", "message": str(exc)}]},
        ) from None
    errors = spec_validate(document)
    if errors:
        raise ApplicationError(
            f"The spec is not valid: {len(errors)} problem(s), the first at {errors[0]['path']}: "
            f"{errors[0]['message']}",
            code="invalid_spec",
            extra={"errors": errors},
        )
    return document, url or ""


def _operations(document: dict[str, Any], url: str) -> list[Operation]:
    try:
        return spec_operations(document, spec_url=url)
    except (SpecError, KeyError, RecursionError) as exc:
        raise ApplicationError(
            f"Could not read the operations: {exc}",
            code="invalid_spec",
            extra={"errors": [{"path": "$", "message": str(exc)}]},
        ) from None


def openapi_preview(
    *,
    text: str | bytes | None = None,
    url: str | None = None,
    credentials: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Validate a spec and list its operations (nothing is stored)."""
    document, url = _document(text=text, url=url, tls=_tls(credentials))
    operations = _operations(document, url)
    taken = set(
        Tool.objects.filter(name__in=[o.suggested_name for o in operations]).values_list(
            "name", flat=True
        )
    )
    return {
        "title": spec_title(document),
        "version": str(document.get("openapi") or document.get("swagger")),
        "url": url,
        "base_url": operations[0].config["base_url"] if operations else "",
        "servers": server_urls(document, spec_url=url),
        "operations": [
            {**op.as_dict(), "name_taken": op.suggested_name in taken} for op in operations
        ],
        "document": document,
    }


def _tool_fields(op: Operation, source: ToolSource) -> dict[str, Any]:
    return {
        "description": op.tool_description,
        "input_schema": op.input_schema,
        "output_schema": op.output_schema,
        "config": {**op.config, "source_id": source.id, "operation_key": op.key},
    }


@transaction.atomic
def openapi_import(
    *,
    user,
    picks: list[dict[str, str]],
    text: str | bytes | None = None,
    url: str | None = None,
    credentials: dict[str, str] | None = None,
    base_url: str | None = None,
) -> ToolSource:
    """Store the spec as a ToolSource and make one tool per picked operation.

    `picks`: [{"key": "GET /pets/{id}", "name": "get_pet"}]; names must be unique.
    """
    tls = _tls(credentials)
    document, url = _document(text=text, url=url, tls=tls)
    by_key = {op.key: op for op in _operations(document, url)}
    if not picks:
        raise ApplicationError("Pick at least one operation.", code="no_operations")
    errors = [
        {"path": f"$.picks[{i}].key", "message": f"no operation {p.get('key')!r}"}
        for i, p in enumerate(picks)
        if p.get("key") not in by_key
    ]
    names = [
        p.get("name") or by_key[p["key"]].suggested_name if p.get("key") in by_key else ""
        for p in picks
    ]
    errors += names_check(names, path="$.picks[{i}].name")
    if errors:
        raise ApplicationError(
            f"{errors[0]['path']}: {errors[0]['message']}",
            code="invalid_picks",
            extra={"errors": errors},
        )
    auths = _auths([by_key[p["key"]] for p in picks])
    _check_credentials(auths, credentials)
    source = ToolSource.objects.create(
        kind=SourceKind.OPENAPI,
        name=spec_title(document),
        owner=user,
        url=url,
        document=document,
        config={"base_url": base_url or ""},
        imported_at=timezone.now(),
    )
    if tls and url:  # kept for re-imports from the same URL
        set_credentials(source, tls)
    for pick, name in zip(picks, names, strict=True):
        fields = _tool_fields(by_key[pick["key"]], source)
        fields["config"]["auth"] = auths.get(pick["key"])
        if base_url:
            fields["config"]["base_url"] = base_url.rstrip("/")
        tool = Tool.objects.create(name=name, kind=ToolKind.OPENAPI, owner=user, **fields)
        if credentials:
            set_credentials(tool, credentials)
    return source


def _auths(operations: list[Operation]) -> dict[str, dict[str, Any] | None]:
    """Each picked operation's auth config, OpenID Connect schemes completed from their
    discovery document (read once per URL)."""
    discovered: dict[str, dict[str, Any]] = {}
    auths: dict[str, dict[str, Any] | None] = {}
    for op in operations:
        auth = op.config.get("auth")
        if auth and auth.get("openid_url"):
            url = auth["openid_url"]
            if url not in discovered:
                discovered[url] = async_to_sync(openid_completed)(auth)
            auth = {**discovered[url], "scheme": auth.get("scheme", "")}
        auths[op.key] = auth
    return auths


def _check_credentials(
    auths: dict[str, dict[str, Any] | None], credentials: dict[str, str] | None
) -> None:
    """The credentials given at import must suit the picked operations' auth."""
    if not credentials:
        return
    errors: dict[str, str] = {}
    for auth in auths.values():
        errors.update(credentials_errors(auth, credentials, path="$.credentials"))
    _refuse(errors)


# --- re-import ---------------------------------------------------------------------------
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


def openapi_diff(
    *, source: ToolSource, text: str | bytes | None = None, url: str | None = None
) -> dict[str, Any]:
    """What re-importing would change, per operation (nothing is stored)."""
    document, url = _document(
        text=text,
        url=url or (source.url if text is None else None),
        tls=get_credentials(source) if source.credentials_encrypted else None,
    )
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
) -> dict[str, Any]:
    """Apply a re-import: update the tools of changed operations, retire the tools of
    removed ones (gone_at, like code tools removed from code), optionally add new picks."""
    source = ToolSource.objects.select_for_update().get(pk=source.pk)
    document, url = _document(
        text=text,
        url=url or (source.url if text is None else None),
        tls=get_credentials(source) if source.credentials_encrypted else None,
    )
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
        errors += names_check(names, path="$.add[{i}].name")
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
