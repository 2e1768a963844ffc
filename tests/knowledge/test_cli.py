"""`python manage.py knowledge create|ingest|search`."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from knowledge.models import Document, DocumentStatus, KnowledgeBase
from knowledge.store import get_store
from tests.knowledge.files import sample_files

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def drop_tables():
    yield
    for kb in KnowledgeBase.objects.all():
        get_store().drop(table=kb.table_name)


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("knowledge", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_ingest_and_search_from_the_shell(owner, tmp_path, drop_tables):
    out, _ = run("--owner", "owner", "create", "cli-docs", "--fts-only")
    assert "Created knowledge base 'cli-docs' (full-text search)" in out
    folder = tmp_path / "docs"
    folder.mkdir()
    for fmt in ("markdown", "csv"):
        name, content, _ = sample_files()[fmt]
        (folder / name).write_bytes(content)
    name, content, _ = sample_files()["pdf"]
    (tmp_path / name).write_bytes(content)

    out, err = run("--owner", "owner", "ingest", "cli-docs", str(folder), str(tmp_path / name))
    assert "3 document(s) ready, 0 failed." in out
    assert "3/3 documents" in err  # the progress bar
    assert Document.objects.filter(status=DocumentStatus.READY).count() == 3

    out, _ = run("--owner", "owner", "search", "cli-docs", "amber light", "--k", "2")
    result = json.loads(out)
    assert result["results"][0]["document"]["name"] == "manual.pdf"
    assert result["results"][0]["page"] == 2 and len(result["results"]) <= 2


def test_the_shell_gives_clear_errors(owner, admin_user, tmp_path):
    with pytest.raises(CommandError, match="No knowledge base 'nope'"):
        run("--owner", "owner", "search", "nope", "x")
    with pytest.raises(CommandError, match="No user named 'ghost'"):
        run("--owner", "ghost", "create", "x")
    run("create", "mine", "--fts-only")  # the only superuser owns it
    assert KnowledgeBase.objects.get(slug="mine").owner == admin_user
    with pytest.raises(CommandError, match="no such file"):
        run("ingest", "mine", str(tmp_path / "missing.pdf"))
    good, bad = tmp_path / "good.txt", tmp_path / "bad.pdf"
    good.write_text("fine")
    bad.write_bytes(b"not a pdf")
    with pytest.raises(CommandError, match="not one"):
        run("ingest", "mine", str(good), str(bad))  # all or none
    assert not Document.objects.exists()
    get_store().drop(table=KnowledgeBase.objects.get(slug="mine").table_name)
