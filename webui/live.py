"""Live updates of the pages, pushed as Server-Sent Events, fanned out from one poller a process.

An event stream is a plain streamed answer (a generator), so it passes gunicorn and a reverse proxy that
does not buffer it (``X-Accel-Buffering: no`` tells nginx). Streams do not read the database: each
process has one poller (:class:`Hub`, a thread, so a greenlet under gevent) that reads, every tick, each
thing watched once whatever the number of its viewers (every job watched in one query, each distinct
dashboard view, its page, filters and viewer's visibility, once), and hands the new figures to the
streams watching it; a stream waits for them and writes only what changed (a comment line now and then
when nothing did). A thing nobody watches any more is not read; with nothing watched the poller stops.

A viewer's right to see a job is checked once, when its stream opens (``404`` otherwise; from the owner
the poller read when others watch it already); a job deleted meanwhile ends its streams. Each stream lasts :data:`STREAM_SECONDS`, after which the browser's
``EventSource`` reconnects (and is asked for its key or login again).

What is refused is refused by :class:`Admission`, before the request reaches the app (whose login check
reads the database), from counters in memory: beyond :data:`MAX_STREAMS` on this process, or beyond
``DEALER_LIVE_STREAMS_PER_CLIENT`` from one client (its address and the digest of its key or session
cookie, so that a class behind one address is many clients), a stream is answered ``429`` and the page
polls the JSON API instead, as it does when it loses its stream. Streams admitted open :data:`OPENING` at a
time, the others waiting in memory (refused after :data:`OPENING_WAIT_SECONDS`). Under gunicorn's sync
workers (one request at a time per process, where a stream would hold the whole process) every stream is
refused.
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson
from flask import Blueprint, Flask, Response, current_app, request
from werkzeug.http import parse_cookie
from werkzeug.wsgi import ClosingIterator

from webui.auth import SECURITY_HEADERS
from webui.context import Dealer, queries, viewer
from webui.pacing import CONNECTIONS
from webui.params import JOBS_PER_PAGE, job_filters, paging, present
from worker.jobs.dispatch import Dispatcher
from worker.jobs.overview import OverviewQueries
from worker.jobs.queries import JobQueries
from worker.states import FINISHED
from worker.store.owners import EVERYTHING, Viewer

log = logging.getLogger("dealer.web")

live = Blueprint("live", __name__)

#: Streams one web process serves at once: well within the connections it may hold (the rest are the
#: API's and the pages'); beyond them the pages poll.
MAX_STREAMS = CONNECTIONS // 4
#: How long one stream lasts before the browser is asked to reconnect (its key or login then checked
#: again), give or take a tenth, so that streams opened together do not all come back together.
STREAM_SECONDS = 300.0
#: How often the poller reads what is watched, and how long a stream stays silent before a comment line:
#: a page that went away is noticed at the next write, and a proxy does not close a stream that seems idle.
TICK_SECONDS = 1.0
#: What the browser waits before reconnecting, in milliseconds.
RETRY_MS = 1000
#: Where the streams are: the only paths :class:`Admission` counts.
PREFIX = "/events/"
#: Streams of a process that may be opening at once (their login check and the job's lookup read the
#: database), and how long one waits for its turn before it is refused: a thousand pages opened (or
#: reconnected) together wait in memory instead of taking every connection of the pool from the API.
OPENING = 8
OPENING_WAIT_SECONDS = 60.0

#: Set when this process is told to stop (:func:`stop`): every stream ends at once, so that the process
#: leaves within its grace instead of being killed at its end (the pages reconnect or poll).
stopping = threading.Event()
_hubs: weakref.WeakSet[Hub] = weakref.WeakSet()
_making = threading.Lock()


def stop() -> None:
    """End every stream of this process now (called from a signal handler: takes no lock)."""
    stopping.set()
    for hub in list(_hubs):
        hub.wake()


# --- what is watched ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Dashboard:
    """One view of the dashboard: its page of jobs with its filters, as one viewer sees it."""

    viewer: Viewer
    page: int
    per_page: int
    filters: tuple[tuple[str, str], ...]


Key = int | Dashboard  # a job's id, or a view of the dashboard
#: A reading's events: each name with its whole frame (``event:`` and ``data:`` lines), made once for all
#: the streams that write it.
Events = list[tuple[str, bytes]]


def frame(name: str, value: Any) -> tuple[str, bytes]:
    return name, b"event: " + name.encode() + b"\ndata: " + orjson.dumps(value) + b"\n\n"


@dataclass(frozen=True)
class Reading:
    """What a watched thing looked like at one tick."""

    #: Its events.
    events: Events
    #: No more to come: the job has finished (``end`` is sent), or is gone (its streams just end).
    finished: bool = False
    gone: bool = False
    #: A job's owner: whether another viewer may see it is known without asking the database.
    owner: str | None = None


class Watch:
    """What one watched thing looks like now, shared by every stream watching it."""

    def __init__(self, key: Key) -> None:
        self.key = key
        self.viewers = 0
        #: Its latest reading, replaced whole (a stream reads one reading, never half of two): None until
        #: the poller first read it.
        self.now: Reading | None = None
        #: Set (and replaced) whenever the reading changes: what the streams wait on.
        self.changed = threading.Event()
        #: When it was last read (changed or not), and set (and replaced) at every reading: a stream that
        #: opens waits for a reading made after it, so that it never starts from one made before a change
        #: its page has seen (a job deleted and the dashboard opened again must not show it for a tick).
        self.read_at = 0.0
        self.read = threading.Event()
        #: A stream opened since the last reading wants one now, not at the next tick.
        self.wanted = False

    def publish(self, events: Events, finished: bool = False, gone: bool = False, owner: str | None = None) -> None:
        reading = Reading(events, finished, gone, owner)
        self.read_at, self.wanted = time.monotonic(), False
        if reading != self.now:
            self.now = reading
            self.wake()
        read, self.read = self.read, threading.Event()
        read.set()

    def fresh(self, since: float, patience: float) -> None:
        """Wait, at most ``patience`` seconds, for a reading made after ``since`` (:meth:`Hub.refresh` asks
        for one)."""
        until = since + patience
        while self.read_at < since and not stopping.is_set():
            read = self.read  # before looking again: a reading from now on sets it
            left = until - time.monotonic()
            if self.read_at >= since or left <= 0:
                return
            read.wait(left)

    def wake(self) -> None:
        woken, self.changed = self.changed, threading.Event()
        woken.set()


class Hub:
    """The one poller of a web process: reads what its streams watch, once a tick each."""

    def __init__(self, reads: JobQueries, overview: OverviewQueries, dispatcher: Dispatcher) -> None:
        self.reads = reads
        self.overview = overview
        self.dispatcher = dispatcher
        self._lock = threading.Lock()
        self._watches: dict[Key, Watch] = {}
        self._running = False
        #: Set when a new thing is watched (read it now, not at the next tick) and when the process stops.
        self._wake = threading.Event()
        self._failing = False
        _hubs.add(self)

    @classmethod
    def of(cls, app: Flask) -> Hub:
        with _making:
            found = app.extensions.get("live")
            if found is None:
                service: Dealer = app.extensions["dealer"]
                found = app.extensions["live"] = cls(service.queries, service.overview, service.dispatcher)
        hub: Hub = found
        return hub

    def watch(self, key: Key) -> Watch:
        with self._lock:
            found = self._watches.get(key)
            if found is None:
                found = self._watches[key] = Watch(key)
                self._wake.set()
            found.viewers += 1
            if not self._running:
                self._running = True
                threading.Thread(target=self._run, name="dealer-live", daemon=True).start()
            return found

    def leave(self, watch: Watch) -> None:
        with self._lock:
            watch.viewers -= 1
            if watch.viewers == 0 and self._watches.get(watch.key) is watch:
                del self._watches[watch.key]

    def watched(self) -> int:
        """How many distinct things are watched now."""
        return len(self._watches)

    def reading(self, key: Key) -> Reading | None:
        """The latest reading of ``key``, if it is watched and was read."""
        found = self._watches.get(key)
        return None if found is None else found.now

    def wake(self) -> None:
        self._wake.set()

    def refresh(self, watch: Watch) -> None:
        """Have ``watch`` read now (with whatever else is wanted), not at the next tick: a stream opened."""
        watch.wanted = True
        self._wake.set()

    def _run(self) -> None:
        try:
            self._poll()
        except Exception:  # noqa: BLE001 - a bug of the poller: the next stream to watch something starts another
            log.exception("the live poller stopped")
            with self._lock:
                self._running = False

    def _poll(self) -> None:
        next_tick = time.monotonic()
        while not stopping.is_set():
            self._wake.clear()  # before looking: a thing watched from now on sets it again
            with self._lock:
                watches = list(self._watches.values())
                if not watches:
                    self._running = False
                    return
            if time.monotonic() >= next_tick:
                next_tick = time.monotonic() + TICK_SECONDS
                self.read(watches)
            else:
                self.read([w for w in watches if w.now is None or w.wanted])
            self._wake.wait(max(0.0, next_tick - time.monotonic()))
        with self._lock:
            self._running = False
            watches = list(self._watches.values())
        for found in watches:  # told to stop: their streams end now
            found.wake()

    def tick(self) -> None:
        """Read every thing watched now, once each (what the poller does every tick)."""
        with self._lock:
            watches = list(self._watches.values())
        self.read(watches)

    def read(self, watches: list[Watch]) -> None:
        jobs = [w for w in watches if isinstance(w.key, int)]
        boards = [w for w in watches if isinstance(w.key, Dashboard)]
        try:
            if jobs:
                # Visibility was checked as each stream opened: the jobs are read as the service sees them.
                found = self.reads.watched([w.key for w in jobs])
                for watch in jobs:
                    if watch.key not in found:
                        watch.publish([], gone=True)
                        continue
                    job, timings = found[watch.key]
                    watch.publish([frame("job", job.to_dict()), frame("timings", timings.to_dict())],
                                  finished=job.status in FINISHED, owner=job.owner)
            if boards:
                depth = self.dispatcher.queue_depth()
                for watch in boards:
                    board = watch.key
                    assert isinstance(board, Dashboard)
                    reads = self.reads.seen_by(board.viewer)
                    overview = self.overview.seen_by(board.viewer).overview(depth)
                    watch.publish([frame("overview", overview.to_dict()),
                                   frame("jobs", reads.jobs(board.page, board.per_page,
                                                            **dict(board.filters)).to_dict())])
        except Exception:  # noqa: BLE001 - the streams wait (with their comment lines); the next tick reads again
            if not self._failing:
                log.warning("the live figures could not be read; trying again every tick", exc_info=True)
            self._failing = True
            return
        if self._failing:
            log.warning("the live figures are read again")
        self._failing = False


# --- the streams -------------------------------------------------------------------------------


@live.get("/events/jobs/<id:job_id>")
def job_events(job_id: int) -> Any:
    """A job's figures (``job``, ``timings``) whenever they change; ``end`` once it has finished."""
    # A job that others watch: its owner is known, and the database is not asked (a class opening the
    # same job's page at once); else a 404 now for a job that does not exist or is not the viewer's to see.
    known = Hub.of(current_app).reading(job_id)
    if known is None or known.gone or not viewer().may_read(known.owner):
        queries().timings(job_id)  # 404: no such job, or only shared with the viewer (its timings are not)
    return _stream(job_id)


@live.get("/events/dashboard")
def dashboard_events() -> Any:
    """The dashboard's figures (``overview``) and its page of jobs (``jobs``, with the page's filters)."""
    page, per_page = paging(request.args, JOBS_PER_PAGE)
    filters = job_filters(present(request.args))
    # Whoever sees everything sees the same dashboard: one reading serves them all.
    who = EVERYTHING if viewer().sees_all else viewer()
    board = Dashboard(who, page, per_page, tuple(sorted(filters.items())))
    if Hub.of(current_app).reading(board) is None:  # a view watched already has good filters
        queries().jobs(page, per_page, **filters)  # a bad filter is a 400 now
    return _stream(board)


def _stream(key: Key) -> Any:
    hub = Hub.of(current_app)
    watch = hub.watch(key)
    left: list[bool] = []

    def leave() -> None:
        if not left:
            left.append(True)
            hub.leave(watch)

    opened = time.monotonic()
    hub.refresh(watch)
    response = Response(_body(watch, opened), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    # Called by the server whether or not the body was read to its end.
    response.call_on_close(leave)
    return response


def _body(watch: Watch, opened: float) -> Iterator[bytes]:
    yield f"retry: {RETRY_MS}\n\n".encode()
    watch.fresh(opened, 2 * TICK_SECONDS)
    sent: dict[str, bytes] = {}
    now = time.monotonic()
    ends, quiet_since = now + STREAM_SECONDS * random.uniform(0.9, 1.1), now
    while not stopping.is_set():
        changed = watch.changed  # before reading: what is published from now on wakes this stream
        reading = watch.now
        if reading is not None:
            # What changed, in one write (a thousand streams woken at once: one send each, not one an event).
            changes = [data for name, data in reading.events if sent.get(name) != data]
            sent.update(reading.events)
            if reading.finished:
                changes.append(b"event: end\ndata: {}\n\n")
            if changes:
                quiet_since = time.monotonic()
                yield b"".join(changes)
            if reading.finished or reading.gone:
                return
        now = time.monotonic()
        if now >= ends:
            return
        if now - quiet_since >= TICK_SECONDS:
            quiet_since = now
            yield b":\n\n"
        changed.wait(min(ends, quiet_since + TICK_SECONDS) - now)


# --- what is refused ---------------------------------------------------------------------------


class Admission:
    """Counts the event streams open on this process and refuses those beyond its limits with a ``429``
    before the app sees them: from counters in memory, so that a refusal costs no database work (the
    login check and the job's lookup come after). Streams admitted open :data:`OPENING` at a time.
    Wraps the app's WSGI callable."""

    def __init__(self, app: Flask, per_client: int) -> None:
        self.app = app
        self.inner = app.wsgi_app
        self.per_client = per_client
        self._lock = threading.Lock()
        self.open = 0
        self._clients: Counter[tuple[str, bytes]] = Counter()
        self._opening = threading.BoundedSemaphore(OPENING)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if not str(environ.get("PATH_INFO", "")).startswith(PREFIX):
            return self.inner(environ, start_response)  # type: ignore[no-any-return]
        if one_request_at_a_time(environ):
            return _refuse(start_response, "this server answers one request at a time per process: poll the "
                                           "JSON API instead")
        client = self._client(environ)
        with self._lock:
            if self.open >= MAX_STREAMS:
                refusal = "this process serves as many live streams as it can: poll the JSON API instead"
            elif self.per_client and self._clients[client] >= self.per_client:
                refusal = (f"too many live streams from one client (at most {self.per_client}): poll the JSON "
                           "API instead")
            else:
                refusal = ""
                self.open += 1
                self._clients[client] += 1
        if refusal:
            return _refuse(start_response, refusal)
        released: list[bool] = []

        def release() -> None:
            with self._lock:
                if not released:
                    released.append(True)
                    self.open -= 1
                    self._clients[client] -= 1
                    if not self._clients[client]:
                        del self._clients[client]

        waited = time.monotonic() + OPENING_WAIT_SECONDS
        while not self._opening.acquire(timeout=min(TICK_SECONDS, OPENING_WAIT_SECONDS)):
            if stopping.is_set() or time.monotonic() >= waited:
                release()
                return _refuse(start_response, "too many live streams are opening at once: poll the JSON API "
                                               "instead")
        try:
            body = self.inner(environ, start_response)
        except BaseException:
            release()
            raise
        finally:
            self._opening.release()
        return ClosingIterator(body, release)

    def _client(self, environ: dict[str, Any]) -> tuple[str, bytes]:
        """A client: its address and the digest of its credential (its key, or its login's cookie)."""
        cookie = parse_cookie(environ).get(self.app.config["SESSION_COOKIE_NAME"], "")
        credential = f"{environ.get('HTTP_AUTHORIZATION', '')}\n{cookie}".encode()
        return str(environ.get("REMOTE_ADDR", "")), hashlib.sha256(credential).digest()


def one_request_at_a_time(environ: dict[str, Any]) -> bool:
    """Whether this is one of gunicorn's sync workers, where a stream would hold the whole process."""
    return str(environ.get("SERVER_SOFTWARE", "")).startswith("gunicorn") and not environ.get("wsgi.multithread")


def _refuse(start_response: Callable[..., Any], message: str) -> list[bytes]:
    body = orjson.dumps({"error": message})
    start_response("429 Too Many Requests", [
        ("Content-Type", "application/json"), ("Content-Length", str(len(body))), ("Retry-After", "5"),
        ("Cache-Control", "no-store"), *SECURITY_HEADERS.items()])
    return [body]

