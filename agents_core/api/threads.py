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
from agents_core.runtime.task_tools import task_list_data
from agents_core.services import runs as run_services
from agents_core.services import threads as thread_services

TAG = ["threads"]


def thread_data(thread: Thread) -> dict[str, Any]:
    active = run_services.thread_active_run(thread=thread, suspended=True)
    return {
        "id": str(thread.pk),
        "agent": thread.agent.slug,
        "agentName": thread.agent.name,
        "title": thread.title,
        "resourceId": thread.resource_id,
        "metadata": thread.metadata,
        "lastSeq": thread.last_seq,
        "activeRun": run_data(active) if active is not None else None,
        "createdAt": thread.created_at.isoformat(),
        "updatedAt": thread.updated_at.isoformat(),
    }


def run_data(run: Run, *, calls: bool = False) -> dict[str, Any]:
    data = {
        "id": str(run.pk),
        "thread": str(run.thread_id),
        "agent": run.agent.slug,
        "status": run.status,
        "step": run.step,
        "error": run.error,
        "usage": run.usage,
        "options": run.options,
        "createdAt": run.created_at.isoformat(),
        "finishedAt": run.finished_at.isoformat() if run.finished_at else None,
    }
    if calls:
        data["toolCalls"] = [
            {
                "toolCallId": call.call_id,
                "toolName": call.tool_name,
                "status": call.status,
                "step": call.step,
                "error": call.error,
                "suspendPayload": call.suspend_payload,
                "hookDecisions": call.hook_decisions,
            }
            for call in run.tool_calls.all()
        ]
    return data


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
        threads = thread_services.thread_list(
            user=request.user, agent=request.query_params.get("agent")
        )
        return Response({"results": [thread_data(t) for t in threads[:200]]})

    @extend_schema(tags=TAG, request=ThreadCreateInput)
    def post(self, request: Request) -> Response:
        data = _valid(ThreadCreateInput, request)
        agent = Agent.objects.live().visible_to(request.user).filter(slug=data["agent"]).first()
        if agent is None:
            raise serializers.ValidationError({"agent": [f"No agent {data['agent']!r}."]})
        thread = thread_services.thread_create(user=request.user, agent=agent, title=data["title"])
        return Response(thread_data(thread), status=status.HTTP_201_CREATED)


class ThreadDetailApi(APIView):
    @extend_schema(tags=TAG)
    def get(self, request: Request, thread_id: Any) -> Response:
        thread = thread_services.thread_get(user=request.user, thread_id=thread_id)
        return Response(thread_data(thread))

    @extend_schema(tags=TAG, request=ThreadUpdateInput)
    def patch(self, request: Request, thread_id: Any) -> Response:
        thread = thread_services.thread_get(user=request.user, thread_id=thread_id)
        thread.title = _valid(ThreadUpdateInput, request)["title"]
        thread.save(update_fields=["title", "updated_at"])
        return Response(thread_data(thread))

    @extend_schema(tags=TAG)
    def delete(self, request: Request, thread_id: Any) -> Response:
        thread_services.thread_get(user=request.user, thread_id=thread_id).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class ThreadMessagesApi(APIView):
    @extend_schema(tags=TAG)
    def get(self, request: Request, thread_id: Any) -> Response:
        thread = thread_services.thread_get(user=request.user, thread_id=thread_id)
        return Response(
            {
                "results": [
                    {
                        "id": m.pk,
                        "role": m.role,
                        "parts": m.parts,
                        "run": str(m.run_id) if m.run_id else None,
                        "createdAt": m.created_at.isoformat(),
                    }
                    for m in thread_services.thread_messages(thread=thread)
                ]
            }
        )


class ThreadEventsApi(APIView):
    @extend_schema(tags=TAG, parameters=[OpenApiParameter("after", int, required=False)])
    def get(self, request: Request, thread_id: Any) -> Response:
        thread = thread_services.thread_get(user=request.user, thread_id=thread_id)
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
        thread = thread_services.thread_get(user=request.user, thread_id=thread_id)
        data = _valid(RunStartInput, request)
        run = run_services.run_start_safe(
            thread=thread, message=data["message"], user=request.user, options=data["options"]
        )
        return Response(run_data(run), status=status.HTTP_201_CREATED)


class ThreadSuspendedApi(APIView):
    @extend_schema(tags=TAG)
    def get(self, request: Request, thread_id: Any) -> Response:
        thread = thread_services.thread_get(user=request.user, thread_id=thread_id)
        return Response({"results": thread_services.thread_suspended_calls(thread=thread)})


class ThreadTasksApi(APIView):
    @extend_schema(tags=TAG)
    def get(self, request: Request, thread_id: Any) -> Response:
        thread = thread_services.thread_get(user=request.user, thread_id=thread_id)
        return Response({"tasks": task_list_data(thread.pk)})


class RunDetailApi(APIView):
    @extend_schema(tags=TAG)
    def get(self, request: Request, run_id: Any) -> Response:
        return Response(
            run_data(thread_services.run_get(user=request.user, run_id=run_id), calls=True)
        )


class RunResumeApi(APIView):
    @extend_schema(tags=TAG, request=RunResumeInput)
    def post(self, request: Request, run_id: Any) -> Response:
        run = thread_services.run_get(user=request.user, run_id=run_id)
        data = _valid(RunResumeInput, request)
        run = run_services.run_resume(
            run=run, tool_call_id=data["toolCallId"], payload=data["payload"], user=request.user
        )
        return Response(run_data(run))


class RunClientToolResultApi(APIView):
    @extend_schema(tags=TAG, request=ClientToolResultInput)
    def post(self, request: Request, run_id: Any) -> Response:
        run = thread_services.run_get(user=request.user, run_id=run_id)
        data = _valid(ClientToolResultInput, request)
        run = run_services.client_tool_result(
            run=run,
            tool_call_id=data["toolCallId"],
            output=data.get("output"),
            error=data.get("error"),
            user=request.user,
        )
        return Response(run_data(run))


class RunAbortApi(APIView):
    @extend_schema(tags=TAG, request=None)
    def post(self, request: Request, run_id: Any) -> Response:
        run = thread_services.run_get(user=request.user, run_id=run_id)
        return Response(run_data(run_services.run_abort(run=run, user=request.user)))
