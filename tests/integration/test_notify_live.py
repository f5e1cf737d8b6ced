"""A job's callback from the real service (gunicorn, a Celery worker, the embedded broker and database):
the worker that ends the job sends ``dealer.notify``, and a receiver on this machine gets the signed body."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.support.paths import JUDGE_DATA
from tests.support.receiver import Receiver, receiving
from worker.testing.waiting import until
from tests.web.test_notify import SECRET, verifies
from worker.testing.live import LiveService, live_service

pytestmark = pytest.mark.slow

INPUT = JUDGE_DATA / "10-20-30" / "random-2000.in"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """A service of its own: one that calls receivers on this machine (``DEALER_NOTIFY_PRIVATE``)."""
    with live_service("embedded", Path(tmp_path_factory.mktemp("notify")), concurrency=1,
                      DEALER_NOTIFY_PRIVATE="true") as service:
        yield service


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as found:
        yield found


def test_a_job_tells_its_end_from_the_worker(live: LiveService, receiver: Receiver) -> None:
    with INPUT.open("rb") as stream:
        made = requests.post(f"{live.url}/api/jobs", files={"file": ("decks.in", stream)},
                             data={"game": "10-20-30", "notify_url": receiver.url, "notify_secret": SECRET},
                             timeout=60)
    assert made.status_code == 201, made.text
    job_id = made.json()["id"]
    until(lambda: len(receiver.calls), bool, "the job's callback", timeout=120)
    headers, body = receiver.calls[0]
    assert verifies(headers, body, SECRET)
    sent = json.loads(body)
    job = requests.get(f"{live.url}/api/jobs/{job_id}", timeout=30).json()
    assert sent["kind"] == "job" and sent["id"] == job_id and sent["status"] == job["status"] == "succeeded"
    assert sent["counts"] == job["counts"] and sent["total"] == 2000 and sent["url"] == f"{live.url}/jobs/{job_id}"
    shown = until(lambda: requests.get(f"{live.url}/api/jobs/{job_id}", timeout=30).json()["notify"],
                  lambda notify: notify["state"] == "delivered", "the callback recorded as delivered")
    assert shown["attempts"] == 1 and shown["last_status"] == 200
