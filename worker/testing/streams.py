"""Many live event streams held open at once and read as their bytes come, for the test and the benchmark
of the live updates' fan-out (tests/integration/test_live_streams.py, bench/viewers.py)."""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from webui.pacing import raise_open_files_limit

EVENT = b"event: "


@dataclass
class Stream:
    """One stream: what has come of it so far."""

    path: str
    sock: socket.socket
    #: The answer's status, once its head has come.
    status: int | None = None
    head: bytes = b""
    #: Events (``event:`` lines) and writes of any kind (events and comment lines) received.
    events: int = 0
    writes: int = 0
    #: When its first event came, and when its latest bytes did (``time.monotonic``).
    first_event_at: float | None = None
    last_at: float | None = None
    #: The longest wait between two arrivals of bytes since its first event.
    longest_gap: float = 0.0
    ended: bool = False
    #: Whether it received ``end`` (its job finished).
    finished: bool = False
    _tail: bytes = field(default=b"", repr=False)

    @property
    def served(self) -> bool:
        return self.status == 200 and self.events > 0

    def take(self, data: bytes, now: float) -> None:
        if self.status is None:
            self.head += data
            if b"\r\n\r\n" not in self.head:
                return
            self.head, data = self.head.split(b"\r\n\r\n", 1)
            self.status = int(self.head.split(b" ", 2)[1])
            if not data:
                return
        if self.first_event_at is not None and self.last_at is not None:
            self.longest_gap = max(self.longest_gap, now - self.last_at)
        self.last_at = now
        self.writes += 1
        seen = self._tail + data
        found = seen.count(EVENT)
        if found and self.first_event_at is None:
            self.first_event_at = now
        self.events += found
        self.finished = self.finished or EVENT + b"end\n" in seen
        self._tail = seen[-(len(EVENT) - 1):]  # an event's name cut between two reads is counted once


class Streams:
    """Opens streams to ``host:port`` (each from a source address of its own choosing: ``127.0.0.0/8`` is
    this machine's, so that a test can be several clients) and reads them all from one thread."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.streams: list[Stream] = []
        self._selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        raise_open_files_limit()

    def open(self, path: str, source: str = "127.0.0.1", headers: dict[str, str] | None = None,
             timeout: float = 30) -> Stream:
        sock = socket.create_connection((self.host, self.port), timeout=timeout, source_address=(source, 0))
        lines = [f"GET {path} HTTP/1.0", f"Host: {self.host}:{self.port}", "Accept: text/event-stream",
                 *(f"{name}: {value}" for name, value in (headers or {}).items())]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        sock.setblocking(False)
        stream = Stream(path, sock)
        with self._lock:
            self.streams.append(stream)
            self._selector.register(sock, selectors.EVENT_READ, stream)
        return stream

    @contextmanager
    def running(self) -> Iterator[Streams]:
        reader = threading.Thread(target=self._read, name="streams", daemon=True)
        reader.start()
        try:
            yield self
        finally:
            self._stop.set()
            reader.join()
            for stream in self.streams:
                with contextlib.suppress(OSError):
                    stream.sock.close()
            self._selector.close()

    def close(self, stream: Stream) -> None:
        with self._lock:
            if not stream.ended:
                stream.ended = True
                self._selector.unregister(stream.sock)
                stream.sock.close()

    def _read(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                ready = self._selector.select(0.1) if self._selector.get_map() else []
            if not ready:
                self._stop.wait(0.05)
            now = time.monotonic()
            for key, _ in ready:
                stream: Stream = key.data
                try:
                    data = stream.sock.recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if data:
                    stream.take(data, now)
                else:
                    self.close(stream)
