"""An upgrade from release 0.1.0 keeps every row and every value.

A database is built at 0.1.0's schema (its migration leaves, tests/upgrade/release_0_1_0.py),
filled through that schema's historical models, then migrated to whatever migrations the
tree holds now, as `studio migrate` does on an operator's upgrade; every row is then read
back through the current models. Migrations added later are picked up by themselves: the
latest state is the migration graph's leaves, never a list written here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor

from tests.upgrade.ledger import Ledger
from tests.upgrade.release_0_1_0 import LEAVES, MIGRATION_SHA256, RELEASE
from tests.upgrade.rows_0_1_0 import write_rows
from tests.upgrade.scratch import scratch_default_database

ROOT = Path(__file__).resolve().parents[2]
RELEASE_TARGETS = sorted(LEAVES.items())


def migrate(targets: list[tuple[str, str]]) -> MigrationExecutor:
    """Apply migrations up to `targets`; the executor's graph knows them applied after."""
    executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
    executor.migrate(targets)
    executor.loader.build_graph()  # what is applied now
    assert executor.migration_plan(targets) == [], "migrations left to apply"
    return executor


def unwritten(ledger: Ledger) -> list[str]:
    """The release's tables of the studio's own apps that the ledger wrote nothing to."""
    written = {label for label, _, _ in ledger.rows}
    tables = [
        model._meta.label
        for model in ledger.apps.get_models()
        if model._meta.app_label in LEAVES and not model._meta.auto_created
    ]
    return sorted(set(tables) - written)


# transaction=True: the test database's connection holds no open transaction while the
# scratch database stands in for it.
@pytest.mark.django_db(transaction=True)
def test_an_upgrade_from_0_1_0_keeps_every_row_and_value() -> None:
    with scratch_default_database("upgrade"):
        old = migrate(RELEASE_TARGETS)
        ledger = Ledger(apps=old.loader.project_state(RELEASE_TARGETS).apps)
        write_rows(ledger)
        assert unwritten(ledger) == [], "a table of the release has no rows to keep"

        latest = sorted(old.loader.graph.leaf_nodes())
        migrate(latest)

        losses = ledger.losses()
        assert not losses, f"the upgrade from {RELEASE} lost data:\n" + "\n".join(losses)


# Modules whose classes released migrations name and that moved since: a migration names
# a field class where it lives now (the class is the same), so its text is compared with
# the module's released path put back. Any other edit still fails.
MOVED_MODULES = {"common.fields": "studio.fields"}


def _as_released(text: str) -> bytes:
    for now, released in MOVED_MODULES.items():
        text = text.replace(now, released)
    return text.encode()


def test_the_release_migrations_are_as_released() -> None:
    """Databases at the release applied these files' text: a change to one never reaches
    them, and the upgrade test would start from a schema nobody has."""
    edited = [
        path
        for path, digest in MIGRATION_SHA256.items()
        if not (ROOT / path).is_file()
        or hashlib.sha256(_as_released((ROOT / path).read_text())).hexdigest()[:16] != digest
    ]
    assert edited == [], "released migrations changed: add a new migration instead"
