"""Tool types: one subpackage per kind (tools_app/types/<kind>/), each with the same
shape, registered here. Adding a type means copying a sibling.

A type module exposes a `ToolType` subclass instance named `tool_type`:

    class HttpToolType(ToolType):
        kind = "http"
        label = "HTTP request"
        config_schema = {...}          # JSON Schema of Tool.config (drives the UI form)
        credential_fields = ["token"]  # secrets kept encrypted (tools_app.crypto)

        def validate_config(self, config: dict) -> dict: ...   # raise ConfigError
        def credentials_errors(self, config, credentials) -> dict: ...  # {path: message}
        def max_timeout(self) -> float | None: ...             # optional
        async def execute(self, tool, input, context): ...     # the tool's output

`execute` receives the Tool row, the validated input and the execution context of
tools_app.execution; it returns the output or raises (the pipeline records the error).
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any, ClassVar


class ConfigError(ValueError):
    """Invalid type-specific configuration: {field path: message}."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


class ToolType:
    kind: ClassVar[str]
    label: ClassVar[str]
    config_schema: ClassVar[dict[str, Any]] = {"type": "object"}
    credential_fields: ClassVar[list[str]] = []
    # Types whose rows are made by the studio itself (system tools, code tools) are not
    # offered in the "create tool" picker.
    creatable: ClassVar[bool] = True

    def validate_config(self, config: dict[str, Any]) -> dict[str, Any]:
        from jsonschema import Draft202012Validator

        errors = {
            "config"
            + "".join(f".{p}" if isinstance(p, str) else f"[{p}]" for p in e.path): e.message
            for e in Draft202012Validator(self.config_schema).iter_errors(config)
        }
        if errors:
            raise ConfigError(errors)
        return config

    def credentials_errors(
        self, config: dict[str, Any], credentials: dict[str, Any]
    ) -> dict[str, str]:
        """{JSON path: message} for secrets this config cannot use (none by default)."""
        return {}

    def input_schema_for(self, config: dict[str, Any], given: Any) -> dict[str, Any] | None:
        """The input schema a tool of this type gets instead of `given` (None: keep it)."""
        return None

    def max_timeout(self) -> float | None:
        """The longest timeout a tool of this type may have (None: the API's own bound)."""
        return None

    def wait_seconds(self, tool: Any) -> float:
        """How long the pipeline waits for `execute`: the tool's timeout, unless the type
        enforces that timeout itself and may have to wait before it starts."""
        return tool.timeout_seconds

    async def execute(self, tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
        raise NotImplementedError


IDEMPOTENCY_HEADER = "Idempotency-Key"


def add_idempotency_header(headers: dict[str, str], context: Any) -> None:
    """HTTP-based types send an async run's idempotency key (the same on every attempt of
    the run) as `Idempotency-Key`, the header the IETF httpapi draft names, so the API
    called can recognise a repeat; a header of that name the tool sets itself wins."""
    key = getattr(context, "idempotency_key", None)
    if key and not any(name.lower() == IDEMPOTENCY_HEADER.lower() for name in headers):
        headers[IDEMPOTENCY_HEADER] = key


# kind -> module path of its subpackage; each module defines `tool_type`.
TYPE_MODULES: dict[str, str] = {}


def register(kind: str, module: str) -> None:
    TYPE_MODULES[kind] = module
    get_type.cache_clear()


@cache
def get_type(kind: str) -> ToolType:
    try:
        module = TYPE_MODULES[kind]
    except KeyError:
        raise LookupError(f"Unknown tool type {kind!r}") from None
    return importlib.import_module(module).tool_type


def all_types() -> list[ToolType]:
    return [get_type(kind) for kind in TYPE_MODULES]
