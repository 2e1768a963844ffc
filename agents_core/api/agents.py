"""REST endpoints for agents and their bindings:
/api/agents/, /api/agents/<slug>/, /api/agents/<slug>/tools/[<key>/],
/api/agents/<slug>/subagents/[<key>/].
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents_core.api.editor import (
    EDIT_LOCK,
    IF_MATCH,
    WRITE_RESPONSES,
    lock_session,
    run_versioned,
)
from agents_core.models import Agent
from agents_core.selectors import agent_get, agent_list
from agents_core.serializers import (
    AgentInputSerializer,
    AgentOutputSerializer,
    AgentUpdateInputSerializer,
    BindingInputSerializer,
    SubAgentInputSerializer,
    SubAgentOutputSerializer,
    ToolBindingInputSerializer,
    ToolBindingOutputSerializer,
)
from agents_core.services.agents import (
    agent_create,
    agent_delete,
    agent_ensure_editable,
    agent_update,
)
from agents_core.services.bindings import (
    SUBAGENT,
    TOOL,
    BindingKind,
    binding_create,
    binding_delete,
    binding_ensure_editable,
    binding_update,
)
from common.exceptions import NotFound

TAG = ["agents"]
# As the editor's writes, except that naming no version is allowed here (no 428).
AGENT_WRITE_DOC = (
    "Save a studio agent (code agents answer 403: edit their overrides). Every save is a "
    "revision: who, which fields, the full before and after (GET /api/agents/<slug>/revisions/)."
    ' Name the version you started from as `If-Match: "<version>"` (a stale one gets 412) or '
    "as `version` in the body (a stale one gets 409 with the current state); nothing is "
    "written then. A save that names neither is accepted, because clients of this API "
    "predate versions, but it is still serialised on the agent's row, bumps the version and "
    "is recorded as a revision, so no change is lost without a trace; name the version to be "
    "told about a concurrent change instead of overwriting it. The response carries the new "
    "version as ETag. While another session holds the agent's live edit lock a save is "
    "refused with 423 (name yours with `X-Edit-Lock: <lock id>`)."
)
AGENT_WRITE_RESPONSES = {code: r for code, r in WRITE_RESPONSES.items() if code != 428}


def agent_or_404(request: Request, slug: str) -> Agent:
    agent = agent_get(user=request.user, slug=slug)
    if agent is None:
        raise NotFound(f"No agent with the slug {slug!r}.", code="not_found")
    return agent


# --- agents ---------------------------------------------------------------------------------
@extend_schema(tags=TAG)
class AgentListApi(generics.ListAPIView):
    """Agents the caller can use: code agents, and their own studio agents."""

    serializer_class = AgentOutputSerializer

    @extend_schema(parameters=[OpenApiParameter("source", str, enum=["code", "studio"])])
    def get(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Agent]:
        agents = agent_list(user=self.request.user).select_related("owner")
        if source := self.request.query_params.get("source"):
            agents = agents.filter(source=source)
        return agents

    @extend_schema(request=AgentInputSerializer, responses={201: AgentOutputSerializer})
    def post(self, request: Request) -> Response:
        serializer = AgentInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        agent = agent_create(owner=request.user, **serializer.validated_data)
        return Response(AgentOutputSerializer(agent).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=TAG)
class AgentDetailApi(APIView):
    @extend_schema(responses=AgentOutputSerializer)
    def get(self, request: Request, slug: str) -> Response:
        agent = agent_or_404(request, slug)
        return Response(AgentOutputSerializer(agent).data, headers={"ETag": f'"{agent.version}"'})

    @extend_schema(
        request=AgentUpdateInputSerializer,
        description=AGENT_WRITE_DOC,
        parameters=[IF_MATCH, EDIT_LOCK],
        responses={**AGENT_WRITE_RESPONSES, 200: AgentOutputSerializer},
    )
    def put(self, request: Request, slug: str) -> Response:
        return self._update(request, slug, partial=False)

    @extend_schema(
        request=AgentUpdateInputSerializer(partial=True),
        description=AGENT_WRITE_DOC,
        parameters=[IF_MATCH, EDIT_LOCK],
        responses={**AGENT_WRITE_RESPONSES, 200: AgentOutputSerializer},
    )
    def patch(self, request: Request, slug: str) -> Response:
        return self._update(request, slug, partial=True)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, slug: str) -> Response:
        agent_delete(agent=agent_or_404(request, slug))
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _update(self, request: Request, slug: str, *, partial: bool) -> Response:
        """A versioned editor save with a revision; the rules are AGENT_WRITE_DOC (OpenAPI)."""
        agent = agent_or_404(request, slug)
        agent_ensure_editable(agent)  # a code agent answers 403 before any field is judged
        serializer = AgentUpdateInputSerializer(agent, data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        agent = run_versioned(
            request,
            lambda version: agent_update(
                agent=agent,
                user=request.user,
                data=serializer.validated_data,
                version=version,
                lock_id=lock_session(request),
            ),
            required=False,
        )
        return Response(AgentOutputSerializer(agent).data, headers={"ETag": f'"{agent.version}"'})


# --- bindings (tools and sub-agents) -------------------------------------------------------
class BindingListApi(APIView):
    """GET lists an agent's bindings of one kind, POST adds one; a subclass names the kind
    and its serializers (`binding_apis`)."""

    kind: ClassVar[BindingKind]
    input: ClassVar[type[BindingInputSerializer]]
    output: ClassVar[type[serializers.ModelSerializer]]

    def get(self, request: Request, slug: str) -> Response:
        bindings = self.kind.bindings(agent_or_404(request, slug))
        return Response(self.output(bindings, many=True).data)

    def post(self, request: Request, slug: str) -> Response:
        agent = agent_or_404(request, slug)
        serializer = self.input(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        binding = binding_create(
            kind=self.kind,
            agent=agent,
            user=request.user,
            target=data.pop(self.kind.target_field),
            lock_id=lock_session(request),
            **data,
        )
        return Response(self.output(binding).data, status=status.HTTP_201_CREATED)


class BindingDetailApi(APIView):
    kind: ClassVar[BindingKind]
    input: ClassVar[type[BindingInputSerializer]]
    output: ClassVar[type[serializers.ModelSerializer]]

    def get(self, request: Request, slug: str, key: str) -> Response:
        return Response(self.output(self._binding(request, slug, key)).data)

    def put(self, request: Request, slug: str, key: str) -> Response:
        return self._update(request, slug, key, partial=False)

    def patch(self, request: Request, slug: str, key: str) -> Response:
        return self._update(request, slug, key, partial=True)

    def delete(self, request: Request, slug: str, key: str) -> Response:
        binding = self._binding(request, slug, key)
        binding_delete(binding=binding, user=request.user, lock_id=lock_session(request))
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _binding(self, request: Request, slug: str, key: str) -> Any:
        agent = agent_or_404(request, slug)
        binding = self.kind.bindings(agent).filter(key=key).first()
        if binding is None:
            raise NotFound(
                f"Agent {agent.slug!r} has no {self.kind.noun} with the key {key!r}.",
                code="not_found",
            )
        return binding

    def _update(self, request: Request, slug: str, key: str, *, partial: bool) -> Response:
        binding = self._binding(request, slug, key)
        binding_ensure_editable(binding)  # a code binding answers 403 before any field
        serializer = self.input(data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        binding = binding_update(
            binding=binding,
            user=request.user,
            data=serializer.validated_data,
            lock_id=lock_session(request),
        )
        return Response(self.output(binding).data)


def binding_apis(
    name: str,
    kind: BindingKind,
    input: type[BindingInputSerializer],  # noqa: A002 - as the views name it
    output: type[serializers.ModelSerializer],
) -> tuple[type[BindingListApi], type[BindingDetailApi]]:
    """The list and detail views of one kind, with their OpenAPI description."""
    attrs = {"kind": kind, "input": input, "output": output}
    list_api = extend_schema_view(
        get=extend_schema(tags=TAG, responses=output(many=True)),
        post=extend_schema(tags=TAG, request=input, responses={201: output}),
    )(type(f"{name}ListApi", (BindingListApi,), attrs))
    detail_api = extend_schema_view(
        get=extend_schema(tags=TAG, responses=output),
        put=extend_schema(tags=TAG, request=input, responses=output),
        patch=extend_schema(tags=TAG, request=input(partial=True), responses=output),
        delete=extend_schema(tags=TAG, responses={204: None}),
    )(type(f"{name}DetailApi", (BindingDetailApi,), attrs))
    return list_api, detail_api


AgentToolListApi, AgentToolDetailApi = binding_apis(
    "AgentTool", TOOL, ToolBindingInputSerializer, ToolBindingOutputSerializer
)
AgentSubAgentListApi, AgentSubAgentDetailApi = binding_apis(
    "AgentSubAgent", SUBAGENT, SubAgentInputSerializer, SubAgentOutputSerializer
)
