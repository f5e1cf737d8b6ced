"""Live updates of the pages, pushed as Server-Sent Events.

An event stream is a plain streamed answer (a generator), so it passes gunicorn and a reverse
proxy that does not buffer it (``X-Accel-Buffering: no`` tells nginx). Each open stream costs a
greenlet and a query a tick, so a process serves few at once and each for a bounded time; the browser's
``EventSource`` reconnects when one ends, and a page that is refused (``429``) or loses its
stream polls the JSON API instead. Under gunicorn's sync workers (one request at a time per
process, where a stream would hold the whole process) every stream is refused: the pages poll.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson
from flask import Blueprint, Response, current_app, jsonify, request

from webui.context import dealer, queries
from webui.params import JOBS_PER_PAGE, job_filters, paging, present
from worker.states import FINISHED

live = Blueprint("live", __name__)

#: Streams one web process serves at once; beyond them the pages poll.
MAX_STREAMS = 4
#: How long one stream lasts before the browser is asked to reconnect (which frees its slot between).
STREAM_SECONDS = 30.0
#: How often a stream looks for changes.
TICK_SECONDS = 1.0
#: What the browser waits before reconnecting, in milliseconds.
RETRY_MS = 1000

_slots = threading.BoundedSemaphore(MAX_STREAMS)
#: Set when this process is told to stop (``webui.server``): every stream ends at once, so that the
#: process leaves within its grace instead of being killed at its end (the pages reconnect or poll).
stopping = threading.Event()


@live.get("/events/jobs/<id:job_id>")
def job_events(job_id: int) -> Any:
    """A job's figures (``job``, ``timings``) whenever they change; ``end`` once it has finished."""
    reads = queries()
    # 404 now for a job that does not exist (or whose figures the viewer does not read all of, as of a job
    # only shared with it), not an empty stream
    reads.timings(job_id)

    def events() -> tuple[list[tuple[str, Any]], bool]:
        job = reads.job(job_id)
        return [("job", job.to_dict()), ("timings", reads.timings(job_id).to_dict())], job.status in FINISHED

    return _stream(events)


@live.get("/events/dashboard")
def dashboard_events() -> Any:
    """The dashboard's figures (``overview``) and its page of jobs (``jobs``, with the page's filters)."""
    reads, dispatcher = queries(), dealer().dispatcher
    page, per_page = paging(request.args, JOBS_PER_PAGE)
    filters = job_filters(present(request.args))
    reads.jobs(page, per_page, **filters)  # a bad filter is a 400 now

    def events() -> tuple[list[tuple[str, Any]], bool]:
        return [("overview", reads.overview(dispatcher.queue_depth()).to_dict()),
                ("jobs", reads.jobs(page, per_page, **filters).to_dict())], False

    return _stream(events)


def _stream(events: Callable[[], tuple[list[tuple[str, Any]], bool]]) -> Any:
    if _one_request_at_a_time():
        return jsonify(error="this server answers one request at a time per process: poll the JSON API "
                             "instead"), 429, {"Retry-After": "5"}
    if not _slots.acquire(blocking=False):
        return jsonify(error="too many live streams at once: poll the JSON API instead"), 429, {"Retry-After": "5"}
    released = threading.Event()

    def release() -> None:
        if not released.is_set():
            released.set()
            _slots.release()

    response = Response(_body(events, current_app.logger), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    # Called by the server whether or not the body was read to its end.
    response.call_on_close(release)
    return response


def _one_request_at_a_time() -> bool:
    """Whether this is one of gunicorn's sync workers, where a stream would hold the whole process."""
    environ = request.environ
    return str(environ.get("SERVER_SOFTWARE", "")).startswith("gunicorn") and not environ.get("wsgi.multithread")


def _body(events: Callable[[], tuple[list[tuple[str, Any]], bool]], logger: Any) -> Iterator[bytes]:
    yield f"retry: {RETRY_MS}\n\n".encode()
    sent: dict[str, bytes] = {}
    started = quiet_since = time.monotonic()
    while time.monotonic() - started < STREAM_SECONDS and not stopping.is_set():
        try:
            found, finished = events()
        except Exception:  # noqa: BLE001 - the stream ends; the page reconnects or polls
            logger.warning("a live stream stopped: its figures could not be read", exc_info=True)
            return
        for name, value in found:
            data = orjson.dumps(value)
            if sent.get(name) != data:
                sent[name] = data
                quiet_since = time.monotonic()
                yield b"event: " + name.encode() + b"\ndata: " + data + b"\n\n"
        if finished:
            yield b"event: end\ndata: {}\n\n"
            return
        if time.monotonic() - quiet_since >= TICK_SECONDS:
            # A comment now and then: a page that went away is noticed at the next write, which frees
            # its thread, and a proxy does not close a stream that seems idle.
            quiet_since = time.monotonic()
            yield b":\n\n"
        stopping.wait(TICK_SECONDS)
