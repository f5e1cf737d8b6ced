"""Slow clients cost nothing (``webui.pacing``): while a few hundred connections send a request's head a
byte a second, and some uploads their body, opened again as soon as the server drops them, every request
of the API, the dashboard and another upload is answered; a head that does not come whole in time is
dropped unanswered, and a body slower than the least pace is answered 408."""

from __future__ import annotations

import http.client
from pathlib import Path

import pytest

from tests.support.paths import JUDGE_DATA
from worker.testing.waiting import until
from worker.testing.live import live_service
from worker.testing.slow import SlowClients

pytestmark = [pytest.mark.slow]

HEADS = 300
UPLOADS = 30
#: What one request may take before it counts as failed: very generous, as the machine may be loaded;
#: the test asserts that each is answered, not how fast.
ANSWER_SECONDS = 60
HANDS = (JUDGE_DATA / "mahjong" / "sample.in").read_bytes()


def _ask(port: int, method: str, path: str, body: bytes | None = None,
         headers: dict[str, str] | None = None) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=ANSWER_SECONDS)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def _upload(port: int) -> int:
    boundary = "dealer-test"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"hands.in\"\r\n\r\n"
            ).encode() + HANDS + f"\r\n--{boundary}--\r\n".encode()
    return _ask(port, "POST", "/api/jobs", body, {"Content-Type": f"multipart/form-data; boundary={boundary}"})


def _others_are_answered(port: int) -> None:
    for path in ("/", "/api/jobs", "/api/overview"):
        assert _ask(port, "GET", path) == 200, path
    assert _upload(port) == 201


def test_slow_clients_are_dropped_while_the_api_answers(tmp_path: Path) -> None:
    with live_service("embedded", tmp_path, workers=0) as live:
        port = int(live.url.rsplit(":", 1)[1])
        statuses: list[int] = []
        with SlowClients("127.0.0.1", port, reconnect=True).running() as slow:
            slow.add_heads(HEADS)
            slow.add_uploads(UPLOADS)

            def asked() -> set[str]:
                statuses.append(_ask(port, "GET", "/api/jobs"))
                return {kind for kind, _ in slow.ended}

            # Asked again and again until the server has dropped heads and cut uploads off, each opened
            # again at once: the slow clients keep pressing the whole time.
            until(asked, lambda kinds: kinds == {"head", "upload"},
                  "slow heads to be dropped and slow uploads cut off", timeout=300, every=0.5)
            _others_are_answered(port)
            held = [c for c in slow.connections if not c.closed]
            ended = list(slow.ended)
        assert set(statuses) == {200}, statuses
        assert len(held) > HEADS // 2, "the slow clients were not held while the API was asked"
        heads = [answer for kind, answer in ended if kind == "head"]
        assert heads and set(heads) == {b""}, "a slow head was answered instead of dropped"
        uploads = [answer for kind, answer in ended if kind == "upload"]
        assert uploads and all(answer.startswith(b"HTTP/1.1 408") for answer in uploads), \
            {answer[:40] for answer in uploads}
        assert b"bytes a second" in uploads[0]
        _others_are_answered(port)
