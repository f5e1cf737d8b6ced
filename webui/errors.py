"""Errors as HTTP answers: each kind of refusal of the service gets its status, and every error is JSON
``{"error": ...}`` for the API or the error page for a browser. A 404 names what it could not find: the id
in the path and what ids there are (:func:`unknown_id`), or the path itself (:func:`no_route`)."""

from __future__ import annotations

import math
from typing import Any

from flask import Flask, jsonify, render_template, request
from sqlalchemy.exc import DataError, InterfaceError, OperationalError
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge
from werkzeug.exceptions import NotFound as NoRoute

from webui.context import queries, settings
from webui.converters import UnknownId
from worker.engines import UnknownGame
from worker.jobs.errors import (
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    ServiceError,
    TooLarge,
    TooManyJobs,
    Unsupported,
)
from worker.store.uploads import UploadTooLarge
from worker.units import format_size

#: The HTTP status of each kind of refusal (the service knows nothing of HTTP).
STATUS_OF: dict[type[ServiceError], int] = {Invalid: 400, Forbidden: 403, NotFound: 404, Conflict: 409, TooLarge: 413,
                                            Unsupported: 415, TooManyJobs: 429}


def http_status(error: ServiceError) -> int:
    return next((code for kind, code in STATUS_OF.items() if isinstance(error, kind)), 400)


def wants_json() -> bool:
    """API paths always answer errors in JSON; pages do when the client asks for JSON."""
    if request.path.startswith("/api/") or request.path in ("/healthz", "/metrics"):
        return True
    return request.accept_mimetypes.best == "application/json"


def error_response(message: str, status: int, headers: dict[str, str] | None = None) -> Any:
    """An error as the client wants it: JSON ``{"error": ...}`` for the API, the error page for a browser."""
    if wants_json():
        return jsonify(error=message), status, headers or {}
    return render_template("error.html", message=message, status=status), status, headers or {}


#: What a path names by the id that follows it: ``/api/jobs/<id>``, ``/jobs/<id>/cases/<index>``, ``/checks/<id>``.
NAMED_BY = {"jobs": "job", "cases": "case", "checks": "check"}


def unknown_id(path: str, error: UnknownId) -> str:
    """What a path part where an id goes names none of, in words: ``no job "abc": job ids are whole numbers``;
    a case's number in its job is weighed against the job's cases (``job 1 has 2,000 cases: 0 is not one of
    them``)."""
    parts = path.strip("/").split("/")
    # The first part that is the value and follows a name of things: werkzeug converts a path's ids in order.
    at = next((k for k, part in enumerate(parts) if part == error.value and k and parts[k - 1] in NAMED_BY), None)
    thing = NAMED_BY[parts[at - 1]] if at is not None else "thing"
    shown = f"{error.number:,}" if error.number is not None else f'"{error.value[:40]}"'
    if thing == "case" and at is not None and at >= 3 and parts[at - 3] == "jobs":
        try:
            job = queries().job(int(parts[at - 2]))
        except ServiceError as missing:  # no such job (or one this viewer may not see): say that instead
            return missing.message
        cases = f"{job.total:,} case{'' if job.total == 1 else 's'}{'' if job.total_known else ' so far'}"
        return f"job {job.id} has {cases}: {shown} is not one of them"
    if error.number is None:
        return f"no {thing} {shown}: {thing} ids are whole numbers"
    return f"no {thing} {shown}: {thing} ids run from 1 to {error.maximum:,}"


def no_route(path: str) -> str:
    """A path that names nothing the service has."""
    if path.startswith("/api/"):
        return f"no API endpoint at {path[:200]}: the API's paths are listed at /api/openapi.json"
    return f"no page at {path[:200]}"


def register(app: Flask) -> None:
    @app.errorhandler(ServiceError)
    def _service_error(error: ServiceError) -> Any:
        status = http_status(error)
        headers = {"Retry-After": str(math.ceil(error.retry_after))} if isinstance(error, TooManyJobs) else None
        return error_response(error.message, status, headers)

    @app.errorhandler(UnknownGame)
    def _unknown_game(error: UnknownGame) -> Any:
        return error_response(str(error), 400)

    @app.errorhandler(DataError)
    @app.errorhandler(OverflowError)
    def _out_of_range(error: Exception) -> Any:
        # A value the database cannot hold (the parameters' bounds should have caught it first).
        app.logger.warning("a value out of the database's range: %s", error.__class__.__name__)
        return error_response("a value in the request is out of range", 400)

    @app.errorhandler(OperationalError)
    @app.errorhandler(InterfaceError)
    def _database_down(error: Exception) -> Any:
        # The pool reconnects by itself (pre-ping) once the database is back.
        app.logger.warning("database unavailable: %s", error.__class__.__name__)
        return error_response("database unavailable: try again in a moment", 503)

    @app.errorhandler(UploadTooLarge)
    @app.errorhandler(RequestEntityTooLarge)
    def _too_large(_: Exception) -> Any:
        return error_response(f"the upload is larger than the limit of {format_size(settings().max_upload_bytes)}",
                              413)

    @app.errorhandler(UnknownId)
    def _unknown_id(error: UnknownId) -> Any:
        return error_response(unknown_id(request.path, error), 404)

    @app.errorhandler(HTTPException)
    def _http_error(error: HTTPException) -> Any:
        if error.code is None or error.code < 400:
            return error
        if type(error) is NoRoute and error.description == NoRoute.description:  # no route: none of ours said more
            return error_response(no_route(request.path), 404)
        # Keep what the exception says of itself beyond its body (405's Allow, 401's challenge).
        headers = {name: value for name, value in error.get_headers() if name.lower() != "content-type"}
        return error_response(error.description or error.name, error.code, headers)
