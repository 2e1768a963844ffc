"""Reading OpenAPI documents (loaded by openapi_load, validated by openapi_validate): turn
each operation into a tool definition (name, description, input and output
JSON Schema, and the request recipe the openapi tool type executes).

Swagger 2.0, OpenAPI 3.0 and 3.1 are read into one operation shape.

`$ref`s: only local refs (`#/...`) are followed; an external ref is a validation error
(following it would fetch an arbitrary URL outside the address guard). How schema refs
are resolved, recursion included, is described in tools_app.sources.openapi_schema.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from tools_app.sources.openapi_load import SpecError
from tools_app.sources.openapi_schema import SchemaConverter, pointer_get
from tools_app.sources.openapi_security import security_auth
from tools_app.sources.openapi_validate import spec_version

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
PARAM_GROUPS = ("path", "query", "header", "cookie")


@dataclass
class Operation:
    key: str  # "GET /pets/{petId}": stable across re-imports
    method: str
    path: str
    operation_id: str
    summary: str
    description: str
    suggested_name: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    config: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the tool cannot do

    @property
    def tool_description(self) -> str:
        return "\n\n".join(p for p in (self.summary, self.description) if p).strip() or self.key

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "method": self.method.upper(),
            "path": self.path,
            "operation_id": self.operation_id,
            "summary": self.summary,
            "description": self.tool_description,
            "suggested_name": self.suggested_name,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "auth": (self.config.get("auth") or {}).get("type"),
            "notes": self.notes,
        }


def snake_case(text: str) -> str:
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    if not text or not text[0].isalpha():
        text = f"op_{text}".rstrip("_")
    return text[:64].rstrip("_")


def operation_name(method: str, path: str, operation_id: str) -> str:
    if operation_id:
        return snake_case(operation_id)
    return snake_case(f"{method} {path.replace('{', '').replace('}', '')}")


def base_url(
    document: dict[str, Any],
    version: str,
    spec_url: str = "",
    servers: list[dict[str, Any]] | None = None,
) -> str:
    """The API's base URL (the operation's or path's own `servers` first); relative
    server URLs are resolved against the spec's URL."""
    if version == "2.0":
        host = document.get("host")
        scheme = (document.get("schemes") or ["https"])[0]
        base = (
            f"{scheme}://{host}{document.get('basePath', '')}"
            if host
            else document.get("basePath", "")
        )
    else:
        server = (servers or document.get("servers") or [{"url": "/"}])[0]
        base = server.get("url", "/")
        for name, var in (server.get("variables") or {}).items():
            base = base.replace("{" + name + "}", str(var.get("default", "")))
    if spec_url and not re.match(r"^https?://", base):
        base = urljoin(spec_url, base)
    return base.rstrip("/")


def server_urls(document: dict[str, Any], *, spec_url: str = "") -> list[str]:
    """Every base URL the spec declares at its top level, in its order (Swagger 2.0: one
    per scheme), resolved like `base_url`: what an import may choose from."""
    version = spec_version(document)
    if version == "2.0":
        candidates = [
            base_url({**document, "schemes": [scheme]}, version, spec_url)
            for scheme in document.get("schemes") or ["https"]
        ]
    else:
        candidates = [
            base_url(document, version, spec_url, [server])
            for server in document.get("servers") or [{"url": "/"}]
            if isinstance(server, dict)
        ]
    return list(dict.fromkeys(candidates))


def _json_media(content: dict[str, Any] | None) -> tuple[str, Any] | None:
    for media, body in (content or {}).items():
        if media.split(";")[0].strip() in ("application/json", "*/*") or media.endswith("+json"):
            return media, (body or {}).get("schema", {})
    return None


def _param_schema(conv: SchemaConverter, param: dict[str, Any], version: str) -> dict:
    if version == "2.0":
        keep = {
            k: v
            for k, v in param.items()
            if k not in ("name", "in", "required", "collectionFormat", "allowEmptyValue")
        }
        schema = conv.convert(keep)
    elif "schema" in param:
        schema = conv.convert(param["schema"])
    else:
        media = _json_media(param.get("content"))
        schema = conv.convert(media[1]) if media else {}
    schema = dict(schema) if isinstance(schema, dict) else {}
    if param.get("description") and "description" not in schema:
        schema["description"] = param["description"]
    return schema


def _param_recipe(param: dict[str, Any], version: str) -> dict[str, Any]:
    where = param["in"]
    recipe = {"name": param["name"], "in": where, "required": bool(param.get("required"))}
    if version == "2.0":
        fmt = param.get("collectionFormat", "csv")
        recipe.update(
            {
                "multi": {"style": "form", "explode": True},
                "ssv": {"style": "spaceDelimited", "explode": False},
                "pipes": {"style": "pipeDelimited", "explode": False},
                "tsv": {"style": "tabDelimited", "explode": False},
            }.get(fmt, {"style": "form" if where == "query" else "simple", "explode": False})
        )
    else:
        default_style = {"query": "form", "cookie": "form"}.get(where, "simple")
        style = param.get("style", default_style)
        recipe["style"] = style
        recipe["explode"] = bool(param.get("explode", style == "form"))
        if param.get("allowReserved"):
            recipe["allow_reserved"] = True
    return recipe


def _resolve(document: dict[str, Any], node: Any) -> Any:
    """Follow a chain of refs for parameter, request body and response objects."""
    seen = set()
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        if node["$ref"] in seen:
            raise SpecError(f"$ref loop at {node['$ref']}")
        seen.add(node["$ref"])
        node = pointer_get(document, node["$ref"])
    return node


def _operation(document, version, path, method, path_item, op, spec_url) -> Operation:
    conv = SchemaConverter(document, version)
    params: dict[tuple[str, str], dict] = {}
    for raw in [*(path_item.get("parameters") or []), *(op.get("parameters") or [])]:
        param = _resolve(document, raw)
        params[(param.get("name"), param.get("in"))] = param  # operation level wins
    groups: dict[str, dict[str, Any]] = {}
    recipes, body_recipe, body_schema, body_required = [], None, None, False
    notes: list[str] = []
    for (name, where), param in params.items():
        if where == "body":  # Swagger 2.0
            body_schema = conv.convert(param.get("schema", {}))
            body_required = bool(param.get("required"))
            body_recipe = {"media_type": "application/json"}
            continue
        if where == "formData":
            group = groups.setdefault("body", {"type": "object", "properties": {}, "required": []})
            group["properties"][name] = _param_schema(conv, param, version)
            if param.get("required"):
                group["required"].append(name)
                body_required = True
            body_recipe = {"media_type": "application/x-www-form-urlencoded"}
            continue
        if where not in PARAM_GROUPS:
            continue
        group = groups.setdefault(
            where,
            {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
        )
        group["properties"][name] = _param_schema(conv, param, version)
        if param.get("required") or where == "path":
            group["required"].append(name)
        recipes.append(_param_recipe(param, version))
    if version != "2.0" and op.get("requestBody"):
        request_body = _resolve(document, op["requestBody"])
        media = _json_media(request_body.get("content"))
        form = (request_body.get("content") or {}).get("application/x-www-form-urlencoded")
        if media:
            body_schema, body_recipe = conv.convert(media[1]), {"media_type": "application/json"}
        elif form is not None:
            body_schema = conv.convert(form.get("schema", {}))
            body_recipe = {"media_type": "application/x-www-form-urlencoded"}
        elif request_body.get("content"):
            notes.append(
                "request body type not supported (only JSON and form bodies): "
                + ", ".join(request_body["content"])
            )
        body_required = bool(request_body.get("required"))
    properties: dict[str, Any] = {}
    required = []
    for where in PARAM_GROUPS:
        if where in groups:
            group = groups[where]
            if not group["required"]:
                group.pop("required")
            properties[where] = group
            if group.get("required"):
                required.append(where)
    if "body" in groups:  # Swagger 2.0 form fields
        body_schema = {k: v for k, v in groups["body"].items() if k != "required" or v}
    if body_schema is not None:
        properties["body"] = body_schema if body_schema != {} else {}
        if body_required:
            required.append("body")
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        input_schema["required"] = required
    output_schema = _output_schema(document, version, op)
    operation_id = op.get("operationId") or ""
    base = base_url(document, version, spec_url, op.get("servers") or path_item.get("servers"))
    config = {
        "method": method.upper(),
        "path": path,
        "base_url": base,
        "parameters": recipes,
        "body": body_recipe,
        "auth": security_auth(document, op, version, base),
    }
    if isinstance(op.get("x-error-status"), dict):  # errors in a 2xx body (see the type)
        config["error_status"] = op["x-error-status"]
    return Operation(
        key=f"{method.upper()} {path}",
        method=method,
        path=path,
        operation_id=operation_id,
        summary=(op.get("summary") or "").strip(),
        description=(op.get("description") or "").strip(),
        suggested_name=operation_name(method, path, operation_id),
        input_schema=conv.with_defs(input_schema),
        output_schema=output_schema,
        config=config,
        notes=notes,
    )


def _output_schema(document, version, op) -> dict[str, Any] | None:
    conv = SchemaConverter(document, version)
    responses = op.get("responses") or {}
    for code in sorted(responses, key=str):
        if not str(code).startswith("2"):
            continue
        response = _resolve(document, responses[code])
        if version == "2.0":
            body = response.get("schema")
        else:
            media = _json_media(response.get("content"))
            body = media[1] if media else None
        if body is None:
            continue
        return conv.with_defs(
            {
                "type": "object",
                "properties": {
                    "status": {"type": "integer"},
                    "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                    "body": conv.convert(body),
                },
                "required": ["status", "headers", "body"],
            }
        )
    return None


def spec_operations(document: dict[str, Any], *, spec_url: str = "") -> list[Operation]:
    """Every operation of a validated document, in path order."""
    version = spec_version(document)
    operations = []
    for path, raw_item in (document.get("paths") or {}).items():
        path_item = _resolve(document, raw_item) or {}
        for method in METHODS:
            if isinstance(path_item.get(method), dict):
                operations.append(
                    _operation(
                        document, version, path, method, path_item, path_item[method], spec_url
                    )
                )
    return operations


def spec_title(document: dict[str, Any]) -> str:
    info = document.get("info") or {}
    return str(info.get("title") or "OpenAPI spec")[:200]
