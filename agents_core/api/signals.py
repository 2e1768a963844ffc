"""REST endpoints for thread signals and the notification inbox (issue 6), all on threads
the caller owns:

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

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents_core.api.editor import lock_session
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
    thread_owned,
)
from agents_core.signals.subscriptions import thread_abort, thread_subscription_info

TAG = ["signals"]


class MessageInputSerializer(serializers.Serializer):
    message = serializers.CharField(trim_whitespace=False)
    ifActive = serializers.ChoiceField(choices=services.IF_ACTIVE, default="deliver")  # noqa: N815
    ifIdle = serializers.ChoiceField(choices=services.IF_IDLE, default="wake")  # noqa: N815
    attributes = serializers.DictField(required=False, default=dict)
    streamOptions = serializers.DictField(required=False, default=dict)  # noqa: N815


class SignalInputSerializer(serializers.Serializer):
    type = serializers.CharField()
    tagName = serializers.CharField(required=False, allow_blank=True, default="")  # noqa: N815
    contents = serializers.JSONField(required=False, default="")
    attributes = serializers.DictField(required=False, default=dict)
    metadata = serializers.DictField(required=False, default=dict)
    ifActive = serializers.ChoiceField(choices=services.IF_ACTIVE, required=False)  # noqa: N815
    ifIdle = serializers.ChoiceField(choices=services.IF_IDLE, required=False)  # noqa: N815


class StateSignalInputSerializer(serializers.Serializer):
    id = serializers.CharField(max_length=200)
    mode = serializers.ChoiceField(choices=["snapshot", "delta"], default="snapshot")
    cacheKey = serializers.CharField(  # noqa: N815
        max_length=200, required=False, allow_blank=True, default=""
    )
    contents = serializers.JSONField(required=False, default=None)
    value = serializers.JSONField(required=False, default=None)
    delta = serializers.JSONField(required=False, default=None)
    attributes = serializers.DictField(required=False, default=dict)
    metadata = serializers.DictField(required=False, default=dict)


class NotificationInputSerializer(serializers.Serializer):
    source = serializers.CharField(max_length=100)
    kind = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    summary = serializers.CharField()
    priority = serializers.ChoiceField(choices=PRIORITIES, default="medium")
    payload = serializers.JSONField(required=False, default=None)
    dedupeKey = serializers.CharField(  # noqa: N815
        max_length=200, required=False, allow_blank=True, default=""
    )
    coalesceKey = serializers.CharField(  # noqa: N815
        max_length=200, required=False, allow_blank=True, default=""
    )
    attributes = serializers.DictField(required=False, default=dict)
    metadata = serializers.DictField(required=False, default=dict)


def _result(result: services.SendResult, code: int = status.HTTP_201_CREATED) -> Response:
    return Response(result.as_dict(), status=code)


class ThreadSendMessageApi(APIView):
    @extend_schema(tags=TAG, request=MessageInputSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, thread_id) -> Response:  # noqa: ANN001
        thread = thread_owned(user=request.user, thread_id=thread_id)
        data = MessageInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        return _result(
            services.send_message(
                thread=thread,
                message=d["message"],
                user=request.user,
                if_active=d["ifActive"],
                if_idle=d["ifIdle"],
                stream_options=d["streamOptions"],
                attributes=d["attributes"],
            )
        )


class ThreadQueueMessageApi(APIView):
    @extend_schema(tags=TAG, request=MessageInputSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, thread_id) -> Response:  # noqa: ANN001
        thread = thread_owned(user=request.user, thread_id=thread_id)
        data = MessageInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        return _result(
            services.queue_message(
                thread=thread,
                message=d["message"],
                user=request.user,
                stream_options=d["streamOptions"],
                attributes=d["attributes"],
            )
        )


class ThreadSignalsApi(APIView):
    @extend_schema(tags=TAG, responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, thread_id) -> Response:  # noqa: ANN001
        thread = thread_owned(user=request.user, thread_id=thread_id)
        return Response([signal_json(s) for s in signal_list(thread=thread)])

    @extend_schema(tags=TAG, request=SignalInputSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, thread_id) -> Response:  # noqa: ANN001
        thread = thread_owned(user=request.user, thread_id=thread_id)
        data = SignalInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        return _result(
            services.send_signal(
                thread=thread,
                type=d["type"],
                tag_name=d["tagName"] or None,
                contents=d["contents"],
                attributes=d["attributes"],
                metadata=d["metadata"],
                user=request.user,
                if_active=d.get("ifActive"),
                if_idle=d.get("ifIdle"),
            )
        )


class ThreadStateSignalApi(APIView):
    @extend_schema(tags=TAG, request=StateSignalInputSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, thread_id) -> Response:  # noqa: ANN001
        thread = thread_owned(user=request.user, thread_id=thread_id)
        data = StateSignalInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        result = services.send_state_signal(
            thread=thread,
            id=d["id"],
            mode=d["mode"],
            cache_key=d["cacheKey"],
            contents=d["contents"],
            value=d["value"],
            delta=d["delta"],
            attributes=d["attributes"],
            metadata=d["metadata"],
            user=request.user,
        )
        return _result(result, status.HTTP_200_OK if result.decision == "skip" else 201)


class ThreadNotificationsApi(APIView):
    @extend_schema(tags=TAG, responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, thread_id) -> Response:  # noqa: ANN001
        thread = thread_owned(user=request.user, thread_id=thread_id)
        records = notification_list(thread=thread, status=request.query_params.get("status"))
        return Response(
            {
                "counts": inbox_counts(thread=thread),
                "results": [notification_json(r) for r in records[:200]],
            }
        )

    @extend_schema(tags=TAG, request=NotificationInputSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, thread_id) -> Response:  # noqa: ANN001
        thread = thread_owned(user=request.user, thread_id=thread_id)
        data = NotificationInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        return _result(
            send_notification_signal(
                thread=thread,
                source=d["source"],
                kind=d["kind"],
                summary=d["summary"],
                priority=d["priority"],
                payload=d["payload"],
                dedupe_key=d["dedupeKey"],
                coalesce_key=d["coalesceKey"],
                attributes=d["attributes"],
                metadata=d["metadata"],
                user=request.user,
            )
        )


class ThreadDigestApi(APIView):
    @extend_schema(tags=TAG, request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, thread_id) -> Response:  # noqa: ANN001
        thread = thread_owned(user=request.user, thread_id=thread_id)
        ids = notifications_digest_thread_now(thread=thread)
        return Response({"digested": ids, "counts": inbox_counts(thread=thread)})


class ThreadSubscriptionApi(APIView):
    @extend_schema(tags=TAG, responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, thread_id) -> Response:  # noqa: ANN001
        thread = thread_owned(user=request.user, thread_id=thread_id)
        return Response(thread_subscription_info(thread=thread))


class ThreadAbortApi(APIView):
    @extend_schema(tags=TAG, request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, thread_id) -> Response:  # noqa: ANN001
        thread = thread_owned(user=request.user, thread_id=thread_id)
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
