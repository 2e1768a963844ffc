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
