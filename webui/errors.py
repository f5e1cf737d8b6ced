"""Errors as HTTP answers: each kind of refusal of the service gets its status, and every error is JSON
``{"error": ...}`` for the API or the error page for a browser."""

from __future__ import annotations

import math
from typing import Any

from flask import Flask, jsonify, render_template, request
from sqlalchemy.exc import DataError, InterfaceError, OperationalError
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from webui.context import settings
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

    @app.errorhandler(HTTPException)
    def _http_error(error: HTTPException) -> Any:
        if error.code is None or error.code < 400:
            return error
        # Keep what the exception says of itself beyond its body (405's Allow, 401's challenge).
        headers = {name: value for name, value in error.get_headers() if name.lower() != "content-type"}
        return error_response(error.description or error.name, error.code, headers)
