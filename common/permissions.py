"""A REST permission that holds every write to a well-formed body, also where the view
reads none.

DRF parses a body only when a view reads `request.data`; an endpoint that takes no body
(abort, lock, digest) would act on a request whose body is garbage, 100,000 levels deep
or larger than the limit. Parsing it here, after authentication and before the view,
refuses such a request with the parser's error (common.parsers) and writes nothing.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

WRITE_METHODS = ("POST", "PUT", "PATCH")


class WellFormedBody(BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        if request.method in WRITE_METHODS:
            request.data  # noqa: B018 - parsing is the check; errors are raised as they are
        return True
