"""Where every app's migrations stood in release 0.1.0 (commit 5294152).

A fixed record, read once from `git show 5294152:<app>/migrations/`: an operator's
database at 0.1.0 was built by exactly these migrations, and an upgrade starts from them
whatever migrations later releases add. frontend has no models, hence no migrations.
"""

from __future__ import annotations

RELEASE = "0.1.0"
COMMIT = "5294152"

LEAVES = {
    "agents_core": "0011_thread_title_auto",
    "tools_app": "0006_widget_kind_web_search",
    "knowledge": "0001_initial",
    "providers": "0001_initial",
    "traces": "0002_span_tool_run",
    "evals": "0002_suite_run_lease",
}

# The first 16 hex digits of each migration file's SHA-256 as released: databases applied
# exactly this text, so a change belongs in a new migration.
MIGRATION_SHA256 = {
    "agents_core/migrations/0001_initial.py": "9eb170ab2815394a",
    "agents_core/migrations/0002_initial.py": "dee1d5e57215ad84",
    "agents_core/migrations/0003_editor.py": "4597772ab33723f3",
    "agents_core/migrations/0004_signals.py": "0b96fba997d944ac",
    "agents_core/migrations/0005_tasks.py": "18ce3db66fc6926d",
    "agents_core/migrations/0006_run_worker.py": "35b19f8771a109d0",
    "agents_core/migrations/0007_run_worker_beat.py": "a8c158783f488797",
    "agents_core/migrations/0008_editor_sessions.py": "e30af27bb61ce355",
    "agents_core/migrations/0009_nul_free_storage.py": "6f45ff46844fc8d0",
    "agents_core/migrations/0010_run_model.py": "4342f72e7d6a62c0",
    "agents_core/migrations/0011_thread_title_auto.py": "4a99d6afea7dc33b",
    "tools_app/migrations/0001_initial.py": "72b74ab59c2e36cf",
    "tools_app/migrations/0002_sources.py": "95111da8430ac863",
    "tools_app/migrations/0003_toolrun_lease.py": "2a6da3ae82121ff1",
    "tools_app/migrations/0004_nul_free_storage.py": "cd9b6388fff4b886",
    "tools_app/migrations/0005_oauth_tokens.py": "82b40e042d17a9d5",
    "tools_app/migrations/0006_widget_kind_web_search.py": "9515466e76c6bc82",
    "knowledge/migrations/0001_initial.py": "5d654e7664abdf9a",
    "providers/migrations/0001_initial.py": "a7028966e6d1fb62",
    "traces/migrations/0001_initial.py": "b1c8fbfee57a6bba",
    "traces/migrations/0002_span_tool_run.py": "5d5ce3d75e7e2801",
    "evals/migrations/0001_initial.py": "96a24c54c78073b8",
    "evals/migrations/0002_suite_run_lease.py": "2f9b63ecb4ed4921",
}
