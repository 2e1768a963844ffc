"""Connecting a connector: check what the user gave (instance URL, authentication preset,
credentials, settings, picked operations), then import the picked operations of the
connector's spec as the user's OpenAPI tools through the OpenAPI source importer."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from common.exceptions import ApplicationError
from tools_app.connectors.catalogue import Connector
from tools_app.connectors.selectors import connector_get
from tools_app.models import ToolSource
from tools_app.sources.openapi import openapi_import

Errors = list[dict[str, str]]
MAX_URL = 2000  # as ToolSource.url


def _text(data: dict[str, Any], key: str, errors: Errors) -> str:
    value = data.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        errors.append({"path": f"$.{key}", "message": "must be a string"})
        return ""
    return value.strip()


def _strings(data: dict[str, Any], key: str, errors: Errors) -> dict[str, str]:
    value = data.get(key) or {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        errors.append({"path": f"$.{key}", "message": "must be an object of strings"})
        return {}
    return {k: v.strip() for k, v in value.items()}


def _unknown(given: dict[str, str], known: Any, where: str, owner: str) -> Errors:
    return [
        {"path": f"$.{where}.{key}", "message": f"{owner} has no {key!r}"}
        for key in given
        if key not in known
    ]


def _instance_errors(connector: Connector, url: str) -> Errors:
    from tools_app.net.check import REFUSED, url_verdict

    if len(url) > MAX_URL:
        return [{"path": "$.instance_url", "message": f"longer than {MAX_URL} characters"}]
    if not url:
        if connector.instance.get("required"):
            label = connector.instance.get("label", "Instance URL")
            return [{"path": "$.instance_url", "message": f"{label} is required"}]
        return []
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return [{"path": "$.instance_url", "message": "must be an http(s) URL, e.g. https://host"}]
    if parts.query or parts.fragment or parts.username:
        return [
            {"path": "$.instance_url", "message": "must be a base URL (no query, fragment or user)"}
        ]
    verdict = url_verdict(url)
    if verdict.status == REFUSED:
        return [{"path": "$.instance_url", "message": verdict.message}]
    if parts.scheme == "http" and not verdict.private_network:
        # Plain HTTP only inside a private network the operator allows: elsewhere the
        # credentials would cross the internet in clear.
        return [{"path": "$.instance_url", "message": "must use https (credentials are sent)"}]
    return []


def _picks(connector: Connector, data: dict[str, Any], errors: Errors) -> list[dict[str, str]]:
    offered = dict(connector.operations)
    raw = data.get("picks")
    if raw is None:
        return [{"key": key, "name": name} for key, name in connector.operations]
    if not isinstance(raw, list) or not raw:
        errors.append({"path": "$.picks", "message": "pick at least one operation"})
        return []
    picks = []
    for index, pick in enumerate(raw):
        key = pick.get("key") if isinstance(pick, dict) else None
        if key not in offered:
            errors.append({"path": f"$.picks[{index}].key", "message": f"no operation {key!r}"})
            continue
        name = pick.get("name") or offered[key]
        if not isinstance(name, str):
            errors.append({"path": f"$.picks[{index}].name", "message": "must be a string"})
            continue
        picks.append({"key": key, "name": name.strip()})
    return picks


def connector_add(*, user, slug: str, data: Any) -> ToolSource:
    """Make the user's tools from a connector. `data`: {instance_url, auth, credentials,
    settings, picks}; every problem is reported at its JSON path, and nothing is stored
    unless all is well (the importer's transaction)."""
    connector = connector_get(slug)
    if not isinstance(data, dict):
        raise ApplicationError(
            "The body must be a JSON object.",
            extra={"errors": [{"path": "$", "message": "must be an object"}]},
        )
    errors: Errors = []
    instance_url = _text(data, "instance_url", errors).rstrip("/")
    errors += _instance_errors(connector, instance_url)
    default = next((p.id for p in connector.auth if p.available), "")
    preset = connector.preset(_text(data, "auth", errors) or default)
    credentials = _strings(data, "credentials", errors)
    if preset is None or not preset.available:
        usable = ", ".join(p.id for p in connector.auth if p.available)
        errors.append({"path": "$.auth", "message": f"choose one of: {usable}"})
    else:
        errors += [
            {"path": f"$.credentials.{name}", "message": f"{label} is required"}
            for name, label in preset.fields.items()
            if not credentials.get(name) and name not in preset.optional
        ]
        errors += _unknown(credentials, preset.fields, "credentials", f"sign-in {preset.id}")
    values = _strings(data, "settings", errors)
    errors += _unknown(values, {s.id for s in connector.settings}, "settings", connector.name)
    fixed, oauth = [], {}
    for setting in connector.settings:
        value = values.get(setting.id) or setting.default
        if not setting.applies_to(preset):
            continue
        if not value and setting.required:
            errors.append(
                {"path": f"$.settings.{setting.id}", "message": f"{setting.label} is required"}
            )
        elif value and setting.where == "oauth":  # a placeholder of the OAuth URLs
            oauth[setting.name] = value
        elif value:
            fixed.append(
                {
                    "in": setting.where,
                    "name": setting.name,
                    "value": value,
                    "operations": list(setting.operations),
                }
            )
    picks = _picks(connector, data, errors)
    if errors:
        raise ApplicationError(
            f"{errors[0]['path']}: {errors[0]['message']}", code="invalid", extra={"errors": errors}
        )
    assert preset is not None
    host = urlsplit(instance_url).hostname if instance_url else ""
    return openapi_import(
        user=user,
        picks=picks,
        document=connector.document_for(preset, instance_url, oauth),
        name=f"{connector.name} ({host})" if host else connector.name,
        base_url=instance_url or None,
        credentials={k: v for k, v in credentials.items() if k in preset.fields},
        config={
            "connector": connector.slug,
            "auth_preset": preset.id,
            "fixed": fixed,
            "oauth": oauth,
        },
    )
