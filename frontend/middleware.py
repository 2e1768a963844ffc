"""Every page needs a signed-in user; the API answers 401/403 itself (DRF)."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse

# Paths that must work signed out: the login page, the admin (its own login), static
# files, and the API (DRF authenticates with sessions or tokens and answers 401/403).
PUBLIC_PREFIXES = ("/accounts/login/", "/admin/", "/api/", "/static/")


class LoginRequiredEverywhereMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(PUBLIC_PREFIXES) and not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        return self.get_response(request)
