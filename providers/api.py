"""REST endpoints of model providers: /api/providers/ (credentials, test connection) and
/api/models (the picker's list). A user sees their own credentials and the site-wide ones;
another user's is a 404; only admins change site-wide ones."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.exceptions import ApplicationError, NotFound
from providers import selectors, services
from providers.connection import credential_test
from providers.models import ProviderCredential
from providers.models_list import LIMIT_MAX, model_search
from providers.serializers import (
    CredentialInputSerializer,
    CredentialOutputSerializer,
    CredentialTestSerializer,
    CredentialUpdateSerializer,
    provider_catalog,
)

TAG = ["providers"]


def _forbidden() -> ApplicationError:
    return ApplicationError(
        "Only an admin creates or changes site-wide credentials.",
        code="forbidden",
        status_code=status.HTTP_403_FORBIDDEN,
    )


def credential_or_404(
    request: Request, credential_id: int, *, write: bool = False
) -> ProviderCredential:
    credential = selectors.credential_get(user=request.user, credential_id=credential_id)
    if credential is None:
        raise NotFound(f"No provider credential {credential_id}.", code="not_found")
    if write and credential.is_site and not request.user.is_staff:
        raise _forbidden()
    return credential


def _out(request: Request, credential: ProviderCredential) -> dict:
    return CredentialOutputSerializer(credential, context={"user": request.user}).data


@extend_schema(tags=TAG)
class CredentialListApi(APIView):
    @extend_schema(responses=CredentialOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        credentials = selectors.credential_list(user=request.user)
        usable = selectors.usable_providers(user=request.user)
        return Response(
            {
                "results": CredentialOutputSerializer(
                    credentials, many=True, context={"user": request.user}
                ).data,
                "providers": provider_catalog(usable),
            }
        )

    @extend_schema(request=CredentialInputSerializer, responses={201: CredentialOutputSerializer})
    def post(self, request: Request) -> Response:
        serializer = CredentialInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        if data.pop("site") and not request.user.is_staff:
            raise _forbidden()
        owner = None if serializer.validated_data["site"] else request.user
        credential = services.credential_create(owner=owner, **data)
        return Response(_out(request, credential), status=status.HTTP_201_CREATED)


@extend_schema(tags=TAG)
class CredentialDetailApi(APIView):
    @extend_schema(responses=CredentialOutputSerializer)
    def get(self, request: Request, credential_id: int) -> Response:
        return Response(_out(request, credential_or_404(request, credential_id)))

    @extend_schema(request=CredentialUpdateSerializer, responses=CredentialOutputSerializer)
    def patch(self, request: Request, credential_id: int) -> Response:
        credential = credential_or_404(request, credential_id, write=True)
        serializer = CredentialUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        credential = services.credential_update(
            credential=credential, data=serializer.validated_data
        )
        return Response(_out(request, credential))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, credential_id: int) -> Response:
        credential = credential_or_404(request, credential_id, write=True)
        services.credential_delete(credential=credential)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=TAG)
class CredentialTestApi(APIView):
    @extend_schema(request=CredentialTestSerializer, responses=dict)
    def post(self, request: Request, credential_id: int) -> Response:
        credential = credential_or_404(request, credential_id)
        serializer = CredentialTestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = credential_test(
            credential=credential, model=serializer.validated_data.get("model", "")
        )
        return Response(result)


@extend_schema(tags=TAG)
class ModelListApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("search", str, description="Words the model string contains."),
            OpenApiParameter("provider", str, description="Only this provider's models."),
            OpenApiParameter("limit", int, description=f"At most this many (<= {LIMIT_MAX})."),
        ],
        responses=dict,
    )
    def get(self, request: Request) -> Response:
        usable = selectors.usable_providers(user=request.user)
        provider = request.query_params.get("provider") or None
        try:
            limit = min(max(int(request.query_params.get("limit", 50)), 1), LIMIT_MAX)
        except ValueError:
            raise ApplicationError("limit must be a whole number.", code="invalid") from None
        models = model_search(
            search=request.query_params.get("search", "")[:200],
            providers={provider} if provider else None,
            limit=limit,
        )
        return Response(
            {
                "results": [
                    {**m.as_dict(), "usable": usable.get(m.provider, {}).get("usable", False)}
                    for m in models
                ],
                "providers": provider_catalog(usable),
            }
        )
