"""Gunicorn, opened where it offers no hook: the gevent worker's connections and requests (the pace of
:mod:`webui.pacing`), the answer that closes its connection, and the signals that stop the arbiter and
its web processes.

Written against gunicorn 27.0 (``base_async.AsyncWorker.handle`` and ``handle_request``,
``ggevent.GeventWorker``, ``http.message.Request.should_close``, ``http.body``'s readers, the arbiter's
``handle_<signal>`` methods looked up as each signal comes, ``workers.base.Worker.init_process``).
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

import gevent
from gunicorn.http.body import Body, ChunkedReader, LengthReader
from gunicorn.workers.ggevent import GeventWorker

from webui import pacing
from worker.store.database import Database

#: The bounds pyproject.toml sets on what this module reaches into (tests/test_seams.py holds them equal).
WRITTEN_AGAINST = ("gunicorn>=27,<28",)

#: The signals that stop gunicorn: SIGINT (Ctrl-C) and SIGQUIT at once, SIGTERM gracefully.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT)


class PacedWorker(GeventWorker):  # type: ignore[misc]
    """Gunicorn's gevent worker whose connections' reads keep pace (:class:`webui.pacing.PacedSocket`)
    and whose requests' heads come within :data:`webui.pacing.HEADER_SECONDS`."""

    def handle(self, listener: Any, client: Any, addr: Any) -> None:
        super().handle(listener, pacing.PacedSocket(client), addr)

    def handle_request(self, listener_name: Any, req: Any, sock: pacing.PacedSocket, addr: Any) -> Any:
        closes_when_body_unread(req)
        try:
            return super().handle_request(listener_name, req, sock, addr)
        except StopIteration:  # gunicorn closes the connection next
            if not read_to_end(req.body):
                pacing.linger(sock)
            raise
        finally:
            sock.start()  # the next request of a kept-alive connection has its own deadline

    def patch(self) -> None:
        super().patch()  # gevent's monkey-patching of the standard library, before the app is loaded
        # The arbiter opened the database (an embedded one is brought up to date): its pool's locks are of
        # the unpatched kind, on which a greenlet waiting for a connection would hold the whole process.
        Database.forget_pools()

    def timeout_ctx(self) -> gevent.Timeout:
        # Gunicorn waits this long, silently giving up, for each request's head to be read whole.
        return gevent.Timeout(pacing.HEADER_SECONDS, False)


def closes_when_body_unread(req: Any) -> None:
    """Have gunicorn close ``req``'s connection, saying so in the answer (``Connection: close``), when the
    answer is given before the body was read to its end: gunicorn would otherwise read the rest of the body
    (to find where the next request starts), and a refused upload of gigabytes would be read whole, at the
    cost of the process's CPU.

    Gunicorn asks the request's ``should_close()`` when it writes the answer's head (its ``Connection``
    header; the app's own is dropped as hop-by-hop), after the answer (closing instead of waiting for the
    next request) and before reading the next one (draining the body first): saying yes from the start of
    the answer covers all three."""
    says = req.should_close
    req.should_close = lambda: says() or not read_to_end(req.body)


def read_to_end(body: Body) -> bool:
    """Whether all of a request's body has been taken from its connection (what the app has not read of it
    yet, it may still read from the buffer)."""
    reader = body.reader
    if isinstance(reader, LengthReader):  # Content-Length (a request without a body has a length of 0)
        return bool(reader.length == 0)
    if isinstance(reader, ChunkedReader):  # its parser is dropped once the last chunk and trailers are in
        return reader.parser is None
    return False


def first_when_arbiter_told_to_stop(arbiter: Any, told: Callable[[], None]) -> None:
    """Have ``told`` called, before gunicorn's own handling, as soon as ``arbiter`` is told to stop
    (Ctrl-C, SIGTERM, SIGQUIT): gunicorn has a hook for a worker's SIGINT, none for the arbiter's."""
    for number in STOP_SIGNALS:
        name = f"handle_{arbiter.SIG_NAMES[number]}"  # what the arbiter looks up as the signal comes
        handler = getattr(arbiter, name)

        def first(handler: Callable[[], None] = handler) -> None:
            told()
            handler()

        setattr(arbiter, name, first)


def first_when_worker_told_to_stop(told: Callable[[int], None]) -> None:
    """In a web process, from ``post_worker_init`` on: have ``told(signum)`` called before gunicorn's own
    handling of each signal that stops it (gunicorn's own hook, ``worker_int``, comes for SIGINT and
    SIGQUIT alone, and for SIGQUIT only in a greenlet spawned for later)."""
    for number in STOP_SIGNALS:
        handler = signal.getsignal(number)
        if not callable(handler):
            continue

        def first(signum: int, frame: Any, handler: Callable[[int, Any], None] = handler) -> None:
            told(signum)
            handler(signum, frame)

        signal.signal(number, first)
    # As gunicorn has it: a SIGTERM lets the requests in hand finish, not interrupt their system calls
    # (setting a handler made them interruptible again).
    signal.siginterrupt(signal.SIGTERM, False)
