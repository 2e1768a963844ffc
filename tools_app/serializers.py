"""Shapes of the tools API: what a client may send, and what it gets back.

Input serializers check each field on its own (names, JSON Schemas, the type's config);
rules that need the database (a name already taken, who owns what) live in
tools_app.services.tools.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from jsonschema.exceptions import SchemaError
from jsonschema.validators import Draft202012Validator, validator_for
from rest_framework import serializers

from common.json_input import value_problem
from tools_app.crypto import credentials_merged, credentials_names
from tools_app.models import ExecutionMode, Tool
from tools_app.names import RESERVED_MESSAGE, RESERVED_TOOL_NAMES
from tools_app.types import ConfigError, get_type

TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
TOOL_NAME_MESSAGE = (
    "Use snake_case: lowercase letters, digits and underscores, starting with a letter "
    "(for example get_weather)."
)


def json_path(parts: Iterable[Any]) -> str:
    """`$.properties.city.type`, `$.items[0]`: where in a JSON document a problem is."""
    path = "$"
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", str(part)):
            path += f".{part}"
        else:
            path += f"[{part!r}]"
    return path


def json_schema_problem(schema: Any) -> str | None:
    """Why `schema` is not a valid JSON Schema (checked against its meta-schema), or None."""
    if not isinstance(schema, dict):
        return 'A JSON Schema must be a JSON object, for example {"type": "object"}.'
    # Depth first: the meta-schema check recurses into the schema (and a NUL or a number
    # beyond a double's range could not be stored anyway).
    problem = value_problem(schema, max_string_chars=None)
    if problem is not None:
        return problem.message
    # Without a default, validator_for silently falls back to the latest draft for an
    # unknown $schema; a typo there deserves an error instead.
    cls = validator_for(schema, default=None)
    if cls is None:
        if "$schema" in schema:
            return f"$.$schema: unknown JSON Schema dialect {schema['$schema']!r}."
        cls = Draft202012Validator
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        return f"{json_path(exc.path)}: {exc.message}"
    return None


def _check_schema(schema: Any) -> Any:
    problem = json_schema_problem(schema)
    if problem:
        raise serializers.ValidationError(problem)
    return schema


class BoundedJSONField(serializers.JSONField):
    """A JSON field whose depth (and NUL, numbers) is checked before DRF or jsonschema
    walk it: a schema nested 5,000 deep is a field error, not a RecursionError."""

    def to_internal_value(self, data: Any) -> Any:
        problem = value_problem(data, max_string_chars=None)
        if problem is not None:
            raise serializers.ValidationError(problem.message)
        return super().to_internal_value(data)


class ToolInputSerializer(serializers.Serializer):
    """A studio tool as a client creates or replaces it (PATCH: any subset)."""

    name = serializers.CharField(max_length=64, help_text="snake_case, unique.")
    description = serializers.CharField(allow_blank=True, required=False, default="")
    kind = serializers.CharField(
        max_length=16, help_text="A registered tool type (/api/tool-types/)."
    )
    input_schema = BoundedJSONField(
        required=False,
        default=dict,
        help_text='JSON Schema of the input; must be an object schema ({"type": "object"}).',
    )
    output_schema = BoundedJSONField(required=False, allow_null=True, default=None)
    execution_mode = serializers.ChoiceField(
        choices=ExecutionMode.choices, required=False, default=ExecutionMode.SYNC
    )
    timeout_seconds = serializers.FloatField(
        min_value=0.1, max_value=3600, required=False, default=30.0
    )
    config = BoundedJSONField(required=False, default=dict)
    model_output = BoundedJSONField(required=False, default=dict)
    credentials = serializers.DictField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=False),
        write_only=True,
        required=False,
        allow_null=True,
        help_text="Secrets for the type's credential_fields, stored encrypted and never "
        "returned (see has_credentials). Omit to keep the stored ones; null or {} clears them.",
    )
    credentials_update = serializers.DictField(
        child=serializers.CharField(allow_blank=False, allow_null=True, trim_whitespace=False),
        write_only=True,
        required=False,
        help_text="Changes to the stored secrets, field by field: a value replaces that one "
        "field, null removes it, the others stay (credentials_set lists what is stored).",
    )

    def validate_name(self, value: str) -> str:
        if not TOOL_NAME.match(value):
            raise serializers.ValidationError(TOOL_NAME_MESSAGE)
        if value in RESERVED_TOOL_NAMES:
            raise serializers.ValidationError(RESERVED_MESSAGE.format(name=value))
        return value

    def validate_kind(self, value: str) -> str:
        if self.instance is not None and value == self.instance.kind:
            return value  # an existing tool keeps its kind even if the type went away
        try:
            tool_type = get_type(value)
        except LookupError:
            from tools_app.types import TYPE_MODULES

            known = ", ".join(sorted(TYPE_MODULES)) or "none registered"
            raise serializers.ValidationError(
                f"Unknown tool type {value!r}. Known types: {known}."
            ) from None
        if not tool_type.creatable:
            raise serializers.ValidationError(
                f"Tools of type {value!r} are made by the studio itself and cannot be created here."
            )
        return value

    def validate_input_schema(self, value: Any) -> Any:
        if value == {}:
            value = {"type": "object", "properties": {}}
        _check_schema(value)
        if value.get("type") != "object":
            raise serializers.ValidationError(
                '$.type: the input schema must describe an object ({"type": "object", '
                '"properties": {...}}), because models call tools with named arguments.'
            )
        return value

    def validate_output_schema(self, value: Any) -> Any:
        return None if value is None else _check_schema(value)

    def validate_config(self, value: Any) -> Any:
        if not isinstance(value, dict):
            raise serializers.ValidationError("config must be a JSON object.")
        return value

    def validate_model_output(self, value: Any) -> Any:
        if not isinstance(value, dict):
            raise serializers.ValidationError("model_output must be a JSON object.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # The type checks its config and names its credentials; on PATCH the config, the
        # credentials or the kind may come alone.
        kind = attrs.get("kind", getattr(self.instance, "kind", None))
        try:
            tool_type = get_type(kind)
        except LookupError:
            return attrs
        if "config" in attrs or "kind" in attrs:
            config = attrs.get("config", getattr(self.instance, "config", {}))
            try:
                attrs["config"] = tool_type.validate_config(config)
            except ConfigError as exc:
                raise serializers.ValidationError({"config": _config_messages(exc)}) from exc
            schema = tool_type.input_schema_for(
                attrs["config"],
                attrs.get("input_schema", getattr(self.instance, "input_schema", None)),
            )
            if schema is not None:
                attrs["input_schema"] = schema
        if "credentials_update" in attrs:
            update = attrs.pop("credentials_update")
            problem = _credentials_problem({k: "" for k in update}, tool_type)
            if problem:
                raise serializers.ValidationError({"credentials_update": [problem]})
            if "credentials" not in attrs:
                attrs["credentials"] = credentials_merged(self.instance, update)
        problem = _credentials_problem(attrs.get("credentials"), tool_type)
        if problem:
            raise serializers.ValidationError({"credentials": [problem]})
        if attrs.get("credentials"):
            config = attrs.get("config", getattr(self.instance, "config", {})) or {}
            errors = tool_type.credentials_errors(config, attrs["credentials"])
            if errors:
                raise serializers.ValidationError(
                    {"credentials": [f"{path}: {message}" for path, message in errors.items()]}
                )
        timeout = attrs.get("timeout_seconds", getattr(self.instance, "timeout_seconds", None))
        limit = tool_type.max_timeout()
        if limit is not None and timeout is not None and timeout > limit:
            raise serializers.ValidationError(
                {
                    "timeout_seconds": [
                        f"Tools of type {tool_type.kind!r} may run at most {limit:g} s on "
                        f"this server; {timeout:g} s is too long."
                    ]
                }
            )
        return attrs


class ToolUpdateInputSerializer(ToolInputSerializer):
    """PUT and PATCH: the URL names the tool, so name and kind may be left out to keep them."""

    name = serializers.CharField(max_length=64, required=False, help_text="Renames the tool.")
    kind = serializers.CharField(max_length=16, required=False)


def _config_messages(exc: ConfigError) -> list[str]:
    return [
        message if path in ("", "config") else f"{path}: {message}"
        for path, message in exc.errors.items()
    ]


def _credentials_problem(credentials: dict[str, str] | None, tool_type: Any) -> str | None:
    if not credentials:
        return None
    allowed = list(tool_type.credential_fields)
    if not allowed:
        return f"Tools of type {tool_type.kind!r} take no credentials."
    unknown = sorted(set(credentials) - set(allowed))
    if unknown:
        return (
            f"Unknown credential field {unknown[0]!r}; tools of type {tool_type.kind!r} "
            f"take: {', '.join(allowed)}."
        )
    return None


class ToolOutputSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True, allow_null=True)
    has_credentials = serializers.SerializerMethodField()
    credentials_set = serializers.SerializerMethodField(
        help_text="The names of the stored credential fields (never their values)."
    )

    class Meta:
        model = Tool
        fields = [
            "name",
            "description",
            "kind",
            "input_schema",
            "output_schema",
            "execution_mode",
            "timeout_seconds",
            "config",
            "model_output",
            "source",
            "owner",
            "has_credentials",
            "credentials_set",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def get_has_credentials(self, tool: Tool) -> bool:
        return bool(tool.credentials_encrypted)

    def get_credentials_set(self, tool: Tool) -> list[str]:
        return credentials_names(tool)


class ToolTypeSerializer(serializers.Serializer):
    kind = serializers.CharField()
    label = serializers.CharField()
    config_schema = serializers.JSONField()
    credential_fields = serializers.ListField(child=serializers.CharField())
    creatable = serializers.BooleanField()
