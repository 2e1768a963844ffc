"""The hand-written INSERTs name every column of their models (runtime/storage/store_sql.py,
runtime/storage/event_store_sql.py, traces/spans_sql.py): no migration check reads them, so a
column added to a model (NOT NULL with no database default, as Django makes it) would
otherwise fail these statements at run time, and a column removed or renamed would too."""

from __future__ import annotations

import re

import pytest
from django.db import models


def _model_columns(model: type[models.Model]) -> set[str]:
    """The columns an INSERT must give: all but a primary key the database numbers."""
    return {
        field.column
        for field in model._meta.concrete_fields
        if not (field.primary_key and isinstance(field, models.AutoField))
    }


_INSERT = re.compile(r"INSERT INTO \{(\w+)\} \(([^)]*)\)")


def _inserts(sql: str) -> list[tuple[str, set[str]]]:
    """(table placeholder, columns named) of each INSERT of a statement."""
    return [
        (table, {name.strip().strip('"') for name in columns.split(",")})
        for table, columns in _INSERT.findall(sql)
    ]


def _statements():
    from agents_core.models import Message, Run, StreamEvent, Thread, ToolCall
    from agents_core.runtime.storage import event_store_sql, store_sql
    from traces import spans_sql
    from traces.models import Span

    tables = {
        "run": Run,
        "message": Message,
        "toolcall": ToolCall,
        "events": StreamEvent,
        "threads": Thread,
        "spans": Span,
    }
    sqls = {
        "store_sql._RUNS_CREATE": store_sql._RUNS_CREATE,
        "store_sql._MESSAGE_START": store_sql._MESSAGE_START,
        "store_sql._STEP_SAVE": store_sql._STEP_SAVE,
        "store_sql._TOOL_RESULT": store_sql._TOOL_RESULT,
        "event_store_sql._STORE_SQL": event_store_sql._STORE_SQL,
        "event_store_sql._STORE_NUMBERED_SQL": event_store_sql._STORE_NUMBERED_SQL,
        "spans_sql.UPSERT_SQL": spans_sql.UPSERT_SQL,
    }
    return tables, sqls


def _checked(tables, sqls) -> tuple[list[tuple[str, str]], list[str]]:
    """(statement, model) of each INSERT read, and what each one gets wrong."""
    checked, wrong = [], []
    for name, sql in sqls.items():
        for table, columns in _inserts(sql):
            model = tables[table]
            expected = _model_columns(model)
            checked.append((name, model.__name__))
            if columns != expected:
                wrong.append(
                    f"{name} inserts into {model.__name__}: missing "
                    f"{sorted(expected - columns)}, unknown {sorted(columns - expected)}"
                )
    return sorted(checked), wrong


def test_every_hand_written_insert_names_exactly_its_models_columns():
    checked, wrong = _checked(*_statements())
    assert wrong == []
    # Every statement that inserts was read (a change of its layout cannot skip the check).
    assert checked == [
        ("event_store_sql._STORE_NUMBERED_SQL", "StreamEvent"),
        ("event_store_sql._STORE_SQL", "StreamEvent"),
        ("spans_sql.UPSERT_SQL", "Span"),
        ("store_sql._MESSAGE_START", "Message"),
        ("store_sql._RUNS_CREATE", "Message"),
        ("store_sql._RUNS_CREATE", "Run"),
        ("store_sql._STEP_SAVE", "ToolCall"),
        ("store_sql._TOOL_RESULT", "Message"),
    ]


def test_a_column_the_statement_lacks_or_the_model_lacks_is_reported():
    """Checked against a model with other columns (Message's for ToolCall's statement),
    both the model's columns the statement misses and its unknown ones are named."""
    from agents_core.models import Message
    from agents_core.runtime.storage import store_sql

    _, wrong = _checked({"toolcall": Message}, {"step": store_sql._STEP_SAVE})
    assert len(wrong) == 1
    assert "missing ['parts', 'role', 'thread_id']" in wrong[0]
    assert "'call_id'" in wrong[0] and "'hook_decisions'" in wrong[0]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ('INSERT INTO {spans} (a, "end")', [("spans", {"a", "end"})]),
        ("UPDATE {run} SET step = 1", []),
    ],
)
def test_inserts_are_read_from_the_statement(sql, expected):
    assert _inserts(sql) == expected
