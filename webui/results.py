"""The JSON API of results: a job's cases, one case with its trace, counts for charts, the history search
across jobs and its export; each route with its OpenAPI description."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request

from webui.context import case_queries, queries
from webui.export import FORMATS, csv_lines, ndjson_lines, streamed
from webui.games import any_number_name, any_unit
from webui.params import given, result_filter
from webui.spec import (
    BAD_REQUEST,
    FLAG,
    NOT_FOUND,
    TEXT,
    Operations,
    error,
    json_body,
    paging_parameters,
    query,
    ref,
)
from worker import engines
from worker.jobs.errors import Invalid
from worker.jobs.filters import MAX_PAGED, SORTS
from worker.jobs.views import CaseDetail, CasePage, DistributionView
from worker.store.models import MAX_INT

results = Blueprint("results", __name__, url_prefix="/api")
operations = Operations(results)

#: Keyset paging: the ``next`` and ``prev`` values of a page, or the last page (not with a page number).
CURSORS = [
    query("after", "The page after this cursor (a page's next).", {"type": "string", "pattern": r"^\d{1,10}:\d{1,10}$"}),
    query("before", "The page before this cursor (a page's prev).",
          {"type": "string", "pattern": r"^\d{1,10}:\d{1,10}$"}),
    query("last", "1 for the last page.", FLAG),
]


def result_filters(with_game: bool = True, with_job: bool = True, paged: bool = True) -> list[dict[str, Any]]:
    """The query parameters of :class:`worker.jobs.filters.ResultFilter` (:func:`webui.params.result_filter`),
    with those of its pages (cursors and page numbers) when ``paged``."""
    params = []
    if with_game:
        params.append(query("game", "Only this game (with input and no game: the one game the input is a case of).",
                            {"type": "string", "enum": engines.names()}))
    numbers = any_number_name()
    params += [
        query("outcome", "Only this outcome (an outcome of another game than ``game`` matches nothing).",
              {"type": "string", "enum": list(engines.outcomes())}),
        query("number_min", f"Smallest number ({numbers}).", {"type": "integer", "minimum": 0, "maximum": MAX_INT}),
        query("number_max", f"Largest number ({numbers}).", {"type": "integer", "minimum": 0, "maximum": MAX_INT}),
        query("since", "Solved at or after this ISO 8601 date or time (UTC unless it says).",
              {**TEXT, "format": "date-time"}),
        query("until", "Solved before this ISO 8601 date or time.", {**TEXT, "format": "date-time"}),
        query("input", f"A {any_unit()} written as text: finds the same case in any job, whatever its spacing (without "
                       "game, of the one game it is a case of; a text that is not one of the game's cases, or of "
                       "no game's or several, is refused with 400, naming the line and column).", TEXT),
        query("sort", "Sort key, descending with a leading '-'.",
              {"type": "string", "default": "index", "enum": [*SORTS, *(f"-{key}" for key in SORTS)]}),
    ]
    if with_job:
        params.append(query("job_id", "Only this job's cases (404 when there is no such job).",
                            {"type": "integer", "minimum": 1, "maximum": MAX_INT}))
    return params + CURSORS + paging_parameters(deepest=MAX_PAGED) if paged else params


CASE_PAGE = json_body(ref(CasePage), "A page of results.")
CASE = json_body(ref(CaseDetail), "The case.")


@operations.get("/jobs/<id:job_id>/cases", "jobCases", "A job's results, paged, sortable and filterable",
                tag="results", parameters=result_filters(with_game=False, with_job=False),
                responses={"200": CASE_PAGE, "400": BAD_REQUEST, "404": NOT_FOUND})
def job_cases(job_id: int) -> Any:
    flt = result_filter(given(request.args), job_id=job_id, game=queries().job(job_id).game)
    return jsonify(case_queries().results(flt).to_dict())


@operations.get("/jobs/<id:job_id>/cases/<id:index>", "jobCase",
                "One case of a job, by its number in the file, with its trace", tag="results",
                responses={"200": CASE, "404": NOT_FOUND})
def job_case(job_id: int, index: int) -> Any:
    return jsonify(case_queries().case_by_index(job_id, index).to_dict())


@operations.get("/jobs/<id:job_id>/distribution", "jobDistribution",
                "Counts of cases by outcome and number: what the job page's charts draw", tag="results",
                responses={"200": json_body(ref(DistributionView), "The distribution."), "404": NOT_FOUND})
def job_distribution(job_id: int) -> Any:
    return jsonify(queries().distribution(job_id).to_dict())


@operations.get("/cases/<case_id:case_id>", "getCase", "One case with its trace", tag="results",
                responses={"200": CASE, "404": NOT_FOUND})
def get_case(case_id: int) -> Any:
    return jsonify(case_queries().case(case_id).to_dict())


@operations.get("/results", "searchResults", "Search every stored result across all jobs", tag="results",
                parameters=result_filters(),
                responses={"200": CASE_PAGE, "400": BAD_REQUEST, "404": error("There is no job job_id.")})
def search_results() -> Any:
    return jsonify(case_queries().results(result_filter(given(request.args))).to_dict())


@operations.get("/results/export", "exportResults", "Every matching result as NDJSON or CSV", tag="results",
                parameters=[*result_filters(paged=False), query("format", "The file format.", {
                    "type": "string", "enum": list(FORMATS), "default": FORMATS[0]})],
                responses={"200": {"description": "The results, streamed.", "content": {
                    "application/x-ndjson": {"schema": {"type": "string"}}, "text/csv": {"schema": {"type": "string"}}}},
                    "400": BAD_REQUEST, "404": NOT_FOUND})
def export_results() -> Response:
    """Every matching result as NDJSON (``format=ndjson``, the default) or CSV (``format=csv``)."""
    args = given(request.args)
    flt = result_filter(args)
    kind = args.get("format", FORMATS[0])
    if kind not in FORMATS:
        raise Invalid(f"unknown export format {kind!r}; expected {' or '.join(FORMATS)}")
    name = "results"
    if flt.job_id is not None:
        queries().job(flt.job_id)  # 404 for a job that does not exist, before the download starts
        name = f"job-{flt.job_id}-results"
    rows = case_queries().iter_results(flt)
    body = csv_lines(rows) if kind == "csv" else ndjson_lines(rows)
    mimetype = "text/csv" if kind == "csv" else "application/x-ndjson"
    return Response(streamed(body), mimetype=mimetype,
                    headers={"Content-Disposition": f'attachment; filename="{name}.{kind}"'})
