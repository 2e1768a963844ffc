"""REST for the editor: overrides with ETag/If-Match, the edit lock, revisions, restore.

A write names the version it started from, either as `If-Match: "<version>"` (a stale one
gets 412) or as `version` in the body (a stale one gets 409 with the current values);
a write naming neither gets 428. A write also names the edit lock session it comes from
as `X-Edit-Lock: <lock id>`: while a live lock is held by any other session (another
user, or the same user's other tab or client) it gets 423 with who holds the lock, since
and until when; with no live lock a write without the header goes on, guarded by the
version check.
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents_core.editor import selectors
from agents_core.editor.services import locks, permissions, revisions
from agents_core.models import Agent, Revision
from agents_core.selectors import agent_get
from common.exceptions import ApplicationError, Conflict, NotFound


def _agent(request: Request, slug: str) -> Agent:
    agent = agent_get(user=request.user, slug=slug)
    if agent is None:
        raise NotFound(f"No agent {slug!r}.", code="not_found")
    return agent


def _etag(version: int) -> str:
    return f'"{version}"'


def _if_match(request: Request) -> int | None:
    header = request.headers.get("If-Match")
    if header is None:
        return None
    value = header.strip().removeprefix("W/").strip('"')
    if not value.isdigit():
        raise ApplicationError(
            'If-Match must name the version you started from, like If-Match: "3".',
            status_code=status.HTTP_428_PRECONDITION_REQUIRED,
            code="precondition_required",
        )
    return int(value)


def lock_session(request: Request) -> int | None:
    """The lock session a write names (`X-Edit-Lock: <lock id>`), or None."""
    header = request.headers.get(locks.LOCK_HEADER)
    if header is None or header.strip() == "":
        return None
    if not header.strip().isdigit():
        raise ApplicationError(
            f"{locks.LOCK_HEADER} must be the id of your edit lock, like {locks.LOCK_HEADER}: 12.",
            code="invalid_lock_header",
            extra={locks.LOCK_HEADER: ["Not a lock id."]},
        )
    return int(header)


def write_version(request: Request, *, required: bool = True) -> tuple[int | None, bool]:
    """(version, from_if_match). The body's `version` and If-Match must agree.

    `required=False` (the agents REST API) lets a write name no version: (None, False).
    """
    header = _if_match(request)
    body = request.data.get("version") if isinstance(request.data, dict) else None
    if body is not None and (isinstance(body, bool) or not isinstance(body, int)):
        raise ApplicationError(
            "version must be an integer.", extra={"version": ["Not an integer."]}
        )
    if header is not None and body is not None and header != body:
        raise ApplicationError("If-Match and the body's version disagree.", code="version_mismatch")
    if header is None and body is None and required:
        raise ApplicationError(
            'Name the version you started from: If-Match: "<version>" or a `version` field.',
            status_code=status.HTTP_428_PRECONDITION_REQUIRED,
            code="precondition_required",
        )
    return (header, True) if header is not None else (body, False)


def run_versioned(request: Request, call, *, required: bool = True) -> Any:  # noqa: ANN001
    """Call a versioned service; a stale If-Match becomes 412, a stale body version 409."""
    version, from_header = write_version(request, required=required)
    try:
        return call(version)
    except Conflict as exc:
        if from_header:
            exc.status_code = status.HTTP_412_PRECONDITION_FAILED
            exc.code = "precondition_failed"
        raise


def saved_response(result: revisions.SaveResult) -> Response:
    body: dict[str, Any] = selectors.editor_state(agent=result.agent)
    body["stripped"] = result.stripped
    body["revision"] = selectors.revision_info(result.revision) if result.revision else None
    return Response(body, headers={"ETag": _etag(body["version"])})


def _data(request: Request) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise ApplicationError("Send a JSON object.", code="invalid")
    return {k: v for k, v in request.data.items() if k != "version"}


# --- OpenAPI description (the views validate through the services, not these) ----------
class OverridesWriteDoc(serializers.Serializer):
    version = serializers.IntegerField(required=False, help_text="The version you started from.")
    instructions = serializers.JSONField(required=False, help_text="null resets to code.")
    tool_descriptions = serializers.DictField(
        child=serializers.CharField(allow_null=True),
        required=False,
        help_text="{tool key: description}; null resets one to code.",
    )
    tools_removed = serializers.ListField(child=serializers.CharField(), required=False)
    tools_added = serializers.DictField(child=serializers.CharField(), required=False)
    tools = serializers.DictField(
        child=serializers.CharField(), required=False, help_text="Studio agents: {key: tool}."
    )
    name = serializers.CharField(required=False)
    description = serializers.CharField(required=False)
    model = serializers.CharField(required=False)


class ResetDoc(serializers.Serializer):
    version = serializers.IntegerField(required=False)
    field = serializers.ChoiceField(choices=["instructions", "tool_descriptions", "tools"])
    key = serializers.CharField(required=False)


class VersionDoc(serializers.Serializer):
    version = serializers.IntegerField(required=False)


IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description='The version you started from, e.g. "3" (or send `version` in the body).',
)
EDIT_LOCK = OpenApiParameter(
    locks.LOCK_HEADER,
    OpenApiTypes.INT,
    OpenApiParameter.HEADER,
    description="Your edit lock session (the id POST .../lock/ returned). Without it a "
    "write is refused (423) while anyone holds a live lock on the agent.",
)
LOCKED = OpenApiResponse(
    OpenApiTypes.OBJECT,
    description="Another session holds a live edit lock: `holder`, `since`, `expires` "
    "(ISO times), `since_text`, `expires_text` (in words), `yours` (your other session).",
)
STATE = OpenApiResponse(OpenApiTypes.OBJECT, description="The editor state; ETag = version.")
WRITE_RESPONSES = {
    200: STATE,
    409: OpenApiResponse(OpenApiTypes.OBJECT, description="Stale `version`: the current state."),
    412: OpenApiResponse(OpenApiTypes.OBJECT, description="Stale If-Match: the current state."),
    423: LOCKED,
    428: OpenApiResponse(OpenApiTypes.OBJECT, description="No version named."),
}
LOCK = OpenApiResponse(OpenApiTypes.OBJECT, description='{"lock": {...} | null}')
LOCK_RESPONSES = {200: LOCK, 423: LOCKED}
write_schema = extend_schema(
    request=OverridesWriteDoc, parameters=[IF_MATCH, EDIT_LOCK], responses=WRITE_RESPONSES
)


class LockTakeDoc(serializers.Serializer):
    take_over = serializers.BooleanField(
        required=False, help_text="Move your own live lock from another session to this one."
    )


class EditorOverridesApi(APIView):
    @extend_schema(responses={200: STATE, 304: OpenApiResponse(description="Unchanged.")})
    def get(self, request: Request, slug: str) -> Response:
        agent = _agent(request, slug)
        etag = _etag(agent.version)
        if etag in [
            t.strip().removeprefix("W/")
            for t in request.headers.get("If-None-Match", "").split(",")
        ]:
            return Response(status=status.HTTP_304_NOT_MODIFIED, headers={"ETag": etag})
        state = selectors.editor_state(agent=agent)
        return Response(state, headers={"ETag": _etag(state["version"])})

    @write_schema
    def put(self, request: Request, slug: str) -> Response:
        return self._save(request, slug, partial=False)

    @write_schema
    def patch(self, request: Request, slug: str) -> Response:
        return self._save(request, slug, partial=True)

    def _save(self, request: Request, slug: str, *, partial: bool) -> Response:
        agent = _agent(request, slug)
        data = _data(request)
        result = run_versioned(
            request,
            lambda version: revisions.override_save(
                agent=agent,
                user=request.user,
                data=data,
                version=version,
                lock_id=lock_session(request),
                partial=partial,
            ),
        )
        return saved_response(result)


class EditorResetApi(APIView):
    """POST {"field": "instructions" | "tool_descriptions" | "tools", "key"?: "<tool key>"}."""

    @extend_schema(request=ResetDoc, parameters=[IF_MATCH, EDIT_LOCK], responses=WRITE_RESPONSES)
    def post(self, request: Request, slug: str) -> Response:
        agent = _agent(request, slug)
        data = _data(request)
        result = run_versioned(
            request,
            lambda version: revisions.override_reset(
                agent=agent,
                user=request.user,
                field=str(data.get("field", "")),
                key=data.get("key"),
                version=version,
                lock_id=lock_session(request),
            ),
        )
        return saved_response(result)


class EditLockApi(APIView):
    @extend_schema(responses={200: LOCK})
    def get(self, request: Request, slug: str) -> Response:
        lock = selectors.lock_current(agent=_agent(request, slug))
        return Response({"lock": selectors.lock_info(lock)})

    @extend_schema(request=LockTakeDoc, responses=LOCK_RESPONSES)
    def post(self, request: Request, slug: str) -> Response:
        take_over = isinstance(request.data, dict) and request.data.get("take_over") is True
        lock = locks.lock_take(agent=_agent(request, slug), user=request.user, take_over=take_over)
        return Response({"lock": selectors.lock_info(lock)})

    @extend_schema(
        request=None,
        parameters=[
            EDIT_LOCK,
            OpenApiParameter("lock", int, description="Renew only this lock session."),
        ],
        responses={**LOCK_RESPONSES, 409: OpenApiTypes.OBJECT},
    )
    def put(self, request: Request, slug: str) -> Response:
        session = request.query_params.get("lock", "")
        lock = locks.lock_renew(
            agent=_agent(request, slug),
            user=request.user,
            lock_id=int(session) if session.isdigit() else lock_session(request),
        )
        return Response({"lock": selectors.lock_info(lock)})

    @extend_schema(
        responses={204: None},
        parameters=[OpenApiParameter("lock", int, description="Release only this lock session.")],
    )
    def delete(self, request: Request, slug: str) -> Response:
        session = request.query_params.get("lock", "")
        locks.lock_release(
            agent=_agent(request, slug),
            user=request.user,
            lock_id=int(session) if session.isdigit() else None,
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class EditLockBreakApi(APIView):
    @extend_schema(request=None, responses={200: LOCK, 403: OpenApiTypes.OBJECT})
    def post(self, request: Request, slug: str) -> Response:
        lock = locks.lock_break(agent=_agent(request, slug), user=request.user)
        return Response({"lock": selectors.lock_info(lock)})


def _readable_agent(request: Request, slug: str) -> Agent:
    agent = _agent(request, slug)
    if not permissions.can_view_revisions(user=request.user, agent=agent):
        raise permissions.Forbidden(
            "Reading revisions needs the view permission on agents.", code="permission_denied"
        )
    return agent


class RevisionListApi(APIView):
    """Newest first, paginated like the other lists (`?limit=&offset=`)."""

    @extend_schema(
        operation_id="agent_revisions_list",
        parameters=[OpenApiParameter("limit", int), OpenApiParameter("offset", int)],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, slug: str) -> Response:
        agent = _readable_agent(request, slug)
        paginator = LimitOffsetPagination()
        page = paginator.paginate_queryset(selectors.revision_list(agent=agent), request, view=self)
        revisions = page or []  # None only when the view does not paginate
        return paginator.get_paginated_response([selectors.revision_info(r) for r in revisions])


class RevisionDetailApi(APIView):
    @extend_schema(operation_id="agent_revision_retrieve", responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str, revision_id: int) -> Response:
        agent = _readable_agent(request, slug)
        revision = get_object_or_404(Revision, agent=agent, pk=revision_id)
        return Response(selectors.revision_detail(revision))


class RevisionRestoreApi(APIView):
    @extend_schema(request=VersionDoc, parameters=[IF_MATCH, EDIT_LOCK], responses=WRITE_RESPONSES)
    def post(self, request: Request, slug: str, revision_id: int) -> Response:
        agent = _readable_agent(request, slug)
        revision = get_object_or_404(Revision, agent=agent, pk=revision_id)
        result = run_versioned(
            request,
            lambda version: revisions.revision_restore(
                revision=revision,
                user=request.user,
                version=version,
                lock_id=lock_session(request),
            ),
        )
        return saved_response(result)
