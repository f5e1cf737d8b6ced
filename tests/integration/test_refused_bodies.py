"""An answer given before a request's body is read to its end ends the connection (``webui.pacing``): a
client that goes on pushing a refused upload gets its answer with ``Connection: close`` and then finds the
connection closed, while it still pushes; the server did not read the body it went on sending, and the
API answers the others all the while."""

from __future__ import annotations

import http.client
import select
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.paths import JUDGE_DATA
from worker.testing.waiting import until
from worker.testing.live import LiveService, live_service

pytestmark = [pytest.mark.slow]

#: The body each refused client announces and tries to send: far more than what the server may have read
#: of it (a MiB or two, the screen's first block) plus what the kernel buffers of a connection.
BODY_BYTES = 1 << 30
#: What may have left the client before it saw the connection closed: what the server read, and the
#: socket buffers of both ends (a few MiB each on loopback).
MOST_PUSHED = 64 << 20
#: How long a client waits on any one send or read: generous, as the machine may be loaded; the test
#: asserts that the connection is closed, not how fast.
WAIT_SECONDS = 60
BOUNDARY = "dealer-test"
KEY = "ci-0123456789abcdef-secret"
HANDS = (JUDGE_DATA / "mahjong" / "sample.in").read_bytes()


@dataclass
class Pushed:
    """What a client pushing a body saw: the bytes it sent, the answer it read, whether the connection closed
    (the end of the answer's stream, or a reset) rather than waiting for more, and whether it was reset."""

    sent: int
    answer: bytes
    closed: bool
    reset: bool = False

    @property
    def status(self) -> int:
        return int(self.answer.split(b" ", 2)[1])

    @property
    def head(self) -> str:
        return self.answer.split(b"\r\n\r\n", 1)[0].decode("latin-1")


def push(port: int, fill: bytes, headers: str = "") -> Pushed:
    """Send a multipart upload of :data:`BODY_BYTES` made of ``fill`` to ``POST /api/jobs``, pushing it
    until a send fails (the connection closed under it) or all is sent, then read what came back."""
    part = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.in\"\r\n\r\n"
            ).encode()
    head = (f"POST /api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {BODY_BYTES}\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n{headers}\r\n").encode()
    block = fill * ((1 << 16) // len(fill))
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT_SECONDS) as sock:
        try:
            sock.sendall(head + part)
            sent = len(part)
            while sent < BODY_BYTES:
                sent += sock.send(block[:BODY_BYTES - sent])
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed by the server: what it answered is still there to read
        answer, closed = b"", False
        try:
            while data := sock.recv(1 << 16):
                answer += data
            closed = True
        except ConnectionResetError:
            closed = True
        except TimeoutError:
            pass
    return Pushed(sent, answer, closed)


def push_reading(port: int, fill: bytes) -> Pushed:
    """As :func:`push`, but reading what comes back while it pushes (as ``dealer submit``, curl and nginx
    do), until the end of the stream or a reset."""
    part = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.in\"\r\n\r\n"
            ).encode()
    head = (f"POST /api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {BODY_BYTES}\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n\r\n").encode()
    block = fill * ((1 << 16) // len(fill))
    sent, answer = len(part), b""
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT_SECONDS) as sock:
        sock.sendall(head + part)
        while True:
            readable, writable, _ = select.select([sock], [sock], [], WAIT_SECONDS)
            if not readable and not writable:
                return Pushed(sent, answer, closed=False)
            try:
                if readable:
                    data = sock.recv(1 << 16)
                    if not data:
                        return Pushed(sent, answer, closed=True)
                    answer += data
                elif sent < BODY_BYTES:
                    sent += sock.send(block[:BODY_BYTES - sent], socket.MSG_DONTWAIT)
            except BlockingIOError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                return Pushed(sent, answer, closed=True, reset=True)


def assert_closed_unread(pushed: Pushed, status: int) -> None:
    assert pushed.answer, "no answer before the connection closed"
    assert pushed.status == status, pushed.answer[:300]
    assert "\r\nConnection: close\r\n" in pushed.head, pushed.head
    assert pushed.closed, "the connection stayed open after the answer"
    assert pushed.sent < MOST_PUSHED, f"{pushed.sent} bytes of the body were taken after the answer"


@pytest.fixture(scope="module")
def keyless(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """The web alone, open to all: the module's tests that need no key share it (each pushes only bodies
    it refuses, which leave nothing behind), as one start costs seconds of CPU."""
    with live_service("embedded", tmp_path_factory.mktemp("refused"), workers=0) as live:
        yield live


def test_a_refused_upload_is_answered_and_its_connection_closed_unread(keyless: LiveService) -> None:
    live = keyless
    port = int(live.url.rsplit(":", 1)[1])
    pushed = push(port, b"\0")  # a NUL byte: a binary file, refused from its first block
    assert_closed_unread(pushed, 400)
    assert b"this looks like a binary file" in pushed.answer
    # A client reading while it pushes finds the answer followed by the end of the stream, not a reset
    # (which may come before it has read the answer, and lose it: nginx in front answered 502 then).
    reading = push_reading(port, b"\0")
    assert_closed_unread(reading, 400)
    assert not reading.reset
    assert live.get("/api/jobs")["items"] == []  # and the service is whole


def test_an_upload_without_its_key_is_answered_401_and_its_connection_closed_unread(tmp_path: Path) -> None:
    with live_service("embedded", tmp_path, workers=0, DEALER_API_KEYS=f"ci:{KEY}") as live:
        port = int(live.url.rsplit(":", 1)[1])
        pushed = push(port, HANDS)  # a judge file: refused for want of a key alone
        assert_closed_unread(pushed, 401)
        # With the key, a short upload on a connection the server keeps: a body read to its end.
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_SECONDS)
        try:
            for _ in range(2):
                body = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.in\"\r\n\r\n"
                        ).encode() + HANDS + f"\r\n--{BOUNDARY}--\r\n".encode()
                connection.request("POST", "/api/jobs", body=body, headers={
                    "Authorization": f"Bearer {KEY}", "Content-Type": f"multipart/form-data; boundary={BOUNDARY}"})
                response = connection.getresponse()
                response.read()
                assert response.status == 201
                assert response.getheader("Connection") == "keep-alive"
        finally:
            connection.close()


@contextmanager
def pushing(port: int, clients: int) -> Iterator[list[Pushed]]:
    """``clients`` threads pushing refused bodies, each again as soon as its connection is closed."""
    done = threading.Event()
    seen: list[Pushed] = []

    def run() -> None:
        while not done.is_set():
            seen.append(push(port, b"\0"))

    threads = [threading.Thread(target=run, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    try:
        yield seen
    finally:
        done.set()
        for thread in threads:
            thread.join(WAIT_SECONDS * 3)


def test_the_api_answers_while_clients_push_refused_bodies(keyless: LiveService) -> None:
    port = int(keyless.url.rsplit(":", 1)[1])
    with pushing(port, 3) as seen:
        until(lambda: len(seen), lambda count: count >= 3, what="refused clients answered", timeout=WAIT_SECONDS * 3)
        for _ in range(10):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_SECONDS)
            try:
                connection.request("GET", "/api/jobs")
                assert connection.getresponse().status == 200
            finally:
                connection.close()
    for pushed in seen:
        assert_closed_unread(pushed, 400)
