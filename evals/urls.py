from __future__ import annotations

from django.urls import path

from evals import api

urlpatterns = [
    path("agents/<slug:slug>/tests/", api.CaseListApi.as_view(), name="evals-case-list"),
    path("agents/<slug:slug>/tests/export", api.CaseExportApi.as_view(), name="evals-case-export"),
    path("agents/<slug:slug>/tests/import", api.CaseImportApi.as_view(), name="evals-case-import"),
    path(
        "agents/<slug:slug>/tests/<int:case_id>/",
        api.CaseDetailApi.as_view(),
        name="evals-case-detail",
    ),
    path(
        "threads/<uuid:thread_id>/test-case-draft",
        api.CaseDraftApi.as_view(),
        name="evals-case-draft",
    ),
    path("suites/", api.SuiteListApi.as_view(), name="evals-suite-list"),
    path("suites/<slug:slug>/", api.SuiteDetailApi.as_view(), name="evals-suite-detail"),
    path("suites/<slug:slug>/runs/", api.SuiteRunListApi.as_view(), name="evals-suite-runs"),
    path(
        "suite-runs/<int:suite_run_id>/",
        api.SuiteRunDetailApi.as_view(),
        name="evals-suite-run-detail",
    ),
]
