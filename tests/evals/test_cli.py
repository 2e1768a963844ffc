"""`manage.py agent test`: the summary, the exit codes (0 passed, 1 a case failed, 2 bad
input) and JUnit XML, checked by parsing it."""

from __future__ import annotations

import subprocess
import sys
from io import StringIO
from xml.etree import ElementTree as ET

import pytest
from django.core.management import CommandError, call_command

from evals.models import Suite, SuiteRun
from tests.conftest import ROOT, celery_worker_process, child_process_env
from tests.evals.conftest import DEMO

pytestmark = pytest.mark.django_db(transaction=True)


def agent_cmd(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("agent", *args, stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, out.getvalue(), str(exc)
    return 0, out.getvalue(), err.getvalue()


def test_a_failing_suite_exits_1_and_writes_junit(demo, owner, tmp_path):
    report = tmp_path / "report.xml"
    code, out, err = agent_cmd(
        "--owner",
        owner.username,
        "test",
        "travel-desk-demo",
        "--in-process",
        "--junit",
        str(report),
    )
    assert code == 1 and "4 case(s) failed" in err
    assert "PASS weather in Paris" in out and "FAIL built to fail: regex miss" in out
    assert "$.city" in out  # the wrong argument's path is in the summary

    root = ET.parse(report).getroot()
    (suite,) = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("7", "4")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert cases["weather in Paris"].find("failure") is None
    failure = cases["built to fail: wrong tool argument"].find("failure")
    assert "$.city" in failure.get("message") and "London" in failure.text
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["agent"] == "travel-desk" and props["model"] == "studio/scripted"


def test_a_passing_suite_exits_0_with_repeats(demo, owner, tmp_path):
    passing = demo.cases.filter(name__in=["weather in Paris", "asks for the city"])
    suite = Suite.objects.create(agent=demo.agent, owner=owner, slug="green", name="Green")
    suite.cases.set(passing)
    report = tmp_path / "green.xml"
    code, out, _ = agent_cmd(
        "--owner",
        owner.username,
        "test",
        "green",
        "--repeat",
        "2",
        "--in-process",
        "--junit",
        str(report),
    )
    assert code == 0, out
    assert "PASS weather in Paris 2/2" in out and "2 passed, 0 failed, 0 flaky" in out
    names = [case.get("name") for case in ET.parse(report).getroot().iter("testcase")]
    assert sorted(names) == sorted(
        [
            "asks for the city #1",
            "asks for the city #2",
            "weather in Paris #1",
            "weather in Paris #2",
        ]
    )
    assert SuiteRun.objects.get(suite=suite).repeat == 2


def test_an_agent_slug_runs_every_case_of_the_agent(demo, owner):
    code, out, _ = agent_cmd("--owner", owner.username, "test", "travel-desk", "--in-process")
    assert code == 1 and "Suite travel-desk-all" in out and "7 passed" not in out


@pytest.mark.parametrize(
    "args",
    [
        ["test", "no-such-suite", "--in-process"],
        ["test", "travel-desk-demo", "--repeat", "0", "--in-process"],
        ["tests-import", "travel-desk", "/nonexistent.json"],
    ],
)
def test_bad_input_exits_2(demo, owner, args):
    code, _, err = agent_cmd("--owner", owner.username, *args)
    assert code == 2, err
    assert SuiteRun.objects.count() == 0


def test_the_process_exit_code_is_2_for_an_unknown_suite(demo, owner):
    proc = subprocess.run(
        [sys.executable, "manage.py", "agent", "--owner", owner.username, "test", "nope"],
        cwd=ROOT,
        env=child_process_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "No suite or agent 'nope'" in proc.stderr


def test_export_and_import_round_trip(demo, owner, teammate):
    code, out, _ = agent_cmd("--owner", owner.username, "tests-export", "travel-desk")
    assert code == 0
    exported = __import__("json").loads(out)
    assert len(exported["cases"]) == 7 and exported["suites"][0]["slug"] == "travel-desk-demo"
    code, out, _ = agent_cmd("--owner", teammate.username, "tests-import", "travel-desk", str(DEMO))
    assert code == 0 and "Imported 7 case(s), 1 suite(s)" in out
    assert Suite.objects.get(owner=teammate).cases.count() == 7


def test_without_a_worker_it_says_so_and_queues_nothing(demo, owner):
    code, _, err = agent_cmd("--owner", owner.username, "test", "travel-desk-demo")
    assert code == 3
    assert "No Celery worker answered" in err and "--in-process" in err
    assert not SuiteRun.objects.exists()


@pytest.mark.timeout(120)
def test_a_worker_gone_while_following_ends_the_wait(demo, owner, monkeypatch):
    from evals.management.commands import agent

    monkeypatch.setattr(agent, "STALL_SECONDS", 1.0)
    start = agent.suite_run_start
    with celery_worker_process() as worker:

        def start_after_the_worker_died(**kwargs):
            # The ping before queueing found the worker; it dies before taking the run.
            worker.kill()
            worker.wait()
            return start(**kwargs)

        monkeypatch.setattr(agent, "suite_run_start", start_after_the_worker_died)
        code, _, err = agent_cmd("--owner", owner.username, "test", "travel-desk-demo")
    run = SuiteRun.objects.get()
    assert code == 3
    assert f"Suite run {run.pk} stays queued until a worker takes it." in err
    assert run.status == "queued"


@pytest.mark.timeout(300)
def test_without_in_process_the_workers_play_the_suite(demo, owner, celery_worker, tmp_path):
    report = tmp_path / "report.xml"
    code, out, err = agent_cmd(
        "--owner", owner.username, "test", "travel-desk-demo", "--junit", str(report)
    )
    assert code == 1 and "4 case(s) failed" in err
    assert ET.parse(report).getroot().find("testsuite").get("failures") == "4"
    assert SuiteRun.objects.get().status == "failed"
