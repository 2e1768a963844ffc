"""REST endpoints of agent tests: cases under an agent, suites, suite runs and their
results. Owner only: another user's case, suite or run is a 404."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents_core.models import Agent
from agents_core.selectors import agent_get, thread_for
from common.exceptions import NotFound
from evals import selectors
from evals.drafts import case_draft_from_thread
from evals.models import Suite, TestCase
from evals.serializers import (
    CaseInputSerializer,
    CaseOutputSerializer,
    ImportInputSerializer,
    SuiteInputSerializer,
    SuiteOutputSerializer,
    SuiteRunInputSerializer,
    SuiteUpdateSerializer,
)
from evals.services import cases as services
from evals.services.suite_runs import suite_run_start

TAG = ["agent tests"]


def agent_or_404(request: Request, slug: str) -> Agent:
    agent = agent_get(user=request.user, slug=slug)
    if agent is None:
        raise NotFound(f"No agent {slug!r}.", code="not_found")
    return agent


def case_or_404(request: Request, slug: str, case_id: int) -> TestCase:
    case = selectors.case_get(user=request.user, agent=agent_or_404(request, slug), case_id=case_id)
    if case is None:
        raise NotFound(f"No test case {case_id} of this agent.", code="not_found")
    return case


def suite_or_404(request: Request, slug: str) -> Suite:
    suite = selectors.suite_get(user=request.user, slug=slug)
    if suite is None:
        raise NotFound(f"No suite {slug!r}.", code="not_found")
    return suite


def _valid(serializer_class: type, request: Request, **kw: Any) -> dict[str, Any]:
    serializer = serializer_class(data=request.data, **kw)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


@extend_schema(tags=TAG)
class CaseListApi(APIView):
    @extend_schema(responses=CaseOutputSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        cases = selectors.case_list(user=request.user, agent=agent_or_404(request, slug))
        return Response(CaseOutputSerializer(cases, many=True).data)

    @extend_schema(request=CaseInputSerializer, responses={201: CaseOutputSerializer})
    def post(self, request: Request, slug: str) -> Response:
        agent = agent_or_404(request, slug)
        case = services.case_create(
            agent=agent, owner=request.user, **_valid(CaseInputSerializer, request)
        )
        return Response(CaseOutputSerializer(case).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=TAG)
class CaseDetailApi(APIView):
    @extend_schema(responses=CaseOutputSerializer)
    def get(self, request: Request, slug: str, case_id: int) -> Response:
        return Response(CaseOutputSerializer(case_or_404(request, slug, case_id)).data)

    @extend_schema(request=CaseInputSerializer, responses=CaseOutputSerializer)
    def put(self, request: Request, slug: str, case_id: int) -> Response:
        case = case_or_404(request, slug, case_id)
        case = services.case_update(case=case, data=_valid(CaseInputSerializer, request))
        return Response(CaseOutputSerializer(case).data)

    @extend_schema(request=CaseInputSerializer, responses=CaseOutputSerializer)
    def patch(self, request: Request, slug: str, case_id: int) -> Response:
        case = case_or_404(request, slug, case_id)
        data = _valid(CaseInputSerializer, request, partial=True)
        return Response(CaseOutputSerializer(services.case_update(case=case, data=data)).data)

    def delete(self, request: Request, slug: str, case_id: int) -> Response:
        services.case_delete(case=case_or_404(request, slug, case_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=TAG)
class CaseExportApi(APIView):
    def get(self, request: Request, slug: str) -> Response:
        agent = agent_or_404(request, slug)
        return Response(services.cases_export(agent=agent, owner=request.user))


@extend_schema(tags=TAG)
class CaseImportApi(APIView):
    @extend_schema(request=ImportInputSerializer)
    def post(self, request: Request, slug: str) -> Response:
        agent = agent_or_404(request, slug)
        _valid(ImportInputSerializer, request)
        counts = services.cases_import(agent=agent, owner=request.user, data=request.data)
        return Response(counts, status=status.HTTP_201_CREATED)


@extend_schema(tags=TAG)
class SuiteListApi(APIView):
    @extend_schema(responses=SuiteOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(
            SuiteOutputSerializer(selectors.suite_list(user=request.user), many=True).data
        )

    @extend_schema(request=SuiteInputSerializer, responses={201: SuiteOutputSerializer})
    def post(self, request: Request) -> Response:
        data = _valid(SuiteInputSerializer, request)
        agent = agent_or_404(request, data.pop("agent"))
        suite = services.suite_create(agent=agent, owner=request.user, **data)
        return Response(SuiteOutputSerializer(suite).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=TAG)
class SuiteDetailApi(APIView):
    @extend_schema(responses=SuiteOutputSerializer)
    def get(self, request: Request, slug: str) -> Response:
        return Response(SuiteOutputSerializer(suite_or_404(request, slug)).data)

    @extend_schema(request=SuiteUpdateSerializer, responses=SuiteOutputSerializer)
    def patch(self, request: Request, slug: str) -> Response:
        suite = suite_or_404(request, slug)
        suite = services.suite_update(suite=suite, data=_valid(SuiteUpdateSerializer, request))
        return Response(SuiteOutputSerializer(suite).data)

    def delete(self, request: Request, slug: str) -> Response:
        services.suite_delete(suite=suite_or_404(request, slug))
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=TAG)
class SuiteRunListApi(APIView):
    def get(self, request: Request, slug: str) -> Response:
        runs = suite_or_404(request, slug).runs.all()[:100]
        return Response([selectors.suite_run_info(run) for run in runs])

    @extend_schema(request=SuiteRunInputSerializer)
    def post(self, request: Request, slug: str) -> Response:
        suite = suite_or_404(request, slug)
        data = _valid(SuiteRunInputSerializer, request)
        suite_run = suite_run_start(suite=suite, user=request.user, repeat=data.get("repeat"))
        return Response(selectors.suite_run_info(suite_run), status=status.HTTP_202_ACCEPTED)


@extend_schema(tags=TAG)
class SuiteRunDetailApi(APIView):
    def get(self, request: Request, suite_run_id: int) -> Response:
        suite_run = selectors.suite_run_get(user=request.user, suite_run_id=suite_run_id)
        if suite_run is None:
            raise NotFound(f"No suite run {suite_run_id}.", code="not_found")
        return Response(
            {
                **selectors.suite_run_info(suite_run),
                "results": selectors.suite_run_results(suite_run=suite_run),
            }
        )


@extend_schema(tags=TAG)
class CaseDraftApi(APIView):
    """A case drafted from one of the user's chat threads, to edit before saving."""

    def get(self, request: Request, thread_id: Any) -> Response:
        thread = thread_for(request.user, thread_id)
        return Response(case_draft_from_thread(thread=thread))
