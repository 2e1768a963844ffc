"""Pages: /knowledge/ (bases), /knowledge/<slug>/ (documents, progress, search) and the
document viewer /knowledge/<slug>/documents/<id>/ (chunks with #chunk-<n> and #page-<p>
anchors, where citations point). Another user's base is a 404."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from knowledge import selectors
from knowledge.serializers import KnowledgeBaseOutputSerializer
from knowledge.services.bases import embedding_models_offered
from knowledge.store import get_store


@login_required
def index(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "knowledge/index.html",
        {"embedding_models": embedding_models_offered()},
    )


@login_required
def detail(request: HttpRequest, slug: str) -> HttpResponse:
    kb = selectors.kb_get(user=request.user, slug=slug)
    if kb is None:
        raise Http404("No such knowledge base.")
    return render(
        request,
        "knowledge/detail.html",
        {"kb": kb, "kb_data": KnowledgeBaseOutputSerializer(kb).data},
    )


@login_required
def document(request: HttpRequest, slug: str, document_id: int) -> HttpResponse:
    kb = selectors.kb_get(user=request.user, slug=slug)
    doc = selectors.document_get(kb=kb, document_id=document_id) if kb is not None else None
    if doc is None:
        raise Http404("No such document.")
    chunks = get_store().document_chunks(table=kb.table_name, document_id=doc.id)
    seen_pages: set[int] = set()
    rows = []
    for chunk in chunks:
        first_of_page = chunk.page is not None and chunk.page not in seen_pages
        if chunk.page is not None:
            seen_pages.add(chunk.page)
        rows.append({"chunk": chunk, "page_anchor": first_of_page})
    return render(request, "knowledge/document.html", {"kb": kb, "doc": doc, "rows": rows})
