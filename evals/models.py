"""Agent tests: cases (turns, scripted answers, expectations), suites, suite runs with
the agent's snapshot, and one result per case and attempt."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class TestCase(models.Model):
    __test__ = False  # not a pytest class

    agent = models.ForeignKey(
        "agents_core.Agent", on_delete=models.CASCADE, related_name="test_cases"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="test_cases"
    )
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    # {"turns": [{"message", "answers": [...], "expect": [...]}], "options": {...}},
    # validated by evals.spec before it is saved.
    spec = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "agent", "name"], name="evals_case_unique_name"
            )
        ]

    def __str__(self) -> str:
        return self.name


class Suite(models.Model):
    agent = models.ForeignKey("agents_core.Agent", on_delete=models.CASCADE, related_name="suites")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="suites"
    )
    slug = models.SlugField(max_length=100)
    name = models.CharField(max_length=200)
    cases = models.ManyToManyField(TestCase, related_name="suites", blank=True)
    repeat = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "slug"], name="evals_suite_unique_slug")
        ]

    def __str__(self) -> str:
        return self.slug


class SuiteRunStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    PASSED = "passed"
    FAILED = "failed"


class SuiteRun(models.Model):
    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="runs")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="suite_runs"
    )
    status = models.CharField(
        max_length=10, choices=SuiteRunStatus.choices, default=SuiteRunStatus.QUEUED
    )
    repeat = models.PositiveIntegerField(default=1)
    # The agent as the run found it: version, revision, model, instructions, options.
    snapshot = models.JSONField(default=dict)
    summary = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The lease of the process playing the run (evals/services/leases.py): who (`host:pid`),
    # which attempt, and until when (database time) no other process may take it back.
    worker = models.CharField(max_length=200, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    lease_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.suite} #{self.pk}"


class ResultStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    PASSED = "passed"
    FAILED = "failed"


class CaseResult(models.Model):
    suite_run = models.ForeignKey(SuiteRun, on_delete=models.CASCADE, related_name="results")
    case = models.ForeignKey(TestCase, on_delete=models.CASCADE, related_name="results")
    attempt = models.PositiveIntegerField(default=1)
    status = models.CharField(
        max_length=10, choices=ResultStatus.choices, default=ResultStatus.PENDING
    )
    # One entry per turn: {"message", "runId", "status", "verdicts": [...]}.
    turns = models.JSONField(default=list, blank=True)
    thread = models.ForeignKey(
        "agents_core.Thread", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    agent_version = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    duration_ms = models.FloatField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["case__name", "attempt"]
        constraints = [
            models.UniqueConstraint(
                fields=["suite_run", "case", "attempt"], name="evals_result_one_per_attempt"
            )
        ]

    def __str__(self) -> str:
        return f"{self.case} #{self.attempt}: {self.status}"
