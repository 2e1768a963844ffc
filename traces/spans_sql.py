"""The span writer's upsert in hand-written SQL: the spans of every batch as one JSON array
in one statement. It does what the ORM's `bulk_create(update_conflicts=True)` did; building
that statement and its model instances cost more than the write (docs/runs.md, "What a run
costs"). Its column list is checked against the Span model
(tests/agents_core/runtime/test_sql_columns.py), so a column added there without its place
here fails the tests instead of the statement.
"""

from __future__ import annotations

import json

from django.db import connection

from common.fields import NulFreeJSONEncoder
from common.json_input import NUL, REPLACEMENT
from traces.models import Span

# A span stored before (an open one, or one a resumed run sends again) is updated: its end,
# status, error and attributes, and it goes out over OTLP again (exported_at cleared).
UPSERT_SQL = """
INSERT INTO {spans} (span_id, trace_id, parent_id, run_id, tool_run_id, kind, name, start,
    "end", status, error, attributes, exported_at)
SELECT s.span_id, s.trace_id, s.parent_id, s.run_id, NULL, s.kind, s.name, s.start, s.finish,
    s.status, s.error, s.attributes, NULL
FROM ROWS FROM (jsonb_to_recordset(%s::jsonb) AS (span_id text, trace_id uuid,
    parent_id text, run_id uuid, kind text, name text, start timestamptz, finish timestamptz,
    status text, error text, attributes jsonb)) WITH ORDINALITY AS s(span_id, trace_id,
    parent_id, run_id, kind, name, start, finish, status, error, attributes, position)
ORDER BY s.position
ON CONFLICT (span_id) DO UPDATE SET "end" = EXCLUDED."end", status = EXCLUDED.status,
    error = EXCLUDED.error, attributes = EXCLUDED.attributes, exported_at = NULL
"""


def spans_upsert(rows: list[Span]) -> None:
    """Insert these spans (unsaved instances), or update the stored ones of the same id."""
    values = [
        {
            "span_id": row.span_id,
            "trace_id": str(row.trace_id),
            "parent_id": row.parent_id,
            "run_id": str(row.run_id) if row.run_id else None,
            "kind": row.kind,
            "name": row.name,
            "start": row.start.isoformat() if row.start else None,
            "finish": row.end.isoformat() if row.end else None,
            "status": row.status,
            "error": row.error.replace(NUL, REPLACEMENT),
            "attributes": row.attributes,
        }
        for row in rows
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            UPSERT_SQL.format(spans=Span._meta.db_table),
            [json.dumps(values, cls=NulFreeJSONEncoder)],
        )
