"""Serving the web app with gunicorn, from ``dealer web`` and ``dealer serve``."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any

from gunicorn.app.base import BaseApplication

from webui.pacing import CONNECTIONS, HEADER_SECONDS, raise_open_files_limit
from webui.seams.gunicorn import PacedWorker, first_when_arbiter_told_to_stop, first_when_worker_told_to_stop
from worker.config import Settings
from worker.jobs.rehearsal import rehearse_upload


#: The exit status of a command refused its address: bad usage (the command line's table of exit codes).
BAD_USAGE = 2


def leave_unless_free(host: str, port: int) -> None:
    """Leave with one line and exit status 2 unless this process could listen on ``host:port``, before
    anything is started: gunicorn, given a port in use, logs ``Connection in use`` ten times over 5 s and
    then leaves, and ``dealer serve`` had started its worker by then. The check binds as gunicorn does
    (``SO_REUSEADDR``, so a port a closed server left in TIME_WAIT is free) and lets go at once."""
    refusal = port_refusal(host, port)
    if refusal is not None:
        print(refusal, file=sys.stderr, flush=True)
        raise SystemExit(BAD_USAGE)


def port_refusal(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on, in one line that says the way out; None when it can."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        return f"cannot listen on {host}: {error.strerror}: give an address of this machine with --host"
    family, kind, protocol, _, address = found[0]
    try:
        with socket.socket(family, kind, protocol) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
            probe.listen()
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            return f"port {port} is in use: stop what holds it or choose another with --port / make run PORT=…"
        if error.errno == errno.EACCES:
            return (f"port {port} needs privileges this user lacks: choose one above 1023 with --port "
                    "/ make run PORT=…")
        if error.errno == errno.EADDRNOTAVAIL:
            return f"{host} is no address of this machine: choose another with --host / make run HOST=…"
        return f"cannot listen on {host}:{port}: {error.strerror}"
    return None


class WebServer(BaseApplication):  # type: ignore[misc]
    """Gunicorn with its gevent worker: uploads stream for minutes and slow clients trickle while the
    dashboard keeps polling, each connection a greenlet; slow clients are cut off (:mod:`webui.pacing`)."""

    def __init__(self, settings: Settings, host: str, port: int, workers: int = 1, graceful_seconds: int = 5,
                 on_stop: Callable[[], None] | None = None) -> None:
        self.settings = settings
        self.on_stop = on_stop
        self.options = {
            "bind": f"{host}:{port}",
            "workers": workers,
            "worker_class": PacedWorker,
            "worker_connections": CONNECTIONS,
            # How long a request's head may take, and an idle kept-alive connection stays (webui.pacing).
            "keepalive": HEADER_SECONDS,
            # An upload of gigabytes may take longer than any fixed limit: a request is held to a pace instead.
            "timeout": 0,
            "graceful_timeout": graceful_seconds,
            "accesslog": None,
            "errorlog": "-",
            "loglevel": "warning",
            # gunicorn's control socket (gunicornc) is not used here, and stopping its thread took up to
            # seconds of a Ctrl-C on a loaded machine.
            "control_socket_disable": True,
        }
        raise_open_files_limit()  # before the web processes are forked: they inherit it
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)
        self.cfg.set("post_worker_init", self._ready_worker)
        if self.on_stop is not None:
            self.cfg.set("when_ready", self._call_on_stop)

    def _ready_worker(self, worker: Any) -> None:
        """In a web process, before its first request: its live streams end when it is told to stop, and
        an upload and its job's making are rehearsed (rolled back), so that its first upload is not slower
        than the next (``worker.jobs.rehearsal``)."""
        _end_streams_when_told_to_stop()
        try:
            rehearse_upload(self.settings)
        except Exception:  # noqa: BLE001 - only a head start: the database may be down at start
            worker.log.warning("could not rehearse an upload before the first request", exc_info=True)

    def _call_on_stop(self, arbiter: Any) -> None:
        """Have ``on_stop`` called as soon as the arbiter is told to stop (Ctrl-C, SIGTERM, SIGQUIT)."""
        if self.on_stop is not None:
            first_when_arbiter_told_to_stop(arbiter, self.on_stop)

    def load(self) -> Any:
        from webui.app import create_app

        return create_app(self.settings)


def _end_streams_when_told_to_stop() -> None:
    """In a web process: have its live streams end as soon as it is told to stop (Ctrl-C, SIGTERM,
    SIGQUIT). A stream lasts up to ``live.STREAM_SECONDS``, longer than the grace the process gets to
    leave: held open, it had the process killed at the grace's end, which gunicorn logs as an error."""
    from webui.live import stop

    told: list[int] = []

    def tell(signum: int) -> None:
        if not told:  # Ctrl-C brings SIGINT and the arbiter's SIGQUIT: set() must not be re-entered
            told.append(signum)
            stop()
        if signum != signal.SIGTERM:
            _leave()

    first_when_worker_told_to_stop(tell)


def _leave() -> None:
    """Leave at once on a quick stop (Ctrl-C, SIGQUIT), as gunicorn means it, only faster: its own way
    returns through Python's exit, which waits for every request in hand, so that one (an upload
    being sent, a long export) held the process until gunicorn killed it at the end of its grace, which
    it logs as an error ("was sent SIGKILL! Perhaps out of memory?"); and on a loaded machine the exit
    itself took seconds. Nothing is lost: an upload cut short is never made a job (and is cleaned up as
    any a dead process was receiving), and the database keeps what was committed."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)
