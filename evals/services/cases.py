"""Test cases and suites: create, update, delete, export and import (writes)."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils.text import slugify

from agents_core.models import Agent
from agents_core.services.run_options import run_options_check
from common.exceptions import ApplicationError, Conflict
from evals.models import Suite, TestCase
from evals.spec import spec_errors

EXPORT_VERSION = 1


def _check_spec(agent: Agent, spec: Any, path: str = "$.spec") -> None:
    errors = spec_errors(spec, path=path) or _options_errors(agent, spec, path)
    if errors:
        first = errors[0]
        raise ApplicationError(
            f"{first['path']}: {first['message']}", code="invalid", extra={"errors": errors}
        )


def _options_errors(agent: Agent, spec: dict[str, Any], path: str) -> list[dict[str, str]]:
    """The case's run options, checked as a run start checks them (its fallbacks and base
    URLs through the model gate), with paths inside the case. The agent's own saved
    configuration is not the case's to answer for: a run start reports that."""
    if not spec.get("options"):
        return []
    try:
        run_options_check(agent=agent, options=spec["options"])
    except ApplicationError as exc:
        errors = exc.extra.get("errors") or [{"path": "$.options", "message": exc.message}]
        return [
            {**error, "path": path + error["path"][1:]}
            for error in errors
            if error["path"].startswith("$.options")
        ]
    return []


def _name_taken(field: str, message: str) -> Conflict:
    return Conflict(
        message, code="exists", extra={"errors": [{"path": f"$.{field}", "message": message}]}
    )


def case_create(
    *, agent: Agent, owner: Any, name: str, spec: dict[str, Any], description: str = ""
) -> TestCase:
    _check_spec(agent, spec)
    try:
        with transaction.atomic():
            return TestCase.objects.create(
                agent=agent, owner=owner, name=name, description=description, spec=spec
            )
    except IntegrityError:
        raise _name_taken("name", f"A case named {name!r} exists for this agent.") from None


def case_update(*, case: TestCase, data: dict[str, Any]) -> TestCase:
    if "spec" in data:
        _check_spec(case.agent, data["spec"])
    for key in ("name", "description", "spec"):
        if key in data:
            setattr(case, key, data[key])
    try:
        with transaction.atomic():
            case.save()
    except IntegrityError:
        raise _name_taken("name", f"A case named {case.name!r} exists for this agent.") from None
    return case


def case_delete(*, case: TestCase) -> None:
    case.delete()


def _cases_of(*, agent: Agent, owner: Any, ids: list[int] | None) -> list[TestCase]:
    cases = TestCase.objects.filter(agent=agent, owner=owner)
    if ids is None:
        return list(cases)
    found = {case.pk: case for case in cases.filter(pk__in=ids)}
    for index, case_id in enumerate(ids):
        if case_id not in found:
            raise ApplicationError(
                f"No case {case_id} of this agent.",
                code="not_found",
                extra={"errors": [{"path": f"$.cases[{index}]", "message": "no such case"}]},
            )
    return [found[case_id] for case_id in ids]


@transaction.atomic
def suite_create(
    *,
    agent: Agent,
    owner: Any,
    name: str,
    slug: str = "",
    cases: list[int] | None = None,
    repeat: int = 1,
) -> Suite:
    """A suite of the agent's cases (`cases`: ids; None: every case the agent has now)."""
    slug = slug or slugify(name)[:100]
    if not slug:
        raise ApplicationError(
            "The suite needs a slug.", extra={"errors": [{"path": "$.slug", "message": "empty"}]}
        )
    members = _cases_of(agent=agent, owner=owner, ids=cases)
    try:
        with transaction.atomic():
            suite = Suite.objects.create(
                agent=agent, owner=owner, name=name, slug=slug, repeat=repeat
            )
    except IntegrityError:
        raise _name_taken("slug", f"You have a suite {slug!r} already.") from None
    suite.cases.set(members)
    return suite


@transaction.atomic
def suite_update(*, suite: Suite, data: dict[str, Any]) -> Suite:
    for key in ("name", "repeat"):
        if key in data:
            setattr(suite, key, data[key])
    suite.save()
    if "cases" in data:
        suite.cases.set(_cases_of(agent=suite.agent, owner=suite.owner, ids=data["cases"]))
    return suite


def suite_delete(*, suite: Suite) -> None:
    suite.delete()


def cases_export(*, agent: Agent, owner: Any) -> dict[str, Any]:
    """The agent's cases and suites as JSON (suites name their cases by name)."""
    cases = TestCase.objects.filter(agent=agent, owner=owner)
    suites = Suite.objects.filter(agent=agent, owner=owner).prefetch_related("cases")
    return {
        "version": EXPORT_VERSION,
        "agent": agent.slug,
        "cases": [{"name": c.name, "description": c.description, "spec": c.spec} for c in cases],
        "suites": [
            {
                "slug": s.slug,
                "name": s.name,
                "repeat": s.repeat,
                "cases": [c.name for c in s.cases.all()],
            }
            for s in suites
        ],
    }


@transaction.atomic
def cases_import(*, agent: Agent, owner: Any, data: Any) -> dict[str, int]:
    """Create or replace (by name / slug) the cases and suites of an export. All or nothing."""
    from evals.spec import EXPORT_SCHEMA
    from tools_app.execution import schema_errors

    errors = schema_errors(EXPORT_SCHEMA, data)
    if errors:
        raise ApplicationError(
            f"{errors[0]['path']}: {errors[0]['message']}", extra={"errors": errors}
        )
    by_name: dict[str, TestCase] = {}
    for index, item in enumerate(data["cases"]):
        _check_spec(agent, item["spec"], path=f"$.cases[{index}].spec")
        case, _ = TestCase.objects.update_or_create(
            agent=agent,
            owner=owner,
            name=item["name"],
            defaults={"description": item.get("description", ""), "spec": item["spec"]},
        )
        by_name[case.name] = case
    known = {c.name: c for c in TestCase.objects.filter(agent=agent, owner=owner)}
    for index, item in enumerate(data.get("suites") or []):
        members = []
        for position, name in enumerate(item["cases"]):
            if name not in known:
                raise ApplicationError(
                    f"$.suites[{index}].cases[{position}]: no case named {name!r}",
                    extra={
                        "errors": [
                            {
                                "path": f"$.suites[{index}].cases[{position}]",
                                "message": f"no case named {name!r}",
                            }
                        ]
                    },
                )
            members.append(known[name])
        suite = _suite_for_import(agent=agent, owner=owner, slug=item["slug"])
        suite.name = item.get("name") or item["slug"]
        suite.repeat = item.get("repeat", 1)
        suite.save()
        suite.cases.set(members)
    return {"cases": len(data["cases"]), "suites": len(data.get("suites") or [])}


def _suite_for_import(*, agent: Agent, owner: Any, slug: str) -> Suite:
    """The agent's suite with this slug (replaced), or a new one; a slug the user gave a
    suite of another agent gets a free suffix (`-2`, `-3`...)."""
    taken = set(Suite.objects.filter(owner=owner).values_list("slug", flat=True))
    existing = Suite.objects.filter(owner=owner, slug=slug, agent=agent).first()
    if existing is not None:
        return existing
    free, number = slug, 1
    while free in taken:
        number += 1
        free = f"{slug[: 100 - len(str(number)) - 1]}-{number}"
    return Suite(agent=agent, owner=owner, slug=free)
