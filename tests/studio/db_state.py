"""A fingerprint of the studio's tables, to show that a refused request wrote nothing."""

from __future__ import annotations

from django.apps import apps
from django.db import connection

APPS = ("agents_core", "tools_app", "knowledge", "auth", "authtoken")


def db_fingerprint() -> dict[str, tuple[int, str]]:
    """Row count and a digest of every row of the studio's tables: any insert, update or
    delete changes it (PostgreSQL)."""
    out = {}
    with connection.cursor() as cursor:
        for app in APPS:
            for model in apps.get_app_config(app).get_models():
                table = connection.ops.quote_name(model._meta.db_table)
                cursor.execute(
                    "SELECT count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))"
                    f" FROM {table} t"  # noqa: S608 - a table name from the models
                )
                out[model._meta.db_table] = cursor.fetchone()
    return out
