"""The application factory: pages, the JSON API, uploads streamed into the database, errors as HTTP answers."""

from __future__ import annotations

from typing import Any

from flask import Flask, g
from flask.helpers import get_debug_flag
from werkzeug.exceptions import HTTPException, RequestTimeout
from werkzeug.middleware.proxy_fix import ProxyFix

from webui import api, auth, checks, errors, generate, keys, live, openapi, ops, pages, results
from webui.context import Dealer, dealer, service, settings, viewer
from webui.converters import CaseIdConverter, IdConverter
from webui.pacing import late, too_slow_message
from webui.seams.werkzeug import FileFieldsRequest
from webui.uploads import follower, screen
from worker import engines
from worker.checks.queries import CheckQueries
from worker.checks.service import CheckService
from worker.config import Settings
from worker.jobs.arriving import withdraw_abandoned
from worker.jobs.dispatch import Dispatcher
from worker.jobs.queries import JobQueries
from worker.jobs.service import JobService
from worker.store.database import Database
from worker.store.uploads import UploadWriter

#: Room for the multipart envelope around a file of the largest allowed size.
FORM_OVERHEAD = 1 << 20


class StreamingRequest(FileFieldsRequest):
    """Writes uploaded files into :class:`UploadWriter` objects (blocks in the database) instead of memory
    or /tmp, each file screened as it arrives, by its field's screen, with the job made of it while it
    arrives following it (``uploads.takes_files``)."""

    def open_file(self, field: str, filename: str | None, total_content_length: int | None) -> Any:
        writer = UploadWriter(dealer().service.db, settings().max_upload_bytes, owner=viewer().name)
        writer.quota = service().upload_quota()
        g.setdefault("upload_writers", []).append(writer)
        writer.screen = screen(field)
        writer.follower = follower(field, filename, total_content_length)
        return writer

    def cut_short(self) -> HTTPException | None:
        # The server cut the client off for its pace (webui.pacing): say so.
        return RequestTimeout(too_slow_message()) if late(self.environ) else None


def create_app(settings: Settings | None = None, dispatcher: Dispatcher | None = None,
               config: dict[str, Any] | None = None) -> Flask:
    """The web app for ``settings`` (default: from the environment), sending work through ``dispatcher``
    (default: Celery)."""
    settings = settings or Settings.from_env()
    if dispatcher is None:
        from worker.broker import CeleryDispatcher  # Celery is loaded only when no dispatcher is given

        dispatcher = CeleryDispatcher.for_settings(settings)
        # Made now, so that the first upload's job is not sent after Celery makes its sender (no connection
        # is opened here: a broker away must not hold up the web's start).
        dispatcher.prepare()
    app = Flask(__name__)
    app.request_class = StreamingRequest
    app.url_map.converters.update(id=IdConverter, case_id=CaseIdConverter)
    app.config.update(MAX_CONTENT_LENGTH=settings.max_upload_bytes + FORM_OVERHEAD)
    # Keep keys in the order the views list them (outcomes in each game's order).
    app.json.sort_keys = False  # type: ignore[attr-defined]
    if config:
        app.config.update(config)
    # Debug mode (the interactive debugger) only where asked for by FLASK_DEBUG, never by accident.
    app.config["DEBUG"] = get_debug_flag()
    # Inside ProxyFix: a client of the streams is known by its own address, not the proxy's.
    app.wsgi_app = live.Admission(app, settings.live_streams_per_client)  # type: ignore[method-assign]
    if settings.proxy_hops:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.proxy_hops,  # type: ignore[method-assign]
                                x_proto=settings.proxy_hops, x_host=settings.proxy_hops)
    engines.use_native_core(not settings.pure_python)
    jobs = JobService(settings, dispatcher)
    app.extensions["dealer"] = Dealer(settings, dispatcher, jobs, JobQueries(settings),
                                      CheckService(settings, dispatcher, jobs), CheckQueries(settings))
    try:
        withdraw_abandoned(Database.of(settings))
    except Exception:  # noqa: BLE001 - the database may be down at start; the workers' sweep does it too
        app.logger.warning("could not look for abandoned uploads at start")

    auth.install(app, settings)
    for blueprint in (api.api, results.results, checks.check_api, openapi.openapi, ops.ops, live.live, pages.pages,
                      checks.check_pages, generate.generate, keys.key_pages):
        app.register_blueprint(blueprint)
    errors.register(app)

    @app.teardown_request
    def _discard_unused_uploads(_: BaseException | None) -> None:
        for writer in g.pop("upload_writers", []):
            if not writer.committed:
                writer.discard()

    return app
