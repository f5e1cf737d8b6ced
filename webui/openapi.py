"""The OpenAPI 3.1 document of the JSON API, served at ``/api/openapi.json``.

Written by hand next to the routes; ``tests/web/test_openapi.py`` checks that every
route of the app under ``/api`` (and ``/healthz``, ``/metrics``) is in it with its methods.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from worker import engines
from worker.models import JobStatus


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _error(description: str) -> dict[str, Any]:
    return _json(_ref("Error"), description)


def _query(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description,
            "schema": schema or {"type": "string"}}


def _path(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "description": description,
            "schema": {"type": "integer", "minimum": 1}}


JOB_ID = _path("job_id", "The job's id.")
PAGING = [_query("page", "Page number, from 1.", {"type": "integer", "minimum": 1, "default": 1}),
          _query("per_page", "Items per page (at most 500).",
                 {"type": "integer", "minimum": 1, "maximum": 500, "default": 50})]
NOT_FOUND = _error("No such job or case.")
BAD_REQUEST = _error("A parameter is not valid; the message says which and why.")
UNAUTHORIZED = {**_error("No valid API key (only when the service has keys, DEALER_API_KEYS): the answer "
                         "carries WWW-Authenticate: Bearer."),
                "headers": {"WWW-Authenticate": {"schema": {"type": "string"},
                                                 "description": 'Bearer realm="dealer"'}}}
FORBIDDEN = _error("A request from the pages without their CSRF token, or one a browser marks as cross-site. "
                   "Requests with a bearer token need no CSRF token.")
TOO_MANY = {**_error("The client (its API key, else its address) already has as many unfinished jobs as it may "
                     "(DEALER_MAX_ACTIVE_JOBS_PER_CLIENT)."),
            "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}}}
#: Writes need a key when the service has keys; reads only when DEALER_PUBLIC_READS is false.
WRITE_SECURITY = [{"bearerAuth": []}, {"sessionCookie": []}]
READ_SECURITY = [{}, {"bearerAuth": []}, {"sessionCookie": []}]
OPEN = [{}]


def _result_filters(with_game: bool = True, with_job: bool = True) -> list[dict[str, Any]]:
    """The query parameters of :class:`worker.service.ResultFilter`."""
    games = {"type": "string", "enum": engines.names()}
    params = []
    if with_game:
        params.append(_query("game", "Only this game (needed to search by input).", games))
    params += [
        _query("outcome", "Only this outcome (one of the game's outcomes: win, loss, draw, ready, not-ready)."),
        _query("number_min", "Smallest number (deals, piles or waits).", {"type": "integer", "minimum": 0}),
        _query("number_max", "Largest number (deals, piles or waits).", {"type": "integer", "minimum": 0}),
        _query("since", "Solved at or after this ISO 8601 date or time (UTC unless it says).",
               {"type": "string", "format": "date-time"}),
        _query("until", "Solved before this ISO 8601 date or time.", {"type": "string", "format": "date-time"}),
        _query("input", "A deck or hand written as text: finds the same case in any job, whatever its "
                        "spacing (needs game)."),
        _query("sort", "Sort key, descending with a leading '-': index, number, outcome, solve_us, solved_at, "
                       "job_id.", {"type": "string", "default": "index"}),
    ]
    if with_job:
        params.append(_query("job_id", "Only this job's cases.", {"type": "integer", "minimum": 1}))
    return params + PAGING


def _schemas() -> dict[str, Any]:
    integer = {"type": "integer"}
    nullable_int = {"type": ["integer", "null"]}
    nullable_str = {"type": ["string", "null"]}
    moment = {"type": ["string", "null"], "format": "date-time"}
    diagnostic = {"type": "object", "properties": {
        "message": {"type": "string"}, "line": nullable_int, "column": nullable_int, "text": {"type": "string"}}}
    job = {
        "type": "object",
        "required": ["id", "game", "status", "total", "done", "created_at"],
        "properties": {
            "id": integer, "game": {"type": "string", "enum": engines.names()}, "filename": {"type": "string"},
            "size": integer, "sha256": {"type": "string"},
            "status": {"type": "string", "enum": [s.value for s in JobStatus]},
            "error": {**nullable_str, "description": "Why the job failed, e.g. the parser's message with line "
                                                     "and column."},
            "warnings": {"type": "array", "items": diagnostic},
            "total": {**integer, "description": "Cases in the file (0 until the split has finished)."},
            "done": integer, "failed_cases": integer, "cache_hits": integer,
            "counts": {"type": "object", "additionalProperties": integer,
                       "description": "Solved cases by outcome."},
            "progress": {"type": "number", "minimum": 0, "maximum": 1},
            "rate": {"type": "number", "description": "Cases solved per second."},
            "eta_seconds": {"type": ["number", "null"]},
            "elapsed_seconds": {"type": "number"},
            "chunk_size": integer, "rerun_of": nullable_int,
            "created_at": moment, "started_at": moment, "split_at": moment, "finished_at": moment,
        },
    }
    case = {
        "type": "object",
        "properties": {
            "id": integer, "job_id": integer, "index": integer, "game": {"type": "string"},
            "input": {"type": "string", "description": "The canonical input: tokens joined by single spaces."},
            "outcome": nullable_str, "number": nullable_int, "detail": {"type": ["array", "null"]},
            "line": {**nullable_str, "description": "The judge output line."},
            "error": nullable_str, "cached": {"type": "boolean"}, "solve_us": integer, "worker": nullable_str,
            "solved_at": moment,
        },
    }
    page = {"type": "object", "required": ["items", "total", "page", "per_page", "pages"], "properties": {
        "total": integer, "page": integer, "per_page": integer, "pages": integer}}
    return {
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
        "Job": job,
        "JobPage": {**page, "properties": {**page["properties"], "items": {"type": "array", "items": _ref("Job")}}},
        "Case": case,
        "CaseWithTrace": {"allOf": [_ref("Case"), {"type": "object", "properties": {"trace": {
            "type": ["object", "null"],
            "description": "The engine's versioned trace (see each engine module's documentation)."},
            "trace_error": {"type": "string", "description": "Present, with trace null, when the stored trace "
                                                             "cannot be read (damaged)."}}}]},
        "CasePage": {**page, "properties": {**page["properties"],
                                            "items": {"type": "array", "items": _ref("Case")}}},
        "Distribution": {"type": "object", "properties": {
            "game": {"type": "string"}, "number_name": {"type": "string"},
            "outcomes": {"type": "array", "items": {"type": "string"}},
            "counts": {"type": "object", "additionalProperties": integer},
            "by_number": {"type": "array", "items": {"type": "object", "properties": {
                "outcome": {"type": "string"}, "number": integer, "count": integer}}}}},
        "Timings": {"type": "object", "properties": {
            "job_id": integer, "queued_seconds": {"type": ["number", "null"]},
            "split_seconds": {"type": ["number", "null"]}, "elapsed_seconds": {"type": "number"},
            "rate": {"type": "number"}, "solved": integer, "cached": integer, "solve_us_total": integer,
            "solve_us_mean": {"type": ["number", "null"]}, "solve_us_max": nullable_int,
            "slowest_case": {"type": ["object", "null"]}}},
        "Overview": {"type": "object", "properties": {
            "workers": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "concurrency": integer, "processed": integer,
                "seen_at": moment, "started_at": moment}}},
            "jobs_by_status": {"type": "object", "additionalProperties": integer},
            "queued_cases": integer, "pending_chunks": integer,
            "queue_depth": {**nullable_int, "description": "Messages in the broker's queue; null when the broker "
                                                           "cannot be reached."}}},
        "Game": {"type": "object", "properties": {
            "slug": {"type": "string"}, "title": {"type": "string"}, "summary": {"type": "string"},
            "unit": {"type": "string"}, "number_name": {"type": "string"},
            "outcomes": {"type": "array", "items": {"type": "string"}}}},
        "Health": {"type": "object", "properties": {
            "ok": {"type": "boolean"}, "status": {"type": "string", "enum": ["ok", "unavailable"]},
            "database": {"type": "object"}, "broker": {"type": "object"}, "workers": {"type": "object"}}},
    }


def _paths() -> dict[str, Any]:
    job_created = {"201": _json(_ref("Job"), "The new job."), "400": BAD_REQUEST}
    return {
        "/api/jobs": {
            "get": {"summary": "Jobs, newest first, paged", "operationId": "listJobs", "tags": ["jobs"],
                    "parameters": [_query("status", "Only jobs in this status.",
                                          {"type": "string", "enum": [s.value for s in JobStatus]}),
                                   _query("game", "Only jobs of this game.",
                                          {"type": "string", "enum": engines.names()}), *PAGING],
                    "responses": {"200": _json(_ref("JobPage"), "A page of jobs."), "400": BAD_REQUEST}},
            "post": {"summary": "Upload a judge file and start a job", "operationId": "createJob", "tags": ["jobs"],
                     "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
                         "type": "object", "required": ["file"], "properties": {
                             "file": {"type": "string", "contentMediaType": "application/octet-stream",
                                      "description": "The judge file."},
                             "game": {"type": "string", "enum": engines.names(),
                                      "description": "Optional when the game can be recognised from the content."},
                         }}}}},
                     "responses": {**job_created, "400": _error(
                         "The file is refused at once, nothing stored: it is empty, compressed (gzip, zip, …) or "
                         "binary, or its game cannot be told; or a parameter is not valid."),
                         "413": _error("The file is over the upload limit (the message "
                                                                 "says the limit)."), "429": TOO_MANY}},
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
                    "parameters": [_query("partial", "1 to get the lines solved so far of an unfinished job.",
                                          {"type": "string", "enum": ["1", "true", "yes"]})],
                    "responses": {"200": {"description": "The output.",
                                          "content": {"text/plain": {"schema": {"type": "string"}}}},
                                  "404": NOT_FOUND, "409": _error("The job has not succeeded (yet).")}},
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
                    "responses": {"200": _json(_ref("CaseWithTrace"), "The case."), "404": NOT_FOUND}},
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
            "parameters": [_path("case_id", "The case's id.")],
            "get": {"summary": "One case with its trace", "operationId": "getCase", "tags": ["results"],
                    "responses": {"200": _json(_ref("CaseWithTrace"), "The case."), "404": NOT_FOUND}},
        },
        "/api/results": {
            "get": {"summary": "Search every stored result across all jobs", "operationId": "searchResults",
                    "tags": ["results"], "parameters": _result_filters(),
                    "responses": {"200": _json(_ref("CasePage"), "A page of results."), "400": BAD_REQUEST}},
        },
        "/api/results/export": {
            "get": {"summary": "Every matching result as NDJSON or CSV", "operationId": "exportResults",
                    "tags": ["results"],
                    "parameters": [*_result_filters()[:-2],
                                   _query("format", "The file format.", {"type": "string", "enum": ["ndjson", "csv"],
                                                                         "default": "ndjson"})],
                    "responses": {"200": {"description": "The results, streamed.", "content": {
                        "application/x-ndjson": {"schema": {"type": "string"}},
                        "text/csv": {"schema": {"type": "string"}}}},
                        "400": BAD_REQUEST, "404": NOT_FOUND}},
        },
        "/api/overview": {
            "get": {"summary": "Workers seen, work waiting, jobs by status", "operationId": "overview",
                    "tags": ["service"], "responses": {"200": _json(_ref("Overview"), "The overview.")}},
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
                                  "503": _json(_ref("Health"), "Something does not; the body says what.")}},
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
            if path in ("/healthz", "/api/openapi.json"):
                operation["security"] = OPEN
            elif method in ("post", "delete"):
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
        "tags": [{"name": "jobs"}, {"name": "results"}, {"name": "service"}],
        "paths": _secured(_paths()),
        "components": {"schemas": _schemas(), "securitySchemes": {
            "bearerAuth": {"type": "http", "scheme": "bearer", "description":
                           "An API key from DEALER_API_KEYS (dealer submit sends DEALER_API_KEY)."},
            "sessionCookie": {"type": "apiKey", "in": "cookie", "name": "dealer_session", "description":
                              "The pages' login (/login); state-changing requests with it also need the "
                              "session's CSRF token in the X-CSRF-Token header."},
        }},
    }
