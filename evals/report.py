"""A suite run as text (the CLI's summary) and as JUnit XML (for CI systems): one
<testsuite> per suite run, one <testcase> per case and attempt, a <failure> per failed
expectation with its reason."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree as ET

from evals.models import SuiteRun
from evals.selectors import suite_run_results


def _failures(result: dict[str, Any]) -> list[str]:
    lines = []
    for turn in result["turns"]:
        if turn.get("error"):
            lines.append(f"turn {turn['index'] + 1}: {turn['error']}")
        for verdict in turn.get("verdicts") or []:
            if not verdict["passed"]:
                lines.append(f"turn {turn['index'] + 1}: {verdict['type']}: {verdict['reason']}")
    if result["error"] and not lines:
        lines.append(result["error"])
    return lines


def summary_text(suite_run: SuiteRun) -> str:
    summary = suite_run.summary
    snapshot = suite_run.snapshot
    lines = [
        f"Suite {suite_run.suite.slug} (run {suite_run.pk}) on {snapshot.get('agent')} "
        f"v{snapshot.get('agentVersion')} ({snapshot.get('model')}), repeat {suite_run.repeat}"
    ]
    for case in summary.get("cases", []):
        mark = "PASS" if case["status"] == "passed" else "FAIL"
        rate = f" {case['passed']}/{case['attempts']}" if suite_run.repeat > 1 else ""
        lines.append(f"  {mark} {case['name']}{rate}{' (flaky)' if case['flaky'] else ''}")
    for result in suite_run_results(suite_run=suite_run):
        if result["status"] != "passed":
            for failure in _failures(result):
                lines.append(f"    {result['caseName']} #{result['attempt']}: {failure}")
    lines.append(
        f"{summary.get('casesPassed', 0)} passed, {summary.get('casesFailed', 0)} failed, "
        f"{summary.get('flaky', 0)} flaky"
    )
    return "\n".join(lines)


def junit_xml(suite_run: SuiteRun) -> bytes:
    results = suite_run_results(suite_run=suite_run)
    failed = sum(1 for r in results if r["status"] != "passed")
    root = ET.Element("testsuites", tests=str(len(results)), failures=str(failed))
    suite = ET.SubElement(
        root,
        "testsuite",
        name=suite_run.suite.slug,
        tests=str(len(results)),
        failures=str(failed),
        errors="0",
        time=f"{sum(r['durationMs'] for r in results) / 1000:.3f}",
    )
    properties = ET.SubElement(suite, "properties")
    for key in ("agent", "agentVersion", "revision", "model"):
        ET.SubElement(properties, "property", name=key, value=str(suite_run.snapshot.get(key)))
    for result in results:
        name = result["caseName"] + (f" #{result['attempt']}" if suite_run.repeat > 1 else "")
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"{suite_run.snapshot.get('agent')}.{suite_run.suite.slug}",
            name=name,
            time=f"{result['durationMs'] / 1000:.3f}",
        )
        failures = _failures(result) if result["status"] != "passed" else []
        if failures:
            element = ET.SubElement(case, "failure", message=failures[0][:500], type="expectation")
            element.text = "\n".join(failures)
        if result["threadId"]:
            ET.SubElement(case, "system-out").text = f"thread {result['threadId']}"
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
