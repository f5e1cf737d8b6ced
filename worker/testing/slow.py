"""Slow clients: uploads that send their body a byte a second, for the test and the benchmark of
``webui.pacing`` (tests/integration/test_slow_clients.py, bench/slow_clients.py)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

BOUNDARY = "dealer-slow-client"
#: The body a slow client says it will send: far more than it sends in any test.
DECLARED_BYTES = 100_000


@dataclass
class SlowUpload:
    """One connection sending ``POST /api/jobs`` with its head at once and its body a byte at a time."""

    sock: socket.socket
    sent: int = 0
    answer: bytes = b""
    closed: bool = False

    def trickle(self) -> None:
        """Send one more byte of the body, unless the server has answered or closed."""
        if self.closed:
            return
        try:
            self.sock.sendall(b"1")
            self.sent += 1
        except OSError:
            self.closed = True

    def read_answer(self) -> bytes:
        """What the server has answered so far (without waiting); marks the connection closed at its end."""
        if self.closed and self.answer:
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


def open_upload(host: str, port: int, timeout: float = 30) -> SlowUpload:
    sock = socket.create_connection((host, port), timeout=timeout)
    part = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"slow.in\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n")
    sock.sendall((f"POST /api/jobs HTTP/1.1\r\nHost: {host}:{port}\r\n"
                  f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
                  f"Content-Length: {DECLARED_BYTES}\r\n\r\n{part}").encode())
    return SlowUpload(sock)


@dataclass
class SlowClients:
    """Uploads that each send a byte every ``interval`` seconds from one thread, until stopped."""

    host: str
    port: int
    interval: float = 1.0
    uploads: list[SlowUpload] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, count: int) -> list[SlowUpload]:
        added = [open_upload(self.host, self.port) for _ in range(count)]
        for upload in added:
            upload.trickle()
        with self._lock:
            self.uploads += added
        return added

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                uploads = list(self.uploads)
            for upload in uploads:
                upload.trickle()

    def answered(self) -> list[bytes]:
        """The answers of the uploads the server has answered or closed."""
        with self._lock:
            uploads = list(self.uploads)
        return [upload.read_answer() for upload in uploads if upload.read_answer() or upload.closed]

    @contextmanager
    def running(self) -> Iterator[SlowClients]:
        thread = threading.Thread(target=self._run, name="slow-clients", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()
            for upload in self.uploads:
                with contextlib.suppress(OSError):
                    upload.sock.close()
