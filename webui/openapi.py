"""The OpenAPI 3.1 document of the JSON API, served at ``/api/openapi.json``.

The paths and parameters are written here next to the routes; every response schema is
made from the typed views of :mod:`worker.jobs.views`, the same classes the API answers
with. ``tests/web/test_openapi.py`` checks that every route is documented with its
methods and that real responses match their documented schemas field by field.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime
from functools import cache
from types import UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

from webui.api import JOBS_PER_PAGE
from webui.converters import MAX_CASE_ID
from worker import engines
from worker.checks.views import CheckCasePage, CheckView
from worker.jobs.filters import DEFAULT_PER_PAGE, MAX_PAGED, MAX_PER_PAGE, SORTS
from worker.jobs.queries import MAX_FILENAME_FILTER
from worker.jobs.views import (
    CaseDetail,
    CasePage,
    CaseView,
    DistributionView,
    GameView,
    HealthView,
    JobPage,
    JobView,
    OverviewView,
    ThroughputView,
    TimingsView,
    View,
    WorkersView,
)
from worker.states import JobStatus
from worker.store.models import MAX_INT


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _error(description: str) -> dict[str, Any]:
    return _json(_ref("Error"), description)


def _query(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description,
            "schema": schema or {"type": "string"}}


def _path(name: str, description: str, maximum: int = MAX_INT) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "description": description + " An id that cannot "
            "exist (0, or past the largest the database holds) is answered 404 like any other.",
            "schema": {"type": "integer", "minimum": 1, "maximum": maximum}}


JOB_ID = _path("job_id", "The job's id.")
#: A yes/no parameter as :func:`webui.params.flag` reads it.
FLAG = {"type": "string", "enum": ["1", "true", "yes", "0", "false", "no"]}


def _paging(per_page: int = DEFAULT_PER_PAGE, deepest: int = MAX_INT) -> list[dict[str, Any]]:
    return [_query("page", "Page number, from 1." + (
                       f" Page numbers reach the first {MAX_PAGED:,} results (page × per_page ≤ {MAX_PAGED:,}; "
                       "a deeper page is refused with 400): past them, follow the pages' next and prev cursors."
                       if deepest == MAX_PAGED else ""),
                   {"type": "integer", "minimum": 1, "maximum": deepest, "default": 1}),
            _query("per_page", f"Items per page (at most {MAX_PER_PAGE}).",
                   {"type": "integer", "minimum": 1, "maximum": MAX_PER_PAGE, "default": per_page})]


NOT_FOUND = _error("No such job or case.")
BAD_REQUEST = _error("A parameter is not valid; the message says which and why.")
UNAUTHORIZED = {**_error("No valid API key (only when the service has keys, DEALER_API_KEYS): the answer "
                         "carries WWW-Authenticate: Bearer."),
                "headers": {"WWW-Authenticate": {"schema": {"type": "string"},
                                                 "description": 'Bearer realm="dealer"'}}}
FORBIDDEN = _error("A request from the pages without their CSRF token, or one a browser marks as cross-site. "
                   "Requests with a bearer token need no CSRF token.")
RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}}
TOO_MANY = {**_error("The client (its API key, else its address) already has as many unfinished jobs as it may "
                     "(DEALER_MAX_ACTIVE_JOBS_PER_CLIENT), or created as many as it may in the last minute "
                     "(DEALER_MAX_JOBS_PER_MINUTE_PER_CLIENT); or, as for every operation, too many wrong keys."),
            "headers": RETRY_AFTER}
THROTTLED = {**_error("Too many wrong API keys from this address, or with this key's first characters "
                      "(DEALER_AUTH_FAILURES_ALLOWED): wait as long as Retry-After says."), "headers": RETRY_AFTER}
UNAVAILABLE = _error("The database does not answer; try again in a moment.")
#: Writes need a key when the service has keys; reads only when DEALER_PUBLIC_READS is false.
WRITE_SECURITY = [{"bearerAuth": []}, {"sessionCookie": []}]
READ_SECURITY = [{}, {"bearerAuth": []}, {"sessionCookie": []}]
OPEN = [{}]


def _result_filters(with_game: bool = True, with_job: bool = True) -> list[dict[str, Any]]:
    """The query parameters of :class:`worker.jobs.filters.ResultFilter`."""
    games = {"type": "string", "enum": engines.names()}
    params = []
    if with_game:
        params.append(_query("game", "Only this game (needed to search by input).", games))
    params += [
        _query("outcome", "Only this outcome (an outcome of another game than ``game`` matches nothing).",
               {"type": "string", "enum": list(engines.outcomes())}),
        _query("number_min", "Smallest number (deals, piles or waits).",
               {"type": "integer", "minimum": 0, "maximum": MAX_INT}),
        _query("number_max", "Largest number (deals, piles or waits).",
               {"type": "integer", "minimum": 0, "maximum": MAX_INT}),
        _query("since", "Solved at or after this ISO 8601 date or time (UTC unless it says).",
               {"type": "string", "format": "date-time"}),
        _query("until", "Solved before this ISO 8601 date or time.", {"type": "string", "format": "date-time"}),
        _query("input", "A deck or hand written as text: finds the same case in any job, whatever its "
                        "spacing (needs game; a text that is not one of the game's cases is refused with 400, "
                        "naming the line and column).", {"type": "string", "minLength": 1}),
        _query("sort", "Sort key, descending with a leading '-'.",
               {"type": "string", "default": "index", "enum": [*SORTS, *(f"-{key}" for key in SORTS)]}),
    ]
    if with_job:
        params.append(_query("job_id", "Only this job's cases (404 when there is no such job).",
                             {"type": "integer", "minimum": 1, "maximum": MAX_INT}))
    return params + CURSORS + _paging(deepest=MAX_PAGED)


#: Keyset paging: the ``next`` and ``prev`` values of a page, or the last page (not with a page number).
CURSORS = [
    _query("after", "The page after this cursor (a page's next).", {"type": "string", "pattern": r"^\d{1,10}:\d{1,10}$"}),
    _query("before", "The page before this cursor (a page's prev).",
           {"type": "string", "pattern": r"^\d{1,10}:\d{1,10}$"}),
    _query("last", "1 for the last page.", FLAG),
]


def _component(view: type[View]) -> str:
    """A view's name in ``components/schemas``: ``JobView`` is ``Job``."""
    name = view.__name__
    return name.removesuffix("View") if name.endswith("View") else name


def _type_schema(kind: Any, found: dict[str, type[View]]) -> dict[str, Any]:
    """The JSON Schema of a view field's type; views met on the way are added to ``found``."""
    if isinstance(kind, type) and issubclass(kind, View):
        found.setdefault(_component(kind), kind)
        return _ref(_component(kind))
    origin, args = get_origin(kind), get_args(kind)
    if origin in (UnionType, Union):
        options = [a for a in args if a is not type(None)]
        inner = _type_schema(options[0], found) if len(options) == 1 else {}
        if "type" in inner and isinstance(inner["type"], str):
            return {**inner, "type": [inner["type"], "null"]}
        return {"anyOf": [inner, {"type": "null"}]}
    if origin is list:
        return {"type": "array", "items": _type_schema(args[0], found)} if args else {"type": "array"}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(args[1], found)}
    simple = {int: "integer", float: "number", str: "string", bool: "boolean", datetime: "string"}
    if kind in simple:
        return {"type": simple[kind]}
    return {}  # Any


def view_schema(view: type[View], found: dict[str, type[View]] | None = None) -> dict[str, Any]:
    """The JSON Schema of a view: every field, each required, nothing else allowed.

    >>> from worker.jobs.views import SlowestCase
    >>> schema = view_schema(SlowestCase)
    >>> schema["required"], schema["properties"]["solve_us"]["type"]
    (['id', 'index', 'solve_us'], 'integer')
    """
    found = {} if found is None else found
    hints = get_type_hints(view)
    properties: dict[str, Any] = {}
    for item in fields(view):  # type: ignore[arg-type]
        extra = {key: value for key, value in item.metadata["schema"].items() if key != "csv"}
        properties[item.name] = {**_type_schema(hints[item.name], found), **extra,
                                 "description": item.metadata["description"]}
    for name, (kind, description) in view.derived.items():
        properties[name] = {**_type_schema(kind, found), "description": description}
    return {"type": "object", "required": list(properties), "properties": properties,
            "additionalProperties": False}


#: The views the API answers with (the views they hold are found from these).
ROOT_VIEWS: tuple[type[View], ...] = (JobView, JobPage, CaseView, CaseDetail, CasePage, DistributionView,
                                      TimingsView, OverviewView, GameView, HealthView, WorkersView, ThroughputView,
                                      CheckView, CheckCasePage)


def _schemas() -> dict[str, Any]:
    found: dict[str, type[View]] = {_component(view): view for view in ROOT_VIEWS}
    schemas: dict[str, Any] = {"Error": {"type": "object", "required": ["error"], "additionalProperties": False,
                                         "properties": {"error": {"type": "string"}}}}
    while missing := [name for name in found if name not in schemas]:
        for name in missing:
            schemas[name] = view_schema(found[name], found)
    return dict(sorted(schemas.items()))


def _check_paths() -> dict[str, Any]:
    from webui.openapi_checks import check_paths  # it is made of this module's pieces

    return check_paths()


def _paths() -> dict[str, Any]:
    job_created = {"201": _json(_ref("Job"), "The new job."), "400": BAD_REQUEST}
    return {
        "/api/jobs": {
            "get": {"summary": "Jobs, newest first, paged", "operationId": "listJobs", "tags": ["jobs"],
                    "parameters": [_query("status", "Only jobs in this status.",
                                          {"type": "string", "enum": [s.value for s in JobStatus]}),
                                   _query("game", "Only jobs of this game.",
                                          {"type": "string", "enum": engines.names()}),
                                   _query("filename", "Only jobs whose file name contains this text (any case).",
                                          {"type": "string", "maxLength": MAX_FILENAME_FILTER}),
                                   *_paging(JOBS_PER_PAGE)],
                    "responses": {"200": _json(_ref("JobPage"), "A page of jobs."), "400": BAD_REQUEST}},
            "post": {"summary": "Upload a judge file and start a job", "operationId": "createJob", "tags": ["jobs"],
                     "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
                         "type": "object", "required": ["file"], "properties": {
                             "file": {"type": "string", "contentMediaType": "application/octet-stream",
                                      "description": "The judge file."},
                             "game": {"type": "string", "enum": engines.names(),
                                      "description": "Optional when the game can be recognised from the content."},
                             "expected": {"type": "string", "contentMediaType": "text/plain",
                                          "description": "Optional: a program's output for this file, checked "
                                                         "against the job's once it has succeeded (its check's id "
                                                         "is in the job's checks)."},
                         }}}}},
                     "responses": {**job_created, "400": _error(
                         "The file is refused at once, nothing stored: it is empty, compressed (gzip, zip, …) or "
                         "binary, or its game cannot be told; or a parameter is not valid."),
                         "413": _error("The file is over the upload limit (the message "
                                                                 "says the limit)."), "429": TOO_MANY,
                         "415": _error("The expected output is no text (the message says the line and column).")}},
        },
        "/api/jobs/{job_id}": {
            "parameters": [JOB_ID],
            "get": {"summary": "One job with its progress and outcome counts", "operationId": "getJob",
                    "tags": ["jobs"], "responses": {"200": _json(_ref("Job"), "The job."), "404": NOT_FOUND}},
            "delete": {"summary": "Delete a finished job and its results", "operationId": "deleteJob",
                       "tags": ["jobs"], "responses": {"204": {"description": "Deleted."}, "404": NOT_FOUND,
                                                       "409": _error("The job is still running.")}},
        },
        "/api/jobs/{job_id}/cancel": {
            "parameters": [JOB_ID],
            "post": {"summary": "Cancel a job", "operationId": "cancelJob", "tags": ["jobs"],
                     "responses": {"200": _json(_ref("Job"), "The cancelled job."), "404": NOT_FOUND,
                                   "409": _error("The job has already finished.")}},
        },
        "/api/jobs/{job_id}/rerun": {
            "parameters": [JOB_ID],
            "post": {"summary": "Run a job's upload again as a new job", "operationId": "rerunJob", "tags": ["jobs"],
                     "responses": {**job_created, "404": NOT_FOUND,
                                   "409": _error("The upload is no longer stored."), "429": TOO_MANY}},
        },
        "/api/jobs/{job_id}/output": {
            "parameters": [JOB_ID],
            "get": {"summary": "The judge output, byte for byte as the reference solutions print it",
                    "operationId": "jobOutput", "tags": ["jobs"],
                    "parameters": [_query("partial", "1 to get the lines solved so far of an unfinished (or a "
                                                     "failed) job.", FLAG)],
                    "responses": {"200": {"description": "The output.",
                                          "content": {"text/plain": {"schema": {"type": "string"}}}},
                                  "400": BAD_REQUEST, "404": NOT_FOUND,
                                  "409": _error("The job has not succeeded (yet).")}},
        },
        "/api/jobs/{job_id}/cases": {
            "parameters": [JOB_ID],
            "get": {"summary": "A job's results, paged, sortable and filterable", "operationId": "jobCases",
                    "tags": ["results"], "parameters": _result_filters(with_game=False, with_job=False),
                    "responses": {"200": _json(_ref("CasePage"), "A page of results."), "400": BAD_REQUEST,
                                  "404": NOT_FOUND}},
        },
        "/api/jobs/{job_id}/cases/{index}": {
            "parameters": [JOB_ID, _path("index", "The case's number in the file, from 1.")],
            "get": {"summary": "One case of a job, by its number in the file, with its trace",
                    "operationId": "jobCase", "tags": ["results"],
                    "responses": {"200": _json(_ref("CaseDetail"), "The case."), "404": NOT_FOUND}},
        },
        "/api/jobs/{job_id}/distribution": {
            "parameters": [JOB_ID],
            "get": {"summary": "Counts of cases by outcome and number: what the job page's charts draw",
                    "operationId": "jobDistribution", "tags": ["results"],
                    "responses": {"200": _json(_ref("Distribution"), "The distribution."), "404": NOT_FOUND}},
        },
        "/api/jobs/{job_id}/timings": {
            "parameters": [JOB_ID],
            "get": {"summary": "How long the job's phases and cases took", "operationId": "jobTimings",
                    "tags": ["jobs"],
                    "responses": {"200": _json(_ref("Timings"), "The timings."), "404": NOT_FOUND}},
        },
        "/api/cases/{case_id}": {
            "parameters": [_path("case_id", "The case's id (its job's id × 10⁹ + its index).", MAX_CASE_ID)],
            "get": {"summary": "One case with its trace", "operationId": "getCase", "tags": ["results"],
                    "responses": {"200": _json(_ref("CaseDetail"), "The case."), "404": NOT_FOUND}},
        },
        "/api/results": {
            "get": {"summary": "Search every stored result across all jobs", "operationId": "searchResults",
                    "tags": ["results"], "parameters": _result_filters(),
                    "responses": {"200": _json(_ref("CasePage"), "A page of results."), "400": BAD_REQUEST,
                                  "404": _error("There is no job job_id.")}},
        },
        "/api/results/export": {
            "get": {"summary": "Every matching result as NDJSON or CSV", "operationId": "exportResults",
                    "tags": ["results"],
                    "parameters": [*_result_filters()[:-5],
                                   _query("format", "The file format.", {"type": "string", "enum": ["ndjson", "csv"],
                                                                         "default": "ndjson"})],
                    "responses": {"200": {"description": "The results, streamed.", "content": {
                        "application/x-ndjson": {"schema": {"type": "string"}},
                        "text/csv": {"schema": {"type": "string"}}}},
                        "400": BAD_REQUEST, "404": NOT_FOUND}},
        },
        **_check_paths(),
        "/api/overview": {
            "get": {"summary": "Workers seen, work waiting, jobs by status", "operationId": "overview",
                    "tags": ["service"], "responses": {"200": _json(_ref("Overview"), "The overview.")}},
        },
        "/api/workers": {
            "get": {"summary": "Every worker, its processes busy now and its throughput over the last hour",
                    "operationId": "workers", "tags": ["service"],
                    "responses": {"200": _json(_ref("Workers"), "The workers.")}},
        },
        "/api/jobs/{job_id}/throughput": {
            "parameters": [JOB_ID],
            "get": {"summary": "Cases the job stored over its run, per interval", "operationId": "jobThroughput",
                    "tags": ["jobs"],
                    "responses": {"200": _json(_ref("Throughput"), "The throughput."), "404": NOT_FOUND}},
        },
        "/api/games": {
            "get": {"summary": "The games Dealer solves", "operationId": "games", "tags": ["service"],
                    "responses": {"200": _json({"type": "array", "items": _ref("Game")}, "The games.")}},
        },
        "/api/openapi.json": {
            "get": {"summary": "This document", "operationId": "openapi", "tags": ["service"],
                    "responses": {"200": _json({"type": "object"}, "The OpenAPI 3.1 document.")}},
        },
        "/healthz": {
            "get": {"summary": "Database and broker reachable, workers seen", "operationId": "health",
                    "tags": ["service"],
                    "responses": {"200": _json(_ref("Health"), "Everything answers."),
                                  "503": _json(_ref("Health"), "Something does not (the database, the broker, or "
                                                               "no worker heard from lately); the body says what.")}},
        },
        "/metrics": {
            "get": {"summary": "Prometheus metrics: jobs by status, cases solved, solve-time histogram, queue depth",
                    "operationId": "metrics", "tags": ["service"],
                    "responses": {"200": {"description": "Prometheus' text exposition format.",
                                          "content": {"text/plain": {"schema": {"type": "string"}}}}}},
        },
    }


def _secured(paths: dict[str, Any]) -> dict[str, Any]:
    """Mark each operation with who may call it and the refusals that go with that."""
    for path, item in paths.items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            responses = operation["responses"]
            if path not in ("/api/openapi.json", "/api/games"):
                responses.setdefault("503", UNAVAILABLE)
            if path in ("/healthz", "/api/openapi.json"):
                operation["security"] = OPEN
                continue
            responses.setdefault("429", THROTTLED)
            if method in ("post", "delete"):
                operation["security"] = WRITE_SECURITY
                responses.setdefault("401", UNAUTHORIZED)
                responses.setdefault("403", FORBIDDEN)
            else:
                operation["security"] = READ_SECURITY
                responses.setdefault("401", UNAUTHORIZED)
    return paths


@cache
def document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "Dealer", "version": "1",
                 "description": "Solves judge files of UVa 246 (10-20-30), 127 (Accordian Patience) and 11210 "
                                "(Chinese Mahjong). Errors are JSON {\"error\": \"...\"} with a fitting 4xx status."
                                " When the service has API keys (DEALER_API_KEYS), every write needs one, sent"
                                " as Authorization: Bearer <key>; reads too when DEALER_PUBLIC_READS is false."},
        "tags": [{"name": "jobs"}, {"name": "results"}, {"name": "checks"}, {"name": "service"}],
        "paths": _secured(_paths()),
        "components": {"schemas": _schemas(), "securitySchemes": {
            "bearerAuth": {"type": "http", "scheme": "bearer", "description":
                           "An API key from DEALER_API_KEYS (dealer submit sends DEALER_API_KEY)."},
            "sessionCookie": {"type": "apiKey", "in": "cookie", "name": "dealer_session", "description":
                              "The pages' login (/login); state-changing requests with it also need the "
                              "session's CSRF token in the X-CSRF-Token header."},
        }},
    }
