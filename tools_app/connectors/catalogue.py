"""The catalogue: every connector under specs/<slug>/ as `connector.yaml` (the manifest)
and `openapi.yaml` (the curated spec), read once per process.

The manifest names what the spec alone does not say: the label and colour shown on the
page, what the instance URL field asks for, the authentication presets (each one security
scheme of the spec, and the credential fields it needs), the operations offered with
their tool names, and settings (parameters whose value the user gives once when
connecting, e.g. Google's search engine ID, instead of the model on every call).
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin

import yaml

from tools_app.sources.openapi_spec import Operation, spec_operations

SPECS = Path(__file__).resolve().parent / "specs"

# The credentials each kind of preset asks for (the OpenAPI tool type's credential names):
# (required, optional). An OAuth 2.0 authorization code client may be public (PKCE only).
CREDENTIAL_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "basic": (("username", "password"), ()),
    "api_key": (("api_key",), ()),
    "bearer": (("token",), ()),
    "oauth2_client_credentials": (("client_id", "client_secret"), ()),
    "oauth2_authorization_code": (("client_id",), ("client_secret",)),
}
# The OAuth 2.0 flow of the spec's scheme that each grant preset keeps.
OAUTH_FLOWS = {
    "oauth2_client_credentials": "clientCredentials",
    "oauth2_authorization_code": "authorizationCode",
}


@dataclass(frozen=True)
class AuthPreset:
    id: str
    label: str
    type: str  # an OpenAPI tool auth type: basic, api_key, bearer; or an OAuth grant
    schemes: tuple[str, ...]  # the spec's security schemes this preset satisfies
    fields: dict[str, str]  # credential name -> label
    help: str = ""
    optional: frozenset[str] = frozenset()  # credentials that may stay empty
    scopes: tuple[str, ...] = ()  # the OAuth scopes asked for, if not the spec's

    @property
    def available(self) -> bool:
        """Whether the studio's OpenAPI tools can authenticate this way today."""
        return self.type in supported_auth_types()


@dataclass(frozen=True)
class Setting:
    id: str  # the key of its value in a connect request
    name: str
    where: str  # query | header | path | cookie
    label: str
    required: bool = True
    default: str = ""
    help: str = ""
    operations: tuple[str, ...] = ()  # operation keys it applies to; () = all
    presets: tuple[str, ...] = ()  # the sign-in presets it applies to; () = all

    def applies_to(self, preset: AuthPreset | None) -> bool:
        return not self.presets or (preset is not None and preset.id in self.presets)


@dataclass(frozen=True)
class Connector:
    slug: str
    name: str
    description: str
    color: str
    instance: dict[str, Any]
    auth: tuple[AuthPreset, ...]
    operations: tuple[tuple[str, str], ...]  # (operation key, tool name)
    settings: tuple[Setting, ...]
    document: dict[str, Any] = field(repr=False)

    def preset(self, preset_id: str) -> AuthPreset | None:
        return next((p for p in self.auth if p.id == preset_id), None)

    def spec_operations(self) -> dict[str, Operation]:
        """The manifest's operations as the importer reads them, by key."""
        return {op.key: op for op in spec_operations(self.document)}

    def document_for(
        self, preset: AuthPreset, instance_url: str = "", oauth: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """A copy of the spec whose security asks for this preset's schemes only, so the
        importer gives every tool this authentication. A bearer preset on an OAuth 2.0
        scheme (a pasted access token) becomes an HTTP bearer scheme of its own; an OAuth
        grant preset keeps its flow only. With an instance URL, every operation is served
        there, and relative OAuth URLs (ServiceNow's /oauth_token.do) are resolved on it;
        `oauth` fills the flow URLs' placeholders (Microsoft's {tenant})."""
        document = copy.deepcopy(self.document)
        schemes = document["components"]["securitySchemes"]
        names = list(preset.schemes)
        if preset.type in OAUTH_FLOWS:
            for name in names:
                flows = schemes[name].get("flows") or {}
                kept = {k: v for k, v in flows.items() if k == OAUTH_FLOWS[preset.type]}
                schemes[name]["flows"] = _resolved(kept, instance_url, oauth or {})
        if instance_url:
            document["servers"] = [{"url": instance_url}]
        if preset.type == "bearer":
            for index, name in enumerate(names):
                if schemes[name].get("type") == "oauth2":
                    token_name = f"{name}_access_token"
                    about = schemes[name].get("description", name)
                    schemes[token_name] = {
                        "type": "http",
                        "scheme": "bearer",
                        "description": f"An access token of: {about}",
                    }
                    names[index] = token_name
        keep = set(names)

        def only_preset(requirements: list[dict[str, Any]]) -> list[dict[str, Any]]:
            renamed = [
                {_rename(k, preset, names): list(preset.scopes) or v for k, v in r.items()}
                for r in requirements
            ]
            return [r for r in renamed if r and set(r) <= keep]

        document["security"] = only_preset(document.get("security") or [])
        names_by_key = dict(self.operations)
        for path, item in document["paths"].items():
            for method, op in item.items():
                if instance_url and method == "servers":
                    item[method] = [{"url": instance_url}]
                if not isinstance(op, dict):
                    continue
                if "security" in op:
                    op["security"] = only_preset(op["security"])
                # The manifest's tool name, so a later update suggests the same names.
                key = f"{method.upper()} {path}"
                if key in names_by_key:
                    op["operationId"] = names_by_key[key]
        return document


def _resolved(flows: dict[str, Any], base: str, values: dict[str, str]) -> dict[str, Any]:
    def url(value: str) -> str:
        for name, filled in values.items():
            value = value.replace("{" + name + "}", quote(filled, safe=""))
        return urljoin(base + "/", value) if base else value

    keys = ("authorizationUrl", "tokenUrl", "refreshUrl")
    return {
        flow: {k: url(v) if k in keys else v for k, v in f.items()} for flow, f in flows.items()
    }


def _rename(scheme: str, preset: AuthPreset, names: list[str]) -> str:
    return names[preset.schemes.index(scheme)] if scheme in preset.schemes else scheme


def supported_auth_types() -> set[str]:
    """The auth types the OpenAPI tool type executes (its config schema's enum), so that a
    preset becomes available as soon as the tool type learns its kind."""
    from tools_app.types.openapi import OpenApiToolType

    auth = OpenApiToolType.config_schema["properties"]["auth"]["properties"]["type"]
    return set(auth["enum"])


def _preset(raw: dict[str, Any]) -> AuthPreset:
    kind = raw["type"]
    fields = raw.get("fields") or {}
    required, optional = CREDENTIAL_FIELDS.get(kind, ((), ()))
    for name in (*required, *optional):
        fields.setdefault(name, name.replace("_", " ").capitalize().replace(" id", " ID"))
    return AuthPreset(
        id=raw["id"],
        label=raw["label"],
        type=kind,
        schemes=tuple(raw["schemes"]),
        fields=dict(fields),
        help=raw.get("help", ""),
        optional=frozenset(optional),
        scopes=tuple(raw.get("scopes") or ()),
    )


def _setting(raw: dict[str, Any]) -> Setting:
    return Setting(
        id=raw.get("id", raw["name"]),
        name=raw["name"],
        where=raw["in"],
        label=raw["label"],
        required=bool(raw.get("required", True)),
        default=str(raw.get("default", "")),
        help=raw.get("help", ""),
        operations=tuple(raw.get("operations") or ()),
        presets=tuple(raw.get("presets") or ()),
    )


def connector_load(folder: Path) -> Connector:
    manifest = yaml.safe_load((folder / "connector.yaml").read_text())
    document = yaml.safe_load((folder / "openapi.yaml").read_text())
    return Connector(
        slug=folder.name,
        name=manifest["name"],
        description=manifest["description"].strip(),
        color=manifest.get("color", "#555"),
        instance=manifest["instance"],
        auth=tuple(_preset(p) for p in manifest["auth"]),
        operations=tuple((o["key"], o["name"]) for o in manifest["operations"]),
        settings=tuple(_setting(s) for s in manifest.get("settings") or ()),
        document=document,
    )


@functools.cache
def catalogue() -> dict[str, Connector]:
    """Every connector by slug, in the order of their names."""
    connectors = [connector_load(d) for d in sorted(SPECS.iterdir()) if d.is_dir()]
    return {c.slug: c for c in sorted(connectors, key=lambda c: c.name.lower())}
