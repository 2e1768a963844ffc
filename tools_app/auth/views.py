"""The browser's side of the connect flow: /oauth/tools/<name>/connect (or
/oauth/sources/<id>/connect for a source with its own OAuth) redirects to the
authorization server, /oauth/callback comes back with the code (tools_app.auth.connect)
and then to the tool's page, or to the studio page named by `?next=` (a path of this
site only, e.g. the connectors page). The status and disconnect are on the REST API
(tools_app.api.connection)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET

from common.exceptions import ApplicationError
from tools_app.auth.connect import connect_finish, connect_start, source_connect_start
from tools_app.models import ToolSource
from tools_app.selectors import tool_get


def _problem(request: HttpRequest, exc: ApplicationError) -> HttpResponse:
    context = {"message": exc.message, "code": exc.code}
    return TemplateResponse(request, "frontend/oauth_error.html", context, status=exc.status_code)


def _return_to(request: HttpRequest) -> str:
    return_to = request.GET.get("next", "")
    # Only a path of this site: never send the user elsewhere after the authorization.
    if not (return_to.startswith("/") and url_has_allowed_host_and_scheme(return_to, None)):
        return ""
    return return_to


def _to_authorization(
    request: HttpRequest, start: Callable[..., str], **target: Any
) -> HttpResponse:
    """Redirect to the authorization server (`start`: a connect_start of
    tools_app.auth.connect), or show why not."""
    try:
        url = start(
            session=request.session,
            redirect_uri=request.build_absolute_uri(reverse("oauth-callback")),
            return_to=_return_to(request),
            **target,
        )
    except ApplicationError as exc:
        return _problem(request, exc)
    return HttpResponseRedirect(url)


@require_GET
@login_required
def connect(request: HttpRequest, name: str) -> HttpResponse:
    tool = tool_get(user=request.user, name=name)
    if tool is None:
        return _problem(request, ApplicationError(f"No tool named {name!r}.", status_code=404))
    return _to_authorization(request, connect_start, tool=tool)


@require_GET
@login_required
def source_connect(request: HttpRequest, source_id: int) -> HttpResponse:
    """Connect the user's account at a source that signs in with its own OAuth (MCP)."""
    source = ToolSource.objects.filter(pk=source_id, owner_id=request.user.pk).first()
    if source is None:
        return _problem(request, ApplicationError(f"No source {source_id}.", status_code=404))
    return _to_authorization(request, source_connect_start, source=source)


@require_GET
@login_required
def callback(request: HttpRequest) -> HttpResponse:
    try:
        page, return_to = connect_finish(
            session=request.session, user=request.user, params=request.GET.dict()
        )
    except ApplicationError as exc:
        return _problem(request, exc)
    parts = urlsplit(return_to or page)
    query = f"{parts.query}&connected=1" if parts.query else "connected=1"
    return HttpResponseRedirect(urlunsplit(("", "", parts.path, query, parts.fragment)))
