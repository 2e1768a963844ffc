"""Every page needs a signed-in user; the API answers 401/403 itself (DRF)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse

# Paths that must work signed out: the login page, the admin (its own login), static
# files, and the API (DRF authenticates with sessions or tokens and answers 401/403).
PUBLIC_PREFIXES = ("/accounts/login/", "/admin/", "/api/", "/static/")


class LoginRequiredEverywhereMiddleware:
    """Sync and async: under ASGI every middleware of the chain is async, so a request
    crosses from the event loop to a thread once (for the view), not at each sync
    middleware and back."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if iscoroutinefunction(self):
            return self._acall(request)
        if not request.path.startswith(PUBLIC_PREFIXES) and not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        return self.get_response(request)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(PUBLIC_PREFIXES):
            user = await request.auser()
            request.user = user  # the page's view reads it without a second lookup
            if not user.is_authenticated:
                return redirect_to_login(request.get_full_path())
        response: Awaitable[HttpResponse] = self.get_response(request)
        return await response
