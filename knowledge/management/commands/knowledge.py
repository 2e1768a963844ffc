"""`python manage.py knowledge create|ingest|search|sweep`: knowledge bases from the shell.

    knowledge create docs [--name "Product docs"] [--fts-only | --embedding-model M]
    knowledge ingest docs handbook.pdf notes/ https://example.com/guide [--depth 1]
    knowledge search docs "how do I reset a password" [--k 5] [--mode hybrid]

`ingest` adds the files (a directory: every file under it), pages and sites, then
ingests them in this process with a progress bar (`--queue` leaves them to the Celery
workers and follows their progress instead). `search` prints the result as JSON. The
bases are those of `--owner` (default: the only superuser).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from django.db.models import Q, Sum
from tqdm import tqdm

from common.exceptions import ApplicationError
from knowledge.models import ACTIVE_STATUSES, Document, DocumentStatus, KnowledgeBase
from knowledge.selectors import kb_get
from knowledge.services.bases import kb_create
from knowledge.services.documents import document_add_file, document_add_url
from knowledge.services.ingest import document_ingest, documents_sweep
from knowledge.services.search import knowledge_search


class Command(BaseCommand):
    help = "Create knowledge bases, ingest files and web pages into them, search them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--owner", help="Username owning the bases (default: the only superuser)."
        )
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="Create a knowledge base.")
        create.add_argument("kb", help="The base's slug.")
        create.add_argument("--name", default="")
        create.add_argument("--description", default="")
        create.add_argument("--embedding-model", default=None)
        create.add_argument("--fts-only", action="store_true", help="Full-text search only.")
        ingest = sub.add_parser("ingest", help="Add files, directories or URLs and ingest them.")
        ingest.add_argument("kb")
        ingest.add_argument("sources", nargs="+", metavar="path-or-url")
        ingest.add_argument("--depth", type=int, default=0, help="Follow same-site links (URLs).")
        ingest.add_argument("--max-pages", type=int, default=None)
        ingest.add_argument("--queue", action="store_true", help="Let the Celery workers ingest.")
        search = sub.add_parser("search", help="Search a base; prints JSON.")
        search.add_argument("kb")
        search.add_argument("query")
        search.add_argument("--k", type=int, default=5)
        search.add_argument("--mode", choices=["hybrid", "fts", "vector"], default="hybrid")
        sub.add_parser("sweep", help="Requeue documents whose worker went silent.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            getattr(self, f"_{options['action']}")(options)
        except ApplicationError as exc:
            raise CommandError(exc.message) from None

    # --- actions ---------------------------------------------------------------------------
    def _create(self, options: dict[str, Any]) -> None:
        model = "" if options["fts_only"] else options["embedding_model"]
        kb = kb_create(
            owner=self._owner(options),
            name=options["name"] or options["kb"],
            slug=options["kb"],
            description=options["description"],
            embedding_model=model,
        )
        mode = f"hybrid search with {kb.embedding_model}" if kb.has_vectors else "full-text search"
        self.stdout.write(f"Created knowledge base {kb.slug!r} ({mode}).")

    def _ingest(self, options: dict[str, Any]) -> None:
        kb = self._kb(options)
        ids: list[int] = []
        with transaction.atomic():  # every source is added, or none
            self._add(kb, options, ids)
        self._run_ingestion(kb, options, ids)

    def _add(self, kb: KnowledgeBase, options: dict[str, Any], ids: list[int]) -> None:
        for source in options["sources"]:
            if source.startswith(("http://", "https://")):
                document = document_add_url(
                    kb=kb, url=source, depth=options["depth"], max_pages=options["max_pages"]
                )
                ids.append(document.id)
                continue
            path = Path(source)
            if not path.exists():
                raise CommandError(f"{source}: no such file, directory or URL.")
            files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
            for file in files:
                document = document_add_file(kb=kb, filename=file.name, content=file.read_bytes())
                ids.append(document.id)

    def _run_ingestion(self, kb: KnowledgeBase, options: dict[str, Any], ids: list[int]) -> None:
        mine = Q(id__in=ids) | Q(crawl_root_id__in=ids)
        worker = None
        if not options["queue"]:
            worker = threading.Thread(target=_ingest_here, args=(kb.id, ids), daemon=True)
            worker.start()
        self._follow(kb, mine, worker)
        failed = Document.objects.filter(mine, kb=kb, status=DocumentStatus.FAILED)
        for document in failed:
            self.stderr.write(f"failed: {document.display_name}: {document.error}")
        ready = Document.objects.filter(mine, kb=kb, status=DocumentStatus.READY).count()
        self.stdout.write(f"{ready} document(s) ready, {failed.count()} failed.")
        if failed.exists():
            raise CommandError("Some documents failed.")

    def _search(self, options: dict[str, Any]) -> None:
        result = knowledge_search(
            kb=self._kb(options), query=options["query"], k=options["k"], mode=options["mode"]
        )
        self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))

    def _sweep(self, options: dict[str, Any]) -> None:
        self.stdout.write(f"{documents_sweep()} document(s) queued again.")

    # --- helpers ---------------------------------------------------------------------------
    def _follow(self, kb: KnowledgeBase, mine: Q, worker: threading.Thread | None) -> None:
        bar = tqdm(total=0, unit="chunk", file=self.stderr._out, dynamic_ncols=True)
        started = time.monotonic()
        while True:
            docs = Document.objects.filter(mine, kb=kb)
            totals = docs.aggregate(total=Sum("chunk_count"), done=Sum("chunks_done"))
            active = docs.filter(status__in=ACTIVE_STATUSES).count()
            bar.total = totals["total"] or 0
            bar.n = totals["done"] or 0
            bar.set_description(f"{docs.count() - active}/{docs.count()} documents")
            bar.refresh()
            if not active and (worker is None or not worker.is_alive()):
                break
            if worker is not None and not worker.is_alive() and time.monotonic() - started > 5:
                break  # the rest is the workers' (a crawl queued more pages)
            time.sleep(0.3)
        bar.close()

    def _owner(self, options: dict[str, Any]) -> Any:
        users = get_user_model().objects
        if options["owner"]:
            user = users.filter(username=options["owner"]).first()
            if user is None:
                raise CommandError(f"No user named {options['owner']!r}.")
            return user
        superusers = list(users.filter(is_superuser=True)[:2])
        if len(superusers) != 1:
            raise CommandError("Name the owner of the knowledge bases with --owner USERNAME.")
        return superusers[0]

    def _kb(self, options: dict[str, Any]) -> KnowledgeBase:
        kb = kb_get(user=self._owner(options), slug=options["kb"])
        if kb is None:
            raise CommandError(f"No knowledge base {options['kb']!r} (create it first).")
        return kb


def _ingest_here(kb_id: int, ids: list[int]) -> None:
    """Ingest the command's documents, and the pages their crawls add, in this process."""
    try:
        done: set[int] = set()
        while True:
            queued = Document.objects.filter(
                Q(id__in=ids) | Q(crawl_root_id__in=ids),
                kb_id=kb_id,
                status=DocumentStatus.QUEUED,
            ).exclude(id__in=done)
            batch = list(queued.values_list("id", flat=True))
            if not batch:
                return
            for document_id in batch:
                document_ingest(document_id=document_id)
                done.add(document_id)
    finally:
        connection.close()
