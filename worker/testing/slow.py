"""Slow clients: connections that send a request's head, or an upload's body, a byte a second, for the
test and the benchmark of ``webui.pacing`` (tests/integration/test_slow_clients.py, bench/slow_clients.py)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from webui.pacing import raise_open_files_limit

BOUNDARY = "dealer-slow-client"
#: The body a slow upload says it will send: far more than it sends in any test.
DECLARED_BYTES = 100_000


@dataclass
class SlowConnection:
    """One connection that has sent the start of a request and sends one more byte of it at a time, never
    ending it: a head that never ends (a header's value growing) or a body that never ends."""

    sock: socket.socket
    byte: bytes
    sent: int = 0
    answer: bytes = b""
    closed: bool = False

    def trickle(self) -> None:
        """Send one more byte, unless the server has answered or closed."""
        if self.closed:
            return
        try:
            self.sock.sendall(self.byte)
            self.sent += 1
        except OSError:
            self.closed = True

    def read_answer(self) -> bytes:
        """What the server has answered so far (without waiting); marks the connection closed at its end."""
        if self.closed:
            return self.answer
        self.sock.setblocking(False)
        try:
            while data := self.sock.recv(4096):
                self.answer += data
            self.closed = True
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self.closed = True
        finally:
            self.sock.setblocking(True)
        return self.answer


def open_head(host: str, port: int, timeout: float = 30) -> SlowConnection:
    """``GET /api/jobs`` whose head never ends: a header's value sent a byte at a time."""
    sock = socket.create_connection((host, port), timeout=timeout)
    sock.sendall(f"GET /api/jobs HTTP/1.1\r\nHost: {host}:{port}\r\nX-Slow: ".encode())
    return SlowConnection(sock, b"a")


def open_upload(host: str, port: int, timeout: float = 30) -> SlowConnection:
    """``POST /api/jobs`` with its head at once and its body a byte at a time."""
    sock = socket.create_connection((host, port), timeout=timeout)
    part = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"slow.in\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n")
    sock.sendall((f"POST /api/jobs HTTP/1.1\r\nHost: {host}:{port}\r\n"
                  f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
                  f"Content-Length: {DECLARED_BYTES}\r\n\r\n{part}").encode())
    return SlowConnection(sock, b"1")


@dataclass
class SlowClients:
    """Slow connections that each send a byte every ``interval`` seconds from one thread, until stopped;
    with ``reconnect``, one the server closed is opened again (an attacker's script does so)."""

    host: str
    port: int
    interval: float = 1.0
    reconnect: bool = False
    heads: list[SlowConnection] = field(default_factory=list)
    uploads: list[SlowConnection] = field(default_factory=list)
    #: What the server answered each connection it closed before it was opened again (``reconnect``),
    #: by kind ("head", "upload"): nothing for a connection dropped unanswered.
    ended: list[tuple[str, bytes]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add_heads(self, count: int) -> list[SlowConnection]:
        raise_open_files_limit()  # a thousand connections are more than the usual 1,024 files
        added = [open_head(self.host, self.port) for _ in range(count)]
        with self._lock:
            self.heads += added
        return added

    def add_uploads(self, count: int) -> list[SlowConnection]:
        raise_open_files_limit()
        added = [open_upload(self.host, self.port) for _ in range(count)]
        with self._lock:
            self.uploads += added
        return added

    @property
    def connections(self) -> list[SlowConnection]:
        with self._lock:
            return self.heads + self.uploads

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            for connection in self.connections:
                connection.trickle()
            if self.reconnect:
                self._reopen()

    def _reopen(self) -> None:
        for name, kind, opener in (("head", self.heads, open_head), ("upload", self.uploads, open_upload)):
            for at, connection in enumerate(list(kind)):
                if not (connection.read_answer() or connection.closed):
                    continue
                with contextlib.suppress(OSError):
                    connection.sock.close()
                with contextlib.suppress(OSError):  # refused: tried again at the next byte
                    opened = opener(self.host, self.port)
                    with self._lock:
                        self.ended.append((name, connection.answer))
                        kind[at] = opened

    @staticmethod
    def answered(connections: list[SlowConnection]) -> list[SlowConnection]:
        """Those of ``connections`` the server has answered or closed."""
        return [c for c in connections if c.read_answer() or c.closed]

    @contextmanager
    def running(self) -> Iterator[SlowClients]:
        thread = threading.Thread(target=self._run, name="slow-clients", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()
            for connection in self.connections:
                with contextlib.suppress(OSError):
                    connection.sock.close()
