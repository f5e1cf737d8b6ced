"""Slow clients cannot starve ``dealer web`` (``webui.pacing``): while 32 uploads send their body a byte a
second, the dashboard, the API and another upload are answered; past its bounded share of threads an
upload is refused at once (503, Retry-After); and a client slower than the least pace is cut off (408)."""

from __future__ import annotations

import http.client
from pathlib import Path

import pytest

from tests.support.paths import JUDGE_DATA
from tests.support.waiting import until
from webui.pacing import BODIES, GRACE_SECONDS
from worker.testing.live import live_service
from worker.testing.slow import SlowClients

pytestmark = [pytest.mark.slow]

SLOW = 32
#: What one request may take here: generous on a loaded machine, yet well inside the slow clients'
#: time (they are cut off only after ``GRACE_SECONDS``), which the test checks they still have.
ANSWER_SECONDS = GRACE_SECONDS / 2
HANDS = (JUDGE_DATA / "mahjong" / "sample.in").read_bytes()


def _ask(port: int, method: str, path: str, body: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=ANSWER_SECONDS)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        response.read()
        return response.status, dict(response.getheaders())
    finally:
        connection.close()


def _upload(port: int) -> tuple[int, dict[str, str]]:
    boundary = "dealer-test"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"hands.in\"\r\n\r\n"
            ).encode() + HANDS + f"\r\n--{boundary}--\r\n".encode()
    return _ask(port, "POST", "/api/jobs", body, {"Content-Type": f"multipart/form-data; boundary={boundary}"})


def _others_are_answered(port: int) -> None:
    for path in ("/", "/api/jobs", "/api/overview", "/healthz"):
        status, _ = _ask(port, "GET", path)
        assert status in (200, 503 if path == "/healthz" else 200), (path, status)  # /healthz: no worker here
    status, _ = _upload(port)
    assert status == 201


def test_slow_uploads_cannot_starve_the_web_process(tmp_path: Path) -> None:
    with live_service("embedded", tmp_path, workers=0) as live:
        port = int(live.url.rsplit(":", 1)[1])
        with SlowClients("127.0.0.1", port).running() as slow:
            slow.add(SLOW)
            # Every slow upload is being read by the server (a thread each) before the others ask.
            until(lambda: slow.uploads, lambda uploads: min(u.sent for u in uploads) >= 2,
                  "the slow uploads to have sent a few bytes each")
            _others_are_answered(port)
            assert slow.answered() == [], "a slow upload was answered before the others were served"

            # Past the bodies a process reads at once, an upload is refused at once, not queued.
            slow.add(BODIES - SLOW)  # with these, every slot is held
            until(lambda: slow.uploads, lambda uploads: min(u.sent for u in uploads) >= 2,
                  "the added slow uploads to have sent a few bytes each")
            status, headers = _upload(port)
            assert status == 503 and int(headers["Retry-After"]) > 0
            status, _ = _ask(port, "GET", "/api/jobs")
            assert status == 200
            assert slow.answered() == [], "a slow upload was answered before the others were served"

            # Slower than the least pace, every one of them is cut off with a 408, and the slots come back.
            answers = until(slow.answered, lambda answered: len(answered) == BODIES,
                            "every slow upload to be cut off", GRACE_SECONDS * 6)
            assert all(answer.startswith(b"HTTP/1.1 408") for answer in answers), {a[:40] for a in answers}
            assert b"bytes a second" in answers[0]
        _others_are_answered(port)
