"""Pages: /tests/ (the user's suites and their runs), /tests/runs/<id>/ (a suite run's
results with a live progress bar) and /tests/compare/?a=<id>&b=<id> (two runs side by
side). Another user's run is a 404."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from evals import selectors
from evals.compare import suite_runs_compare


@login_required
def index(request: HttpRequest) -> HttpResponse:
    suites = selectors.suite_list(user=request.user)
    runs = selectors.suite_run_list(user=request.user)[:50]
    return render(request, "evals/index.html", {"suites": suites, "runs": runs})


@login_required
def run_detail(request: HttpRequest, suite_run_id: int) -> HttpResponse:
    suite_run = selectors.suite_run_get(user=request.user, suite_run_id=suite_run_id)
    if suite_run is None:
        raise Http404("No such suite run.")
    data = selectors.jsonable(
        {
            **selectors.suite_run_info(suite_run),
            "results": selectors.suite_run_results(suite_run=suite_run),
        }
    )
    return render(request, "evals/run.html", {"suite_run": suite_run, "run_data": data})


@login_required
def compare(request: HttpRequest) -> HttpResponse:
    before = selectors.suite_run_get(user=request.user, suite_run_id=request.GET.get("a"))
    after = selectors.suite_run_get(user=request.user, suite_run_id=request.GET.get("b"))
    if before is None or after is None:
        raise Http404("No such suite run.")
    return render(
        request,
        "evals/compare.html",
        {"before": before, "after": after, **suite_runs_compare(before=before, after=after)},
    )
