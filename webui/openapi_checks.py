"""The OpenAPI paths of checks (``webui/checks.py``), made with :mod:`webui.openapi`'s pieces; that module
adds them to the document (and the views to its schemas)."""

from __future__ import annotations

from typing import Any

from webui.openapi import BAD_REQUEST, JOB_ID, _error, _json, _path, _query, _ref
from worker.checks.compare import VERDICTS
from worker.checks.queries import DEFAULT_CHECK_CASES
from worker.jobs.filters import MAX_PER_PAGE
from worker.store.models import MAX_INT

CHECK_ID = _path("check_id", "The check's id.")
NO_CHECK = _error("No such check.")
OUTPUT_FILE = {"type": "string", "contentMediaType": "text/plain",
               "description": "A program's output for the job's file: one line per case, LF or CRLF, UTF-8."}


def check_paths() -> dict[str, Any]:
    check = _json(_ref("Check"), "The check.")
    return {
        "/api/jobs/{job_id}/checks": {
            "parameters": [JOB_ID],
            "get": {"summary": "A job's checks, oldest first", "operationId": "jobChecks", "tags": ["checks"],
                    "responses": {"200": _json({"type": "array", "items": _ref("Check")}, "The checks."),
                                  "400": BAD_REQUEST, "404": _error("No such job.")}},
            "post": {"summary": "Check an output against the job's judge output, case by case",
                     "description": "The check is pending until the job has succeeded, then judged on a worker "
                                    "(status done). Several outputs can be checked against one job.",
                     "operationId": "createCheck", "tags": ["checks"],
                     "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
                         "type": "object", "required": ["file"], "properties": {"file": OUTPUT_FILE}}}}},
                     "responses": {
                         "201": {**check, "headers": {"Location": {"schema": {"type": "string"},
                                                                   "description": "/api/checks/{id}"}}},
                         "400": _error("No file in the request, or a parameter is not valid."),
                         "404": _error("No such job."),
                         "409": _error("The job failed or was cancelled: it has no judge output to check against."),
                         "413": _error("The output is over the upload limit, or one of its lines over the line "
                                       "limit (the message says which line)."),
                         "415": _error("The output is no text: compressed, binary, a NUL byte, not UTF-8 (the "
                                       "message says the line and column).")}},
        },
        "/api/checks/{check_id}": {
            "parameters": [CHECK_ID],
            "get": {"summary": "One check: status, verdict, counts, first difference", "operationId": "getCheck",
                    "tags": ["checks"], "responses": {"200": check, "400": BAD_REQUEST, "404": NO_CHECK}},
        },
        "/api/checks/{check_id}/cases": {
            "parameters": [CHECK_ID],
            "get": {"summary": "A check's cases (and extra lines) in the output's order, filterable by verdict",
                    "operationId": "checkCases", "tags": ["checks"],
                    "parameters": [
                        _query("verdict", "Only the lines with this verdict.",
                               {"type": "string", "enum": list(VERDICTS)}),
                        _query("page", "Page number, from 1 (past the last page: no items).",
                               {"type": "integer", "minimum": 1, "maximum": MAX_INT, "default": 1}),
                        _query("per_page", f"Items per page (at most {MAX_PER_PAGE}).",
                               {"type": "integer", "minimum": 1, "maximum": MAX_PER_PAGE,
                                "default": DEFAULT_CHECK_CASES})],
                    "responses": {"200": _json(_ref("CheckCasePage"), "A page of the check's cases."),
                                  "400": BAD_REQUEST, "404": NO_CHECK}},
        },
    }
