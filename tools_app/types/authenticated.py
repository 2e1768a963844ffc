"""What the HTTP-based tool types share: the auth config and its secrets (tools_app.auth).
A type lists `AuthenticatedType` first among its bases; its own `validate_config` calls
super() and then checks the rest."""

from __future__ import annotations

from typing import Any, ClassVar

from tools_app.auth import CREDENTIAL_FIELDS, auth_config_errors, credentials_errors
from tools_app.types import ConfigError, ToolType


class AuthenticatedType(ToolType):
    credential_fields: ClassVar[list[str]] = CREDENTIAL_FIELDS

    def validate_config(self, config: dict[str, Any]) -> dict[str, Any]:
        config = super().validate_config(config)
        errors = auth_config_errors(config.get("auth"))
        if errors:
            raise ConfigError(errors)
        return config

    def credentials_errors(
        self, config: dict[str, Any], credentials: dict[str, Any]
    ) -> dict[str, str]:
        return credentials_errors(config.get("auth"), credentials)
