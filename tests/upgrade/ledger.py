"""A ledger of rows written through a release's historical models, checked after an
upgrade through the current models: every row still there, with every value it was given.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps as current_apps
from django.db import DEFAULT_DB_ALIAS, models

from tools_app import crypto


@dataclass(frozen=True)
class Sealed:
    """Credentials stored as a Fernet token: written encrypted, compared decrypted (a
    later release may re-encrypt them under a new key and still keep them)."""

    data: dict[str, Any]

    @property
    def token(self) -> str:
        return crypto.encrypt(self.data)


@dataclass
class Ledger:
    apps: Any  # the historical apps of the release's migration state
    using: str = DEFAULT_DB_ALIAS
    rows: list[tuple[str, Any, dict[str, Any]]] = field(default_factory=list)
    links: list[tuple[str, Any, str, set[Any]]] = field(default_factory=list)

    def add(self, label: str, **values: Any) -> models.Model:
        """Create one row of `label` ("app.Model") with `values`, and note what it holds."""
        model = self.apps.get_model(label)
        stored = {name: v.token if isinstance(v, Sealed) else v for name, v in values.items()}
        row = model._default_manager.db_manager(self.using).create(**stored)
        expected = {}
        for name, value in values.items():
            attname = model._meta.get_field(name).attname
            expected[attname] = value.pk if isinstance(value, models.Model) else value
        self.rows.append((label, row.pk, expected))
        return row

    def link(self, row: models.Model, name: str, targets: list[models.Model]) -> None:
        """Set the many-to-many `name` of `row`, and note it."""
        getattr(row, name).set(targets)
        self.links.append((row._meta.label, row.pk, name, {target.pk for target in targets}))

    def losses(self) -> list[str]:
        """What the current schema no longer holds of the ledger, one line per loss."""
        found = []
        for label, written in sorted(Counter(label for label, _, _ in self.rows).items()):
            now = current_apps.get_model(label)._base_manager.using(self.using).count()
            if now != written:
                found.append(f"{label}: {written} rows written, {now} after the upgrade")
        for label, pk, expected in self.rows:
            found += self._row_losses(label, pk, expected)
        for label, pk, name, targets in self.links:
            row = current_apps.get_model(label)._base_manager.using(self.using).get(pk=pk)
            now = set(getattr(row, name).values_list("pk", flat=True))
            if now != targets:
                found.append(f"{label} #{pk}.{name}: {sorted(targets)} became {sorted(now)}")
        return list(dict.fromkeys(found))  # a column gone is said once, not once per row

    def _row_losses(self, label: str, pk: Any, expected: dict[str, Any]) -> list[str]:
        model = current_apps.get_model(label)
        columns = {f.attname for f in model._meta.concrete_fields}
        gone = [name for name in expected if name not in columns]
        kept = [name for name in expected if name in columns]
        row = model._base_manager.using(self.using).filter(pk=pk).values(*kept).first()
        if row is None:
            return [f"{label} #{pk}: the row is gone"]
        found = [f"{label}.{name}: the column is gone" for name in gone]
        for name in kept:
            want, now = expected[name], row[name]
            if isinstance(want, Sealed):
                now = crypto.decrypt(now) if now else None
                want = want.data
            elif isinstance(now, memoryview):
                now = bytes(now)
            if now != want:
                found.append(f"{label} #{pk}.{name}: {want!r} became {now!r}")
        return found
