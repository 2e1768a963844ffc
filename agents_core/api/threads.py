"""REST endpoints of the chat: threads, their messages and events, runs.

/api/threads/ (list, create), /api/threads/<id>/ (read, rename, delete),
/api/threads/<id>/messages/, /api/threads/<id>/events/?after=<seq>,
/api/threads/<id>/runs/ (start), /api/threads/<id>/suspended/, /api/threads/<id>/tasks/,
/api/runs/<id>/ , /api/runs/<id>/resume, /api/runs/<id>/abort,
/api/runs/<id>/client-tool-result.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents_core.models import Agent, Run, Thread
from agents_core.selectors import run_for, thread_for, thread_list
from agents_core.services import runs as run_services
from agents_core.services import threads as thread_services
from agents_core.tool_side import task_list_data

TAG = ["threads"]
LIST_LIMIT = 200


class IsoDateTimeField(serializers.ReadOnlyField):
    """A timestamp as `datetime.isoformat()` writes it (the chat's wire format)."""

    def to_representation(self, value: Any) -> str | None:
        return value.isoformat() if value is not None else None


class IdField(serializers.ReadOnlyField):
    def to_representation(self, value: Any) -> str | None:
        return str(value) if value is not None else None


class ToolCallOutput(serializers.Serializer):
    toolCallId = serializers.CharField(source="call_id")  # noqa: N815 - the protocol's names
    toolName = serializers.CharField(source="tool_name")  # noqa: N815
    status = serializers.CharField()
    step = serializers.IntegerField()
    error = serializers.CharField()
    suspendPayload = serializers.JSONField(source="suspend_payload")  # noqa: N815
    hookDecisions = serializers.JSONField(source="hook_decisions")  # noqa: N815


class RunOutput(serializers.Serializer):
    id = IdField(source="pk")
    thread = IdField(source="thread_id")
    agent = serializers.CharField(source="agent.slug")
    status = serializers.CharField()
    step = serializers.IntegerField()
    error = serializers.CharField()
    usage = serializers.JSONField()
    # The model that answered the last model call (the agent's or a fallback).
    model = serializers.CharField()
    options = serializers.JSONField()
    createdAt = IsoDateTimeField(source="created_at")  # noqa: N815
    finishedAt = IsoDateTimeField(source="finished_at")  # noqa: N815


class RunWithCallsOutput(RunOutput):
    toolCalls = ToolCallOutput(source="tool_calls.all", many=True)  # noqa: N815


class ThreadOutput(serializers.Serializer):
    """A thread with its active run: the queryset comes from `thread_list` or
    `thread_for(..., with_runs=True)`, which prefetch `active_runs`."""

    id = IdField(source="pk")
    agent = serializers.CharField(source="agent.slug")
    agentName = serializers.CharField(source="agent.name")  # noqa: N815
    title = serializers.CharField()
    resourceId = serializers.CharField(source="resource_id")  # noqa: N815
    metadata = serializers.JSONField()
    lastSeq = serializers.IntegerField(source="last_seq")  # noqa: N815
    activeRun = serializers.SerializerMethodField()  # noqa: N815
    createdAt = IsoDateTimeField(source="created_at")  # noqa: N815
    updatedAt = IsoDateTimeField(source="updated_at")  # noqa: N815

    def get_activeRun(self, thread: Thread) -> dict[str, Any] | None:  # noqa: N802
        active = thread.active_runs  # type: ignore[attr-defined]
        return RunOutput(active[0]).data if active else None


class MessageOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    role = serializers.CharField()
    parts = serializers.JSONField()
    run = IdField(source="run_id")
    createdAt = IsoDateTimeField(source="created_at")  # noqa: N815


def _thread(request: Request, thread_id: Any) -> Response:
    return Response(ThreadOutput(thread_for(request.user, thread_id, with_runs=True)).data)


def _run(run: Run, code: int = status.HTTP_200_OK) -> Response:
    return Response(RunOutput(run).data, status=code)


class ThreadCreateInput(serializers.Serializer):
    agent = serializers.SlugField()
    title = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")


class ThreadUpdateInput(serializers.Serializer):
    title = serializers.CharField(allow_blank=True, max_length=200)


class RunStartInput(serializers.Serializer):
    message = serializers.CharField(trim_whitespace=True)
    options = serializers.DictField(required=False, default=dict)


class RunResumeInput(serializers.Serializer):
    toolCallId = serializers.CharField()  # noqa: N815 - the protocol's name
    payload = serializers.DictField()


class ClientToolResultInput(serializers.Serializer):
    toolCallId = serializers.CharField()  # noqa: N815
    output = serializers.JSONField(required=False, allow_null=True)
    error = serializers.CharField(required=False, allow_blank=False)


def _valid(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class ThreadListApi(APIView):
    @extend_schema(tags=TAG, parameters=[OpenApiParameter("agent", str, required=False)])
    def get(self, request: Request) -> Response:
        threads = thread_list(user=request.user, agent=request.query_params.get("agent"))
        return Response({"results": ThreadOutput(threads[:LIST_LIMIT], many=True).data})

    @extend_schema(tags=TAG, request=ThreadCreateInput)
    def post(self, request: Request) -> Response:
        data = _valid(ThreadCreateInput, request)
        agent = Agent.objects.live().visible_to(request.user).filter(slug=data["agent"]).first()
        if agent is None:
            raise serializers.ValidationError({"agent": [f"No agent {data['agent']!r}."]})
        thread = thread_services.thread_create(user=request.user, agent=agent, title=data["title"])
        # A new thread has no runs yet; ThreadOutput reads the prefetched list.
        thread.active_runs = []  # type: ignore[attr-defined]
        return Response(ThreadOutput(thread).data, status=status.HTTP_201_CREATED)


class ThreadDetailApi(APIView):
    @extend_schema(tags=TAG)
    def get(self, request: Request, thread_id: Any) -> Response:
        return _thread(request, thread_id)

    @extend_schema(tags=TAG, request=ThreadUpdateInput)
    def patch(self, request: Request, thread_id: Any) -> Response:
        thread = thread_for(request.user, thread_id)
        thread_services.thread_rename(
            thread=thread, title=_valid(ThreadUpdateInput, request)["title"]
        )
        return _thread(request, thread_id)

    @extend_schema(tags=TAG)
    def delete(self, request: Request, thread_id: Any) -> Response:
        thread_for(request.user, thread_id).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class ThreadMessagesApi(APIView):
    @extend_schema(tags=TAG)
    def get(self, request: Request, thread_id: Any) -> Response:
        thread = thread_for(request.user, thread_id)
        messages = thread_services.thread_messages(thread=thread)
        return Response({"results": MessageOutput(messages, many=True).data})


class ThreadEventsApi(APIView):
    @extend_schema(tags=TAG, parameters=[OpenApiParameter("after", int, required=False)])
    def get(self, request: Request, thread_id: Any) -> Response:
        thread = thread_for(request.user, thread_id)
        try:
            after = max(0, int(request.query_params.get("after", 0)))
        except ValueError:
            raise serializers.ValidationError({"after": ["An integer sequence number."]}) from None
        events = thread_services.thread_events_after(thread_id=thread.pk, after=after)
        return Response(
            {
                "events": events,
                "lastSeq": thread.last_seq,
                "has_more": len(events) == thread_services.EVENTS_PAGE,
            }
        )


class ThreadRunsApi(APIView):
    @extend_schema(tags=TAG, request=RunStartInput)
    def post(self, request: Request, thread_id: Any) -> Response:
        thread = thread_for(request.user, thread_id)
        data = _valid(RunStartInput, request)
        run = run_services.run_start_safe(
            thread=thread, message=data["message"], user=request.user, options=data["options"]
        )
        return _run(run, status.HTTP_201_CREATED)


class ThreadSuspendedApi(APIView):
    @extend_schema(tags=TAG)
    def get(self, request: Request, thread_id: Any) -> Response:
        thread = thread_for(request.user, thread_id)
        return Response({"results": thread_services.thread_suspended_calls(thread=thread)})


class ThreadTasksApi(APIView):
    @extend_schema(tags=TAG)
    def get(self, request: Request, thread_id: Any) -> Response:
        thread = thread_for(request.user, thread_id)
        return Response({"tasks": task_list_data(thread.pk)})


class RunDetailApi(APIView):
    @extend_schema(tags=TAG)
    def get(self, request: Request, run_id: Any) -> Response:
        return Response(RunWithCallsOutput(run_for(request.user, run_id)).data)


class RunResumeApi(APIView):
    @extend_schema(tags=TAG, request=RunResumeInput)
    def post(self, request: Request, run_id: Any) -> Response:
        run = run_for(request.user, run_id)
        data = _valid(RunResumeInput, request)
        run = run_services.run_resume(
            run=run, tool_call_id=data["toolCallId"], payload=data["payload"], user=request.user
        )
        return _run(run)


class RunClientToolResultApi(APIView):
    @extend_schema(tags=TAG, request=ClientToolResultInput)
    def post(self, request: Request, run_id: Any) -> Response:
        run = run_for(request.user, run_id)
        data = _valid(ClientToolResultInput, request)
        run = run_services.client_tool_result(
            run=run,
            tool_call_id=data["toolCallId"],
            output=data.get("output"),
            error=data.get("error"),
            user=request.user,
        )
        return _run(run)


class RunAbortApi(APIView):
    @extend_schema(tags=TAG, request=None)
    def post(self, request: Request, run_id: Any) -> Response:
        run = run_for(request.user, run_id)
        return _run(run_services.run_abort(run=run, user=request.user))
