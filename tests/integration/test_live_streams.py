"""Live updates fan out (``webui.live``): hundreds of event streams open at once on one web process (gunicorn's
gevent worker) are all served, and go on being written to, while the API answers; a client beyond its share
is refused, and served again once its streams have ended."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from tests.support.paths import JUDGE_DATA
from worker.testing.waiting import until
from worker.config import Settings
from worker.testing.live import live_service
from worker.testing.streams import Streams

pytestmark = [pytest.mark.slow]

#: Streams opened: a third from each of three addresses (three clients, each within its share).
SHARE = next(f.default for f in fields(Settings) if f.name == "live_streams_per_client")
STREAMS = 3 * SHARE
ADDRESSES = ("127.0.0.2", "127.0.0.3", "127.0.0.4")


def test_hundreds_of_streams_are_served_by_one_web_process(tmp_path: Path) -> None:
    with live_service("embedded", tmp_path, workers=0) as live:
        job = live.submit(JUDGE_DATA / "mahjong" / "sample.in", "mahjong")  # no worker: it stays unfinished
        port = int(live.url.rsplit(":", 1)[1])
        with Streams("127.0.0.1", port).running() as streams:
            opened = [streams.open(f"/events/jobs/{job['id']}" if k % 2 else "/events/dashboard?game=mahjong",
                                   source=ADDRESSES[k % 3]) for k in range(STREAMS)]
            until(lambda: sum(s.served for s in opened), lambda served: served == STREAMS,
                  "every stream to be answered with its first events", timeout=300, every=0.5)
            # Each goes on being written to (its figures when they change, else a comment line now and then).
            written = [s.writes for s in opened]
            until(lambda: sum(s.writes > w for s, w in zip(opened, written, strict=True)),
                  lambda moved: moved == STREAMS, "every stream to be written to again", timeout=300, every=0.5)
            assert live.get("/api/jobs")["total"] == 1  # the API answers meanwhile
            assert not any(s.ended for s in opened)

            # A client beyond its share is refused (the page then polls), another client is not.
            assert _answer(streams, ADDRESSES[0]) == 429
            assert _answer(streams, "127.0.0.5") == 200
            for stream in opened[::3]:  # the first client's
                streams.close(stream)
            until(lambda: _answer(streams, ADDRESSES[0]), lambda status: status == 200,
                  "the client's share to be freed as its streams end", timeout=60, every=0.5)


def _answer(streams: Streams, source: str) -> int | None:
    """The status of a dashboard stream opened from ``source``."""
    stream = streams.open("/events/dashboard", source=source)
    return until(lambda: stream.status, lambda status: status is not None, "an answer", timeout=60)
