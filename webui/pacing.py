"""Slow clients cannot starve the web process: a request must arrive at a least pace, and only so many
requests may send a body at once.

Gunicorn's threaded worker (``gthread``) keeps idle connections off its threads, but a thread reads a
request's body to its end, and 16 uploads sending a byte a second once held every thread of
``dealer web``, with no timeout. Here, as Apache's ``mod_reqtimeout`` does it (``body=20,MinRate=500``):

- every read of a request, its head and its body, must come by a deadline that starts at
  :data:`GRACE_SECONDS` and grows a second for every :data:`MIN_RATE` bytes received, but never
  lies more than :data:`MOST_AHEAD_SECONDS` ahead (a fast start buys no stall of hours); a client
  slower than that is answered ``408`` (:class:`PacedWorker`, :func:`late`) and its thread freed;
- at most :data:`BODIES` requests of a process read a body at once (:class:`BodyLimit`), fewer than
  its :data:`THREADS`: the rest are answered ``503`` with ``Retry-After`` at once, before their body
  is read, so the dashboard and the API keep threads of their own whatever the uploads do.

In production a buffering reverse proxy (nginx) in front reads each body before the app sees it
(README, "Behind a reverse proxy").
"""

from __future__ import annotations

import errno
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from gunicorn.workers.gthread import ThreadWorker

#: Threads of a web process: a thread serves one request at a time, while it is read, run and answered.
THREADS = 64
#: Requests of a web process reading a body at once (uploads, and any other write that sends one).
BODIES = 48
#: Seconds a request has before its pace counts, and the least bytes a second it must then keep to.
GRACE_SECONDS = 20.0
MIN_RATE = 500
#: The longest a request may send nothing, however much it sent before.
MOST_AHEAD_SECONDS = 60.0
#: What a client refused for too many bodies at once is told to wait.
RETRY_SECONDS = 5

#: The WSGI environ key under which gunicorn hands the app the connection's socket.
SOCKET_KEY = "gunicorn.socket"


class PacedSocket:
    """A connection's socket whose reads must keep pace: each waits at most until the request's deadline
    (:meth:`start` sets it at a request's first read), then fails as a reset connection would, so that
    gunicorn and Werkzeug give up on the request the way they do when a client goes away."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.deadline: float | None = None
        self.late = False

    def start(self) -> None:
        self.deadline = None
        self.late = False

    def recv(self, size: int, *flags: int) -> bytes:
        data = self._paced(lambda: self._sock.recv(size, *flags))
        self._received(len(data))
        return data

    def recv_into(self, buffer: Any, *args: int) -> int:
        count = self._paced(lambda: self._sock.recv_into(buffer, *args))
        self._received(count)
        return count

    def _paced(self, read: Callable[[], Any]) -> Any:
        now = time.monotonic()
        if self.deadline is None:
            self.deadline = now + GRACE_SECONDS
        if now >= self.deadline:
            raise self._too_slow()
        self._sock.settimeout(self.deadline - now)
        try:
            return read()
        except TimeoutError:
            raise self._too_slow() from None
        finally:
            self._sock.settimeout(None)  # answers are written without a deadline (an export may stream long)

    def _received(self, count: int) -> None:
        if self.deadline is not None:
            self.deadline = min(self.deadline + count / MIN_RATE, time.monotonic() + MOST_AHEAD_SECONDS)

    def _too_slow(self) -> ConnectionResetError:
        self.late = True
        return ConnectionResetError(errno.ECONNRESET, f"the request came slower than {MIN_RATE} bytes a second")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class PacedWorker(ThreadWorker):  # type: ignore[misc]
    """Gunicorn's threaded worker whose connections' reads keep pace (:class:`PacedSocket`)."""

    def handle(self, conn: Any) -> Any:
        if not isinstance(conn.sock, PacedSocket):
            conn.sock = PacedSocket(conn.sock)
        conn.sock.start()  # each request of a kept-alive connection has its own deadline
        return super().handle(conn)


def late(environ: dict[str, Any]) -> bool:
    """Whether this request's client was cut off for being too slow (its body then ends short)."""
    sock = environ.get(SOCKET_KEY)
    return isinstance(sock, PacedSocket) and sock.late


def too_slow_message() -> str:
    return (f"the request came slower than {MIN_RATE} bytes a second (after {GRACE_SECONDS:.0f} s): "
            "send it again on a faster connection")


class BodyLimit:
    """WSGI middleware: at most ``most`` requests reading a body at once; the others are answered ``503``
    before their body is read."""

    def __init__(self, app: Callable[..., Iterable[bytes]], most: int = BODIES) -> None:
        self.app = app
        self.most = most
        self._slots = threading.BoundedSemaphore(most)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if not _has_body(environ):
            return self.app(environ, start_response)
        if not self._slots.acquire(blocking=False):
            return _busy(start_response, self.most)
        try:
            answer = self.app(environ, start_response)
        except BaseException:
            self._slots.release()
            raise
        return _Released(answer, self._slots)


def _has_body(environ: dict[str, Any]) -> bool:
    if "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
        return True
    length = environ.get("CONTENT_LENGTH") or "0"
    return not length.isdigit() or int(length) > 0


def _busy(start_response: Callable[..., Any], most: int) -> list[bytes]:
    body = json.dumps({"error": f"the server is reading as many requests with a body as it may ({most}): "
                                f"send it again in {RETRY_SECONDS} s"}).encode()
    # Connection: close, as the body is left unread on the socket.
    start_response("503 Service Unavailable", [("Content-Type", "application/json"),
                                               ("Content-Length", str(len(body))),
                                               ("Retry-After", str(RETRY_SECONDS)), ("Connection", "close")])
    return [body]


class _Released:
    """A WSGI answer that gives its request's slot back when the server closes it (the answer sent)."""

    def __init__(self, answer: Iterable[bytes], slots: threading.BoundedSemaphore) -> None:
        self.answer = answer
        self.slots = slots

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.answer)

    def close(self) -> None:
        try:
            close = getattr(self.answer, "close", None)
            if close is not None:
                close()
        finally:
            self.slots.release()
