"""REST endpoints of knowledge, under /api/knowledge/. Owner only: another user's base,
documents and search are 404."""

from __future__ import annotations

from django.db.models import Count
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.exceptions import ApplicationError, NotFound
from common.parsers import StudioJSONParser
from knowledge import selectors
from knowledge.models import Document, KnowledgeBase
from knowledge.serializers import (
    DocumentOutputSerializer,
    KnowledgeBaseInputSerializer,
    KnowledgeBaseOutputSerializer,
    KnowledgeBaseUpdateSerializer,
    SearchInputSerializer,
    TextDocumentInputSerializer,
    ToolCreateInputSerializer,
    UrlDocumentInputSerializer,
)
from knowledge.services import bases, documents
from knowledge.services.progress import progress_publish
from knowledge.services.search import filters_from, knowledge_search
from knowledge.services.tools import kb_tool_create
from knowledge.store import get_store
from tools_app.serializers import ToolOutputSerializer

TAG = ["knowledge"]


def kb_or_404(request: Request, slug: str) -> KnowledgeBase:
    kb = selectors.kb_get(user=request.user, slug=slug)
    if kb is None:
        raise NotFound(f"No knowledge base {slug!r}.", code="not_found")
    return kb


def document_or_404(kb: KnowledgeBase, document_id: int) -> Document:
    document = selectors.document_get(kb=kb, document_id=document_id)
    if document is None:
        raise NotFound(f"No document {document_id} in this knowledge base.", code="not_found")
    return document


@extend_schema(tags=TAG)
class KnowledgeBaseListApi(APIView):
    @extend_schema(responses=KnowledgeBaseOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        kbs = selectors.kb_list(user=request.user).annotate(document_count=Count("documents"))
        return Response(
            {
                "results": KnowledgeBaseOutputSerializer(kbs, many=True).data,
                "embedding_models": bases.embedding_models_offered(),
            }
        )

    @extend_schema(
        request=KnowledgeBaseInputSerializer, responses={201: KnowledgeBaseOutputSerializer}
    )
    def post(self, request: Request) -> Response:
        serializer = KnowledgeBaseInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        kb = bases.kb_create(owner=request.user, **serializer.validated_data)
        return Response(KnowledgeBaseOutputSerializer(kb).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=TAG)
class KnowledgeBaseDetailApi(APIView):
    @extend_schema(responses=KnowledgeBaseOutputSerializer)
    def get(self, request: Request, slug: str) -> Response:
        kb = kb_or_404(request, slug)
        data = KnowledgeBaseOutputSerializer(kb).data
        data["progress"] = selectors.kb_progress(kb=kb)
        return Response(data)

    @extend_schema(request=KnowledgeBaseUpdateSerializer, responses=KnowledgeBaseOutputSerializer)
    def patch(self, request: Request, slug: str) -> Response:
        kb = kb_or_404(request, slug)
        serializer = KnowledgeBaseUpdateSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        kb = bases.kb_update(kb=kb, **serializer.validated_data)
        return Response(KnowledgeBaseOutputSerializer(kb).data)

    def delete(self, request: Request, slug: str) -> Response:
        bases.kb_delete(kb=kb_or_404(request, slug))
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=TAG)
class DocumentListApi(APIView):
    """GET lists the documents; POST adds: multipart `file` (one or more), or JSON
    `{"url", "depth"?, "max_pages"?}`, or JSON `{"text", "title"?}`."""

    parser_classes = [StudioJSONParser, MultiPartParser, FormParser]

    @extend_schema(responses=DocumentOutputSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        kb = kb_or_404(request, slug)
        docs = selectors.document_list(kb=kb).select_related("kb")
        return Response({"results": DocumentOutputSerializer(docs, many=True).data})

    @extend_schema(request=None, responses={201: DocumentOutputSerializer(many=True)})
    def post(self, request: Request, slug: str) -> Response:
        kb = kb_or_404(request, slug)
        if request.FILES:
            added = documents.documents_add_uploads(kb=kb, files=request.FILES.getlist("file"))
        elif "url" in request.data:
            serializer = UrlDocumentInputSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            added = [documents.document_add_url(kb=kb, **serializer.validated_data)]
        elif "text" in request.data:
            serializer = TextDocumentInputSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            added = [documents.document_add_text(kb=kb, **serializer.validated_data)]
        else:
            raise ApplicationError("Send a file (multipart `file`), a `url`, or a `text`.")
        progress_publish(kb=kb)
        return Response(
            {"results": DocumentOutputSerializer(added, many=True).data},
            status=status.HTTP_201_CREATED,
        )


@extend_schema(tags=TAG)
class DocumentDetailApi(APIView):
    @extend_schema(responses=DocumentOutputSerializer)
    def get(self, request: Request, slug: str, document_id: int) -> Response:
        document = document_or_404(kb_or_404(request, slug), document_id)
        return Response(DocumentOutputSerializer(document).data)

    def delete(self, request: Request, slug: str, document_id: int) -> Response:
        documents.document_delete(document=document_or_404(kb_or_404(request, slug), document_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=TAG)
class DocumentReindexApi(APIView):
    @extend_schema(request=None, responses=DocumentOutputSerializer)
    def post(self, request: Request, slug: str, document_id: int) -> Response:
        document = document_or_404(kb_or_404(request, slug), document_id)
        return Response(
            DocumentOutputSerializer(documents.document_reindex(document=document)).data
        )


@extend_schema(tags=TAG)
class DocumentChunksApi(APIView):
    """The document's chunks in order (what the document viewer shows)."""

    def get(self, request: Request, slug: str, document_id: int) -> Response:
        kb = kb_or_404(request, slug)
        document = document_or_404(kb, document_id)
        chunks = get_store().document_chunks(table=kb.table_name, document_id=document.id)
        return Response(
            {
                "document": DocumentOutputSerializer(document).data,
                "chunks": [
                    {
                        "chunk": c.ordinal,
                        "id": c.id,
                        "text": c.text,
                        "heading": c.heading,
                        "page": c.page,
                    }
                    for c in chunks
                ],
            }
        )


@extend_schema(tags=TAG)
class KnowledgeSearchApi(APIView):
    @extend_schema(request=SearchInputSerializer)
    def post(self, request: Request, slug: str) -> Response:
        kb = kb_or_404(request, slug)
        serializer = SearchInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        result = knowledge_search(
            kb=kb,
            query=data["query"],
            k=data["k"],
            mode=data["mode"],
            filters=filters_from(data.get("filters")),
            rerank=data.get("rerank"),
        )
        return Response(result)


@extend_schema(tags=TAG)
class KnowledgeProgressApi(APIView):
    def get(self, request: Request, slug: str) -> Response:
        return Response(selectors.kb_progress(kb=kb_or_404(request, slug)))


@extend_schema(tags=TAG)
class KnowledgeCancelApi(APIView):
    @extend_schema(request=None)
    def post(self, request: Request, slug: str) -> Response:
        kb = kb_or_404(request, slug)
        cancelled = bases.kb_ingest_cancel(kb=kb)
        progress_publish(kb=kb)
        return Response({"cancelled": cancelled})


@extend_schema(tags=TAG)
class KnowledgeToolCreateApi(APIView):
    @extend_schema(request=ToolCreateInputSerializer, responses={201: ToolOutputSerializer})
    def post(self, request: Request, slug: str) -> Response:
        kb = kb_or_404(request, slug)
        serializer = ToolCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        tool = kb_tool_create(kb=kb, owner=request.user, **serializer.validated_data)
        return Response(ToolOutputSerializer(tool).data, status=status.HTTP_201_CREATED)
