"""REST endpoints for thread signals and the notification inbox, all on threads the caller
owns (agents_core.selectors.thread_for: 404 for anyone else's):

POST /api/threads/<id>/send-message      {message, ifActive, ifIdle, attributes, streamOptions}
POST /api/threads/<id>/queue-message     {message, attributes, streamOptions}
GET|POST /api/threads/<id>/signals/      {type, tagName, contents, attributes, metadata}
POST /api/threads/<id>/state-signals/    {id, mode, cacheKey, contents | value | delta}
GET|POST /api/threads/<id>/notifications/  {source, kind, summary, priority, payload,
                                            dedupeKey, coalesceKey, attributes, metadata}
POST /api/threads/<id>/notifications/digest   (digest the thread's pending records now)
GET  /api/threads/<id>/subscription/     the live stream to subscribe to, the active run
POST /api/threads/<id>/abort             abort the active run
GET|PUT /api/agents/<slug>/notification-policy
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents_core.api.editor import lock_session
from agents_core.selectors import thread_for
from agents_core.signals import services
from agents_core.signals.agent_policy import (
    agent_notification_policy_set,
    agent_policy_json,
    agent_visible,
)
from agents_core.signals.digest import notifications_digest_thread_now
from agents_core.signals.notifications import send_notification_signal
from agents_core.signals.payloads import notification_json, signal_json
from agents_core.signals.policy import PRIORITIES
from agents_core.signals.selectors import (
    inbox_counts,
    notification_list,
    signal_list,
)
from agents_core.signals.subscriptions import thread_abort, thread_subscription_info

TAG = ["signals"]


class QueueMessageInput(serializers.Serializer):
    message = serializers.CharField(trim_whitespace=False)
    attributes = serializers.DictField(required=False, default=dict)
    streamOptions = serializers.DictField(  # noqa: N815 - the API's camelCase names
        source="stream_options", required=False, default=dict
    )


class MessageInput(QueueMessageInput):
    ifActive = serializers.ChoiceField(  # noqa: N815
        source="if_active", choices=services.IF_ACTIVE, default="deliver"
    )
    ifIdle = serializers.ChoiceField(source="if_idle", choices=services.IF_IDLE, default="wake")  # noqa: N815


class SignalInput(serializers.Serializer):
    type = serializers.CharField()
    tagName = serializers.CharField(  # noqa: N815
        source="tag_name", required=False, allow_blank=True, default=""
    )
    # A text signal by default.
    contents = serializers.JSONField(required=False, default="")
    attributes = serializers.DictField(required=False, default=dict)
    metadata = serializers.DictField(required=False, default=dict)
    ifActive = serializers.ChoiceField(  # noqa: N815
        source="if_active", choices=services.IF_ACTIVE, required=False, default=None
    )
    ifIdle = serializers.ChoiceField(  # noqa: N815
        source="if_idle", choices=services.IF_IDLE, required=False, default=None
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return {**attrs, "tag_name": attrs["tag_name"] or None}


class StateSignalInput(serializers.Serializer):
    id = serializers.CharField(max_length=200)
    mode = serializers.ChoiceField(choices=["snapshot", "delta"], default="snapshot")
    cacheKey = serializers.CharField(  # noqa: N815
        source="cache_key", max_length=200, required=False, allow_blank=True, default=""
    )
    contents = serializers.JSONField(required=False, default=None)
    value = serializers.JSONField(required=False, default=None)
    delta = serializers.JSONField(required=False, default=None)
    attributes = serializers.DictField(required=False, default=dict)
    metadata = serializers.DictField(required=False, default=dict)


class NotificationInput(serializers.Serializer):
    # A declared field, not Field.source: DRF's metaclass takes it out of the class.
    source = serializers.CharField(max_length=100)  # type: ignore[assignment]
    kind = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    summary = serializers.CharField()
    priority = serializers.ChoiceField(choices=PRIORITIES, default="medium")
    payload = serializers.JSONField(required=False, default=None)
    dedupeKey = serializers.CharField(  # noqa: N815
        source="dedupe_key", max_length=200, required=False, allow_blank=True, default=""
    )
    coalesceKey = serializers.CharField(  # noqa: N815
        source="coalesce_key", max_length=200, required=False, allow_blank=True, default=""
    )
    attributes = serializers.DictField(required=False, default=dict)
    metadata = serializers.DictField(required=False, default=dict)


class ThreadSendApi(APIView):
    """POST one input to one of the caller's threads: validate with `input`, whose
    validated keys are the service's keyword arguments, then call `send` once."""

    input: ClassVar[type[serializers.Serializer]]
    send: ClassVar[Callable[..., services.SendResult]]

    def post(self, request: Request, thread_id: Any) -> Response:
        thread = thread_for(request.user, thread_id)
        data = self.input(data=request.data)
        data.is_valid(raise_exception=True)
        result = type(self).send(thread=thread, user=request.user, **data.validated_data)
        return Response(result.as_dict(), status=self.status_of(result))

    def status_of(self, result: services.SendResult) -> int:
        return status.HTTP_201_CREATED


def _send_schema(view: type[ThreadSendApi]) -> type[ThreadSendApi]:
    return extend_schema_view(
        post=extend_schema(tags=TAG, request=view.input, responses=OpenApiTypes.OBJECT)
    )(view)


@_send_schema
class ThreadSendMessageApi(ThreadSendApi):
    input = MessageInput
    send = services.send_message


@_send_schema
class ThreadQueueMessageApi(ThreadSendApi):
    input = QueueMessageInput
    send = services.queue_message


@_send_schema
class ThreadSignalsApi(ThreadSendApi):
    input = SignalInput
    send = services.send_signal

    @extend_schema(tags=TAG, responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, thread_id: Any) -> Response:
        thread = thread_for(request.user, thread_id)
        return Response([signal_json(s) for s in signal_list(thread=thread)])


@_send_schema
class ThreadStateSignalApi(ThreadSendApi):
    input = StateSignalInput
    send = services.send_state_signal

    def status_of(self, result: services.SendResult) -> int:
        # A snapshot equal to the last one is skipped: nothing new was created.
        return status.HTTP_200_OK if result.decision == "skip" else status.HTTP_201_CREATED


@_send_schema
class ThreadNotificationsApi(ThreadSendApi):
    input = NotificationInput
    send = send_notification_signal

    @extend_schema(tags=TAG, responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, thread_id: Any) -> Response:
        thread = thread_for(request.user, thread_id)
        records = notification_list(thread=thread, status=request.query_params.get("status"))
        return Response(
            {
                "counts": inbox_counts(thread=thread),
                "results": [notification_json(r) for r in records[:200]],
            }
        )


class ThreadDigestApi(APIView):
    @extend_schema(tags=TAG, request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, thread_id: Any) -> Response:
        thread = thread_for(request.user, thread_id)
        ids = notifications_digest_thread_now(thread=thread)
        return Response({"digested": ids, "counts": inbox_counts(thread=thread)})


class ThreadSubscriptionApi(APIView):
    @extend_schema(tags=TAG, responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, thread_id: Any) -> Response:
        thread = thread_for(request.user, thread_id)
        return Response(thread_subscription_info(thread=thread))


class ThreadAbortApi(APIView):
    @extend_schema(tags=TAG, request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, thread_id: Any) -> Response:
        thread = thread_for(request.user, thread_id)
        run_id = thread_abort(thread=thread, user=request.user)
        return Response({"aborted": str(run_id) if run_id else None})


class AgentNotificationPolicyApi(APIView):
    @extend_schema(tags=TAG, responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, slug: str) -> Response:
        return Response(
            agent_policy_json(agent=agent_visible(user=request.user, slug=slug), user=request.user)
        )

    @extend_schema(tags=TAG, request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def put(self, request: Request, slug: str) -> Response:
        agent = agent_visible(user=request.user, slug=slug)
        body = request.data
        policy = body.get("policy", body) if isinstance(body, dict) else body
        agent = agent_notification_policy_set(
            agent=agent, user=request.user, policy=policy, lock_id=lock_session(request)
        )
        return Response(agent_policy_json(agent=agent, user=request.user))
