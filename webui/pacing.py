"""Slow clients cost nothing: the web process serves each connection on a greenlet (gunicorn's gevent
worker), so a thousand clients trickling their requests hold a thousand greenlets, not the threads the
dashboard and the API need. What gevent and gunicorn do not do by themselves is bound how long a client
may take to send a request; here, as Apache's ``mod_reqtimeout`` does it:

- a request's head must arrive whole within :data:`HEADER_SECONDS` of the connection's opening (or of
  the previous answer on a kept-alive connection), or the connection is closed unanswered: gunicorn's
  keep-alive wait covers the head too (``webui.seams.gunicorn.PacedWorker``);
- every read of its body must come by a deadline that starts at :data:`GRACE_SECONDS` and grows a second
  for every :data:`MIN_RATE` bytes received, but never lies more than :data:`MOST_AHEAD_SECONDS` ahead (a
  fast start buys no stall of hours); a client slower than that is answered ``408`` (:class:`PacedSocket`,
  :func:`late`);
- a read returns at once while the client's bytes are buffered (gevent's ``recv`` waits only when there are
  none), so a body sent as fast as the network allows would hold the event loop for as long as it lasts:
  every read lets the other greenlets run first;
- an answer given before the request's body is read to its end (a refused upload, a 401, a 413 ...) says
  ``Connection: close`` and the connection is closed once it is written, nothing more of it read: gunicorn
  would otherwise read (and drop) the rest of the body, however long, to serve the next request on the
  connection (``webui.seams.gunicorn.closes_when_body_unread``). The answer is followed by the end of the
  stream at once, and the socket closed when the client closes its end, or after :data:`LINGER_SECONDS`
  (:func:`linger`): closed at once over the bytes still coming, it would reset the connection, and a
  client (nginx in front, still sending the body) could take the reset before the answer and lose it.

A connection costs a file descriptor: the process may hold :data:`CONNECTIONS` at once, and the soft
limit of open files is raised to the hard one (:func:`raise_open_files_limit`).
"""

from __future__ import annotations

import contextlib
import errno
import resource
import socket
import time
from collections.abc import Callable
from typing import Any

import gevent

#: Connections one web process holds at once (gunicorn's ``worker_connections``).
CONNECTIONS = 10_000
#: Seconds a request's head has to arrive whole, and that an idle kept-alive connection is kept.
HEADER_SECONDS = 5
#: Seconds a request has before its pace counts, and the least bytes a second it must then keep to.
GRACE_SECONDS = 20.0
MIN_RATE = 500
#: The longest a request may send nothing, however much it sent before.
MOST_AHEAD_SECONDS = 60.0

#: The longest a connection answered before its body was read is held, unread, for its client to take the
#: answer and close its end (most do at once: a client that goes on sending is then reset).
LINGER_SECONDS = 1.0
#: The states of a Linux TCP socket (``tcpi_state``) that has sent its end of the stream and awaits the peer's.
_ENDING = (4, 5)  # TCP_FIN_WAIT1, TCP_FIN_WAIT2

#: The WSGI environ key under which gunicorn hands the app the connection's socket.
SOCKET_KEY = "gunicorn.socket"


class PacedSocket:
    """A connection's socket whose reads must keep pace: each waits at most until the request's deadline
    (:meth:`start` clears it; a request's first read sets it), then fails as a reset connection would, so
    that gunicorn and Werkzeug give up on the request the way they do when a client goes away."""

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
            data = read()
        except TimeoutError:
            raise self._too_slow() from None
        finally:
            self._sock.settimeout(None)  # answers are written without a deadline (an export may stream long)
        gevent.sleep(0)  # the others' turn: a read of buffered bytes never waits, so it never yields by itself
        return data

    def _received(self, count: int) -> None:
        if self.deadline is not None:
            self.deadline = min(self.deadline + count / MIN_RATE, time.monotonic() + MOST_AHEAD_SECONDS)

    def _too_slow(self) -> ConnectionResetError:
        self.late = True
        return ConnectionResetError(errno.ECONNRESET, f"the request came slower than {MIN_RATE} bytes a second")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def linger(sock: PacedSocket) -> None:
    """End the stream after the answer written on ``sock`` (the client reads it, then the end), and wait,
    reading nothing, until the client has closed its end or :data:`LINGER_SECONDS` have passed."""
    deadline = time.monotonic() + LINGER_SECONDS
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_WR)
        while time.monotonic() < deadline and _state(sock) in _ENDING:
            gevent.sleep(0.02)


def _state(sock: PacedSocket) -> int:
    """The TCP state of ``sock`` (Linux's ``tcpi_state``); where it cannot be told, one of :data:`_ENDING`
    (the wait then lasts its limit)."""
    if not hasattr(socket, "TCP_INFO"):
        return _ENDING[0]
    return int(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0])


def raise_open_files_limit() -> None:
    """Let this process (and the web processes it forks) open as many files as the system allows it:
    each connection is one, and the usual soft limit (1,024) is less than :data:`CONNECTIONS`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        # An unlimited hard limit is more than the kernel takes as a soft one: the soft one then stays.
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def late(environ: dict[str, Any]) -> bool:
    """Whether this request's client was cut off for being too slow (its body then ends short)."""
    sock = environ.get(SOCKET_KEY)
    return isinstance(sock, PacedSocket) and sock.late


def too_slow_message() -> str:
    return (f"the request came slower than {MIN_RATE} bytes a second (after {GRACE_SECONDS:.0f} s): "
            "send it again on a faster connection")
