"""OpenAPI sources: preview a spec, import picked operations as tools, re-import with a
per-operation diff. The spec reading itself is tools_app.sources.openapi_spec."""

from __future__ import annotations

import copy
from typing import Any

from asgiref.sync import async_to_sync
from django.db import transaction
from django.utils import timezone

from common.exceptions import ApplicationError
from tools_app.auth import TLS_FIELDS, credentials_errors
from tools_app.auth.pem import ssl_context
from tools_app.models import Tool, ToolKind, ToolSource
from tools_app.models_sources import SourceKind
from tools_app.sources.common import fetch_text, names_check, names_taken, set_credentials
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
    *,
    text: str | bytes | None,
    url: str | None,
    tls: dict[str, str] | None = None,
    document: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], str]:
    """The parsed and validated document, and the URL it came from ("" if pasted or given
    as a document, like a connector's); a spec fetched by URL uses the TLS material given
    (a private CA, a client certificate)."""
    if document is not None:
        return _validated(document), ""
    if url:
        context = ssl_context(tls) if tls else None
        text = async_to_sync(fetch_text)(url, max_bytes=MAX_SPEC_BYTES, ssl_context=context)
    if text is None:
        raise ApplicationError("Give the spec as text, as a file or as a URL.", code="no_spec")
    if len(text) > MAX_SPEC_BYTES:
        raise ApplicationError("The spec is larger than 5 MB.", code="spec_too_large")
    try:
        loaded = spec_load(text)
    except SpecError as exc:
        raise ApplicationError(
            str(exc),
            code="invalid_spec",
            extra={"errors": exc.errors or [{"path": "$", "message": str(exc)}]},
        ) from None
    return _validated(loaded), url or ""


def _validated(document: dict[str, Any]) -> dict[str, Any]:
    errors = spec_validate(document)
    if errors:
        raise ApplicationError(
            f"The spec is not valid: {len(errors)} problem(s), the first at {errors[0]['path']}: "
            f"{errors[0]['message']}",
            code="invalid_spec",
            extra={"errors": errors},
        )
    return document


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
    owner: Any,
    text: str | bytes | None = None,
    url: str | None = None,
    credentials: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Validate a spec and list its operations (nothing is stored); `name_taken` says
    which suggested names the owner's tools or the shared ones already have."""
    document, url = _document(text=text, url=url, tls=_tls(credentials))
    operations = _operations(document, url)
    taken = names_taken([o.suggested_name for o in operations], owner=owner)
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
    config = {**op.config, "source_id": source.id, "operation_key": op.key}
    input_schema = op.input_schema
    fixed = _fixed_for(op, source.config.get("fixed") or [])
    if fixed:
        config["fixed"] = fixed
        input_schema = _without_fixed(input_schema, fixed)
    return {
        "description": op.tool_description,
        "input_schema": input_schema,
        "output_schema": op.output_schema,
        "config": config,
    }


def _fixed_for(op: Operation, fixed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The source's fixed parameter values (source.config["fixed"]: [{in, name, value,
    operations}]) that apply to this operation: it declares the parameter, and the entry
    names no operations or names this one."""
    declared = {(p["in"], p["name"]) for p in op.config.get("parameters", [])}
    return [
        {"in": f["in"], "name": f["name"], "value": f["value"]}
        for f in fixed
        if (f["in"], f["name"]) in declared and op.key in (f.get("operations") or [op.key])
    ]


def _without_fixed(schema: dict[str, Any], fixed: list[dict[str, Any]]) -> dict[str, Any]:
    """The input schema less the fixed parameters: the model never sees nor sets them."""
    schema = copy.deepcopy(schema)
    props = schema["properties"]
    for param in fixed:
        group = props.get(param["in"]) or {}
        group.get("properties", {}).pop(param["name"], None)
        if param["name"] in group.get("required", []):
            group["required"].remove(param["name"])
            if not group["required"]:
                group.pop("required")
                schema["required"] = [r for r in schema.get("required", []) if r != param["in"]]
        if group and not group.get("properties"):
            props.pop(param["in"])
    if not schema.get("required"):
        schema.pop("required", None)
    return schema


@transaction.atomic
def openapi_import(
    *,
    user,
    picks: list[dict[str, str]],
    text: str | bytes | None = None,
    url: str | None = None,
    credentials: dict[str, str] | None = None,
    base_url: str | None = None,
    document: dict[str, Any] | None = None,
    name: str | None = None,
    config: dict[str, Any] | None = None,
) -> ToolSource:
    """Store the spec as a ToolSource and make one tool per picked operation.

    `picks`: [{"key": "GET /pets/{id}", "name": "get_pet"}]; names must be unique.
    The spec comes as `text`, `url` or an already parsed `document` (a connector's);
    `name` and `config` (e.g. fixed parameter values) are the source's own.
    """
    tls = _tls(credentials)
    document, url = _document(text=text, url=url, tls=tls, document=document)
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
    errors += names_check(names, owner=user, path="$.picks[{i}].name")
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
        name=name or spec_title(document),
        owner=user,
        url=url,
        document=document,
        config={**(config or {}), "base_url": base_url or ""},
        imported_at=timezone.now(),
    )
    if tls and url:  # kept for re-imports from the same URL
        set_credentials(source, tls)
    for pick, tool_name in zip(picks, names, strict=True):
        fields = _tool_fields(by_key[pick["key"]], source)
        fields["config"]["auth"] = auths.get(pick["key"])
        if base_url:
            fields["config"]["base_url"] = base_url.rstrip("/")
        tool = Tool.objects.create(name=tool_name, kind=ToolKind.OPENAPI, owner=user, **fields)
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
