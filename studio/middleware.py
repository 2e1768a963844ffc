"""Django's own middleware, run on the event loop under ASGI instead of a thread.

Under ASGI, Django's `MiddlewareMixin` calls each `process_request` and `process_response`
through `sync_to_async`: two crossings from the event loop to a thread and back per
middleware, about a dozen per request for settings.MIDDLEWARE, each costing more than the
work it carries. These subclasses call the same methods directly on the event loop when
that call does no I/O (headers, cookies, lazy objects), and still through a thread when
it may touch the database: a session that must be saved, stored messages, a CSRF check
of a POST to a view that is not exempt, CSRF secrets kept in the session. The checks and
headers are Django's own, unchanged; only where they run differs. A database query that
slipped onto the event loop would fail loudly (Django's SynchronousOnlyOperation), never
block it silently.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import iscoroutinefunction, sync_to_async
from csp.middleware import CSPMiddleware as DjangoCSPMiddleware
from django.conf import settings
from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.contrib.sessions import middleware as sessions
from django.http import HttpRequest, HttpResponseBase
from django.middleware import clickjacking, common, csrf, security

SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")


class OnTheLoop:
    """`MiddlewareMixin.__acall__` with `process_request` and `process_response` called
    on the event loop, unless `request_in_thread` / `response_in_thread` say otherwise."""

    def request_in_thread(self, request: HttpRequest) -> bool:
        return False

    def response_in_thread(self, request: HttpRequest, response: HttpResponseBase) -> bool:
        return False

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        middleware: Any = self
        response = None
        if hasattr(middleware, "process_request"):
            if self.request_in_thread(request):
                response = await sync_to_async(middleware.process_request)(request)
            else:
                response = middleware.process_request(request)
        response = response or await middleware.get_response(request)
        if hasattr(middleware, "process_response"):
            if self.response_in_thread(request, response):
                response = await sync_to_async(middleware.process_response)(request, response)
            else:
                response = middleware.process_response(request, response)
        return response


class SecurityMiddleware(OnTheLoop, security.SecurityMiddleware):
    pass


class CSPMiddleware(OnTheLoop, DjangoCSPMiddleware):
    pass


class CommonMiddleware(OnTheLoop, common.CommonMiddleware):
    pass


class XFrameOptionsMiddleware(OnTheLoop, clickjacking.XFrameOptionsMiddleware):
    pass


class AuthenticationMiddleware(OnTheLoop, auth.AuthenticationMiddleware):
    """Sets the lazy `request.user` and `request.auser`; nothing is read until asked."""


class SessionMiddleware(OnTheLoop, sessions.SessionMiddleware):
    """The session store is made lazily; a thread only for a session that is to be saved
    (modified, or every request saves it). A session only read leaves a Vary header."""

    def response_in_thread(self, request: HttpRequest, response: HttpResponseBase) -> bool:
        session: Any = getattr(request, "session", None)
        if session is None:
            return False
        return session.modified or settings.SESSION_SAVE_EVERY_REQUEST


class MessageMiddleware(OnTheLoop, messages.MessageMiddleware):
    """A thread only when messages were read or added (their store may be the session)."""

    def response_in_thread(self, request: HttpRequest, response: HttpResponseBase) -> bool:
        store: Any = getattr(request, "_messages", None)
        return store is not None and (store.used or store.added_new)


class CsrfViewMiddleware(OnTheLoop, csrf.CsrfViewMiddleware):
    """The cookie is read and set on the loop; the check of an unsafe request to a view
    that is not exempt (it may read a form body) runs in a thread, as does everything when
    the CSRF secret lives in the session."""

    def request_in_thread(self, request: HttpRequest) -> bool:
        return settings.CSRF_USE_SESSIONS

    def response_in_thread(self, request: HttpRequest, response: HttpResponseBase) -> bool:
        return settings.CSRF_USE_SESSIONS

    def __init__(self, get_response: Any) -> None:
        super().__init__(get_response)
        if iscoroutinefunction(get_response):
            # Django awaits a coroutine process_view as it is, and calls a plain one
            # through a thread; the sync handler keeps the plain one.
            self.process_view = self._process_view_async  # type: ignore[method-assign,assignment]

    async def _process_view_async(
        self, request: HttpRequest, callback: Any, args: Any, kwargs: Any
    ) -> HttpResponseBase | None:
        check = super().process_view
        exempt = getattr(callback, "csrf_exempt", False) or request.method in SAFE_METHODS
        if exempt and not settings.CSRF_USE_SESSIONS:
            return check(request, callback, args, kwargs)
        return await sync_to_async(check)(request, callback, args, kwargs)
