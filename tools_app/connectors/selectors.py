"""Reading the catalogue: a connector by slug, what the page and the API show of it, and
the shipped spec a connected source updates from."""

from __future__ import annotations

from typing import Any

from common.exceptions import NotFound
from tools_app.connectors.catalogue import Connector, catalogue
from tools_app.models import ToolSource
from tools_app.sources.common import names_taken


def connector_get(slug: str) -> Connector:
    connector = catalogue().get(slug)
    if connector is None:
        raise NotFound(f"No connector {slug!r}.", code="not_found")
    return connector


def connector_summary(connector: Connector) -> dict[str, Any]:
    return {
        "slug": connector.slug,
        "name": connector.name,
        "description": connector.description,
        "color": connector.color,
        "instance": connector.instance,
        "auth": [
            {
                "id": p.id,
                "label": p.label,
                "type": p.type,
                "available": p.available,
                "fields": [
                    {"name": k, "label": v, "required": k not in p.optional}
                    for k, v in p.fields.items()
                ],
                "help": p.help,
            }
            for p in connector.auth
        ],
        "settings": [
            {
                "id": s.id,
                "label": s.label,
                "required": s.required,
                "default": s.default,
                "help": s.help,
                "presets": list(s.presets),
            }
            for s in connector.settings
        ],
    }


def connector_detail(connector: Connector, *, user: Any) -> dict[str, Any]:
    """The summary and the operations offered, as the importer will make them for `user`
    (`name_taken`: the user's tools or the shared ones have the name)."""
    operations = connector.spec_operations()
    taken = names_taken([name for _, name in connector.operations], owner=user)
    return {
        **connector_summary(connector),
        "operations": [
            {
                "key": key,
                "method": operations[key].method.upper(),
                "path": operations[key].path,
                "summary": operations[key].summary,
                "description": operations[key].tool_description,
                "details": operations[key].description,
                "name": name,
                "name_taken": name in taken,
            }
            for key, name in connector.operations
        ],
    }


def connector_document(source: ToolSource) -> dict[str, Any] | None:
    """The shipped spec of the connector a source was made from, with the source's sign-in
    preset (what a re-import compares with), or None for other sources."""
    connector = catalogue().get(source.config.get("connector") or "")
    preset = connector.preset(source.config.get("auth_preset", "")) if connector else None
    if connector is None or preset is None:
        return None
    config = source.config
    return connector.document_for(preset, config.get("base_url", ""), config.get("oauth"))
