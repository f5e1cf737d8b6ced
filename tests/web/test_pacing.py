"""The web process's connections (``webui.pacing``): a read of a body that is already buffered still lets
the other greenlets run, and whether an answer closes its connection follows how much of the body was
taken from it, under gunicorn's own request and body readers."""

from __future__ import annotations

import io
from typing import Any

import gevent
import gevent.socket
from gunicorn.config import Config
from gunicorn.http.parser import RequestParser

from webui.pacing import PacedSocket, closes_when_body_unread


def test_every_read_lets_the_other_greenlets_run_though_the_bytes_are_there() -> None:
    client, server = gevent.socket.socketpair()
    turns = []

    def other() -> None:
        while True:
            turns.append(1)
            gevent.sleep(0)

    running = gevent.spawn(other)
    try:
        client.sendall(bytes(64 << 10))
        paced = PacedSocket(server)
        gevent.sleep(0)  # the other greenlet's first turn
        before = len(turns)
        for _ in range(10):  # each returns at once: the bytes are buffered
            assert len(paced.recv(1024)) == 1024
        assert len(turns) - before >= 10
    finally:
        running.kill()
        client.close()
        server.close()


def _request(raw: bytes) -> Any:
    return next(RequestParser(Config(), io.BytesIO(raw), ("127.0.0.1", 1)))


def test_an_answer_closes_its_connection_while_the_body_is_not_read_to_its_end() -> None:
    body = b"0123456789" * 1000
    request = _request(b"POST /api/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 10000\r\n\r\n" + body)
    closes_when_body_unread(request)
    assert request.should_close()
    assert request.body.read(4) == b"0123"
    assert request.should_close()
    assert request.body.read() == body[4:]
    assert not request.should_close()  # read to its end: the connection serves the next request


def test_a_chunked_body_is_read_to_its_end_with_its_last_chunk() -> None:
    request = _request(b"POST /api/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                       b"4\r\nabcd\r\n0\r\n\r\n")
    closes_when_body_unread(request)
    assert request.should_close()
    assert request.body.read() == b"abcd"
    assert not request.should_close()


def test_a_request_without_a_body_keeps_its_connection() -> None:
    request = _request(b"GET /api/jobs HTTP/1.1\r\nHost: x\r\n\r\n")
    closes_when_body_unread(request)
    assert not request.should_close()
    closing = _request(b"GET /api/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    closes_when_body_unread(closing)
    assert closing.should_close()  # what the client asked for still holds
