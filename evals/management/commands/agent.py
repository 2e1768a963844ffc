"""`python manage.py agent test|tests-import|tests-export`: agent tests from the shell.

    agent test travel-desk-demo [--repeat 3] [--junit report.xml]   # a suite, by slug
    agent test travel-desk                                           # every case of an agent
    agent tests-import travel-desk evals/demo/travel_desk.json
    agent tests-export travel-desk > tests.json
    agent test-sweep                     # take back suite runs whose worker died, now

`test` runs in this process in the embedded mode (or with --in-process) and through the
Celery workers otherwise, prints a summary, and exits 0 when every case passed, 1 when a
case failed, 2 on bad input and 3 when no Celery worker answers (before the suite run is
queued, or while it waits: it then stays queued for the next worker). Cases and suites
are those of --owner (default: the only superuser).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents_core.selectors import agent_get
from common.exceptions import ApplicationError
from evals.models import Suite, SuiteRun, SuiteRunStatus
from evals.report import junit_xml, summary_text
from evals.selectors import suite_get
from evals.services.cases import cases_export, cases_import, suite_create, suite_update
from evals.services.recovery import suite_runs_sweep
from evals.services.suite_runs import suite_run_execute, suite_run_start

BAD_INPUT = 2
NO_WORKER = 3
PING_SECONDS = 2.0  # how long a ping waits for the workers' answers
STALL_SECONDS = 30.0  # no progress for this long: are the workers still there?
NO_WORKER_MESSAGE = (
    "No Celery worker answered: start one (`celery -A studio worker`) or run the suite "
    "in this process with --in-process."
)


def workers_answer() -> bool:
    """Whether at least one Celery worker answers a ping on the broker."""
    from studio.celery import app

    return bool(app.control.ping(timeout=PING_SECONDS))


class Command(BaseCommand):
    help = "Run an agent's test suite (JUnit XML for CI), import and export its tests."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--owner", help="Username owning the tests (default: the only superuser)."
        )
        sub = parser.add_subparsers(dest="action", required=True)
        test = sub.add_parser("test", help="Run a suite (slug) or every case of an agent (slug).")
        test.add_argument("target", metavar="agent-or-suite")
        test.add_argument("--repeat", type=int, default=None, help="Attempts per case (k).")
        test.add_argument("--junit", type=Path, default=None, help="Write JUnit XML here.")
        test.add_argument("--in-process", action="store_true", help="Run here, not in workers.")
        imp = sub.add_parser("tests-import", help="Import cases and suites from a JSON export.")
        imp.add_argument("agent")
        imp.add_argument("file", type=Path)
        exp = sub.add_parser("tests-export", help="Print an agent's cases and suites as JSON.")
        exp.add_argument("agent")
        sub.add_parser(
            "test-sweep", help="Requeue (or fail) suite runs whose worker died, everyone's."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "test-sweep":
            report = suite_runs_sweep()
            self.stdout.write(
                f"Requeued {len(report['requeued'])} suite run(s), failed {len(report['failed'])}."
            )
            return
        try:
            owner = self._owner(options)
            if options["action"] == "tests-import":
                data = _read_json(options["file"])
                counts = cases_import(
                    agent=self._agent(owner, options["agent"]), owner=owner, data=data
                )
                self.stdout.write(
                    f"Imported {counts['cases']} case(s), {counts['suites']} suite(s)."
                )
                return
            if options["action"] == "tests-export":
                agent = self._agent(owner, options["agent"])
                self.stdout.write(json.dumps(cases_export(agent=agent, owner=owner), indent=2))
                return
            suite = self._suite(owner, options["target"])
            if not _here(options) and not workers_answer():
                raise CommandError(NO_WORKER_MESSAGE, returncode=NO_WORKER)
            suite_run = suite_run_start(
                suite=suite, user=owner, repeat=options["repeat"], enqueue=not _here(options)
            )
        except ApplicationError as exc:
            raise CommandError(exc.message, returncode=BAD_INPUT) from exc
        if _here(options):
            suite_run_execute(suite_run_id=suite_run.pk)
        else:
            self._follow(suite_run)
        suite_run.refresh_from_db()
        self.stdout.write(summary_text(suite_run))
        if options["junit"]:
            options["junit"].write_bytes(junit_xml(suite_run))
            self.stdout.write(f"JUnit XML: {options['junit']}")
        if suite_run.status != SuiteRunStatus.PASSED:
            raise CommandError(
                f"{suite_run.summary.get('casesFailed', 0)} case(s) failed.", returncode=1
            )

    def _follow(self, suite_run: SuiteRun) -> None:
        shown = -1
        moved = time.monotonic()
        while suite_run.status not in (SuiteRunStatus.PASSED, SuiteRunStatus.FAILED):
            done = (suite_run.summary or {}).get("done", 0)
            if done != shown:
                self.stderr.write(f"{done}/{suite_run.summary.get('total', 0)} done")
                shown, moved = done, time.monotonic()
            elif time.monotonic() - moved > STALL_SECONDS:
                # A long case is fine while a worker is there; with none, stop waiting.
                if not workers_answer():
                    raise CommandError(
                        f"{NO_WORKER_MESSAGE} Suite run {suite_run.pk} stays "
                        f"{suite_run.status} until a worker takes it.",
                        returncode=NO_WORKER,
                    )
                moved = time.monotonic()
            time.sleep(0.5)
            suite_run.refresh_from_db()

    def _owner(self, options: dict[str, Any]) -> Any:
        users = get_user_model().objects
        if options["owner"]:
            user = users.filter(username=options["owner"]).first()
            if user is None:
                raise ApplicationError(f"No user named {options['owner']!r}.")
            return user
        superusers = list(users.filter(is_superuser=True)[:2])
        if len(superusers) != 1:
            raise ApplicationError("Name the owner of the tests with --owner USERNAME.")
        return superusers[0]

    def _agent(self, owner: Any, slug: str) -> Any:
        agent = agent_get(user=owner, slug=slug)
        if agent is None:
            raise ApplicationError(f"No agent {slug!r}.")
        return agent

    def _suite(self, owner: Any, target: str) -> Suite:
        """The suite with this slug, else the agent's suite of every case it has now."""
        suite = suite_get(user=owner, slug=target)
        if suite is not None:
            return suite
        agent = agent_get(user=owner, slug=target)
        if agent is None:
            raise ApplicationError(f"No suite or agent {target!r}.")
        if not agent.test_cases.filter(owner=owner).exists():
            raise ApplicationError(f"The agent {target!r} has no test cases.")
        slug = f"{agent.slug}-all"[:100]
        ids = list(agent.test_cases.filter(owner=owner).values_list("pk", flat=True))
        existing = suite_get(user=owner, slug=slug)
        if existing is not None and existing.agent_id == agent.pk:
            return suite_update(suite=existing, data={"cases": ids})
        return suite_create(
            agent=agent, owner=owner, name=f"{agent.name}: every case", slug=slug, cases=ids
        )


def _here(options: dict[str, Any]) -> bool:
    return bool(options.get("in_process") or settings.CELERY_EMBEDDED_WORKER)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except OSError as exc:
        raise ApplicationError(f"Cannot read {path}: {exc.strerror}.") from exc
    except ValueError as exc:
        raise ApplicationError(f"{path} is not JSON: {exc}.") from exc
