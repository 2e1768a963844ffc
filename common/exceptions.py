"""One domain error a user can act on; common/exception_handler.py maps it to HTTP."""

from __future__ import annotations

from typing import Any

from rest_framework import status


class ApplicationError(Exception):
    """A domain error a user can act on: a message, an HTTP status and optional details.

    `extra` is merged into the error body, e.g. {"errors": [{"path": "$.x", ...}]}.
    """

    status_code: int = status.HTTP_400_BAD_REQUEST

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        code: str = "invalid",
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.extra = extra or {}
        if status_code is not None:
            self.status_code = status_code


class NotFound(ApplicationError):
    status_code: int = status.HTTP_404_NOT_FOUND


class Conflict(ApplicationError):
    status_code: int = status.HTTP_409_CONFLICT


def body_too_large(limit: int) -> ApplicationError:
    message = f"The body is larger than {limit} bytes."
    return ApplicationError(
        message,
        status_code=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        code="body_too_large",
        extra={"errors": [{"path": "$", "message": message}], "limit": limit},
    )
