"""The DRF exception handler: maps the studio's ApplicationError (and Django's errors a
request can cause) to JSON responses `{"detail", "code", ...}`.

A module of its own: importing DRF's views reads the REST settings, whose parser imports
common.exceptions."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from common.exceptions import ApplicationError, body_too_large

logger = logging.getLogger(__name__)


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, RequestDataTooBig):
        # Django's own body limit (DATA_UPLOAD_MAX_MEMORY_SIZE, the same number as
        # STUDIO_MAX_BODY_BYTES): a 413 in JSON rather than Django's HTML 400 page.
        exc = body_too_large(settings.STUDIO_MAX_BODY_BYTES)
    elif isinstance(exc, RecursionError):
        # Input is bounded where it enters (common.json_input); a structure that still
        # nests deeper than Python can walk is refused, and logged to find where it came in.
        logger.warning("RecursionError while handling a request", exc_info=exc)
        exc = ApplicationError("The input is nested too deeply to be processed.", code="too_deep")
    if isinstance(exc, ApplicationError):
        body = {"detail": exc.message, "code": exc.code, **exc.extra}
        return Response(body, status=exc.status_code)
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}
        exc = exceptions.ValidationError(detail)
    return drf_exception_handler(exc, context)
