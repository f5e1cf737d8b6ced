"""The Flask application: pages, the JSON API, and uploads streamed straight to disk."""

from __future__ import annotations

from typing import Any

from flask import Flask, Request, current_app, g, jsonify, request
from flask.helpers import get_debug_flag
from sqlalchemy.exc import InterfaceError, OperationalError
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge
from werkzeug.middleware.proxy_fix import ProxyFix

from worker.celery_app import CeleryDispatcher
from worker.config import Settings
from worker.pipeline import Dispatcher
from worker.service import JobService, ServiceError
from worker.uploads import UploadTooLarge, UploadWriter, discard_stale, format_size

#: Room for the multipart envelope around a file of the largest allowed size.
FORM_OVERHEAD = 1 << 20


class StreamingRequest(Request):
    """Writes uploaded files into :class:`UploadWriter` objects instead of memory or /tmp."""

    def _get_file_stream(self, total_content_length: int | None, content_type: str | None,
                         filename: str | None = None, content_length: int | None = None) -> Any:
        settings: Settings = current_app.config["DEALER_SETTINGS"]
        writer = UploadWriter(settings.upload_dir, settings.max_upload_bytes)
        g.setdefault("upload_writers", []).append(writer)
        return writer


def service() -> JobService:
    return current_app.extensions["dealer"]


def create_app(settings: Settings | None = None, dispatcher: Dispatcher | None = None,
               config: dict[str, Any] | None = None) -> Flask:
    """The application factory (``flask --app webui run`` works too)."""
    settings = settings or Settings.from_env()
    app = Flask(__name__)
    app.request_class = StreamingRequest
    app.config.update(
        DEALER_SETTINGS=settings,
        MAX_CONTENT_LENGTH=settings.max_upload_bytes + FORM_OVERHEAD,
        JSON_SORT_KEYS=False,
    )
    # Keep keys in the order the service builds them (outcomes in each game's order), as JSON_SORT_KEYS meant.
    app.json.sort_keys = False  # type: ignore[attr-defined]
    if config:
        app.config.update(config)
    # Debug mode (the interactive debugger) only where asked for by FLASK_DEBUG, never by accident.
    app.config["DEBUG"] = get_debug_flag()
    if settings.proxy_hops:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.proxy_hops,  # type: ignore[method-assign]
                                x_proto=settings.proxy_hops)
    app.extensions["dealer"] = JobService(settings, dispatcher or CeleryDispatcher.for_settings(settings))
    settings.upload_dir.mkdir(parents=True, exist_ok=True)
    discard_stale(settings.upload_dir)

    from webui.api import api
    from webui.ops import ops

    from webui import auth

    auth.install(app, settings)
    app.register_blueprint(api)
    app.register_blueprint(ops)
    _register_pages(app)
    _register_errors(app)

    @app.teardown_request
    def _discard_unused_uploads(_: BaseException | None) -> None:
        for writer in g.pop("upload_writers", []):
            if not getattr(writer, "committed", False):
                writer.discard()

    return app


def _register_pages(app: Flask) -> None:
    try:
        from webui.pages import pages
    except ImportError:
        return
    app.register_blueprint(pages)


def wants_json() -> bool:
    """API paths always answer errors in JSON; pages do when the client asks for JSON."""
    if request.path.startswith("/api/") or request.path in ("/healthz", "/metrics"):
        return True
    return request.accept_mimetypes.best == "application/json"


def _error(message: str, status: int) -> Any:
    if wants_json():
        return jsonify(error=message), status
    from flask import render_template

    return render_template("error.html", message=message, status=status), status


def _register_errors(app: Flask) -> None:
    @app.errorhandler(ServiceError)
    def _service_error(error: ServiceError) -> Any:
        response = _error(error.message, error.status)
        if error.status == 429:  # too many jobs at once: a job takes seconds to minutes
            return (*response, {"Retry-After": "30"})
        return response

    @app.errorhandler(OperationalError)
    @app.errorhandler(InterfaceError)
    def _database_down(error: Exception) -> Any:
        # The pool reconnects by itself (pre-ping) once the database is back.
        current_app.logger.warning("database unavailable: %s", error.__class__.__name__)
        return _error("database unavailable: try again in a moment", 503)

    @app.errorhandler(UploadTooLarge)
    @app.errorhandler(RequestEntityTooLarge)
    def _too_large(_: Exception) -> Any:
        limit = current_app.config["DEALER_SETTINGS"].max_upload_bytes
        return _error(f"the upload is larger than the limit of {format_size(limit)}", 413)

    @app.errorhandler(HTTPException)
    def _http_error(error: HTTPException) -> Any:
        if wants_json():
            return jsonify(error=error.description or error.name), error.code
        if error.code is not None and error.code >= 400 and _has_pages(app):
            return _error(error.description or error.name, error.code)
        return error


def _has_pages(app: Flask) -> bool:
    return "pages" in app.blueprints
