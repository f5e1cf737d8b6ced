"""Faults with real processes: a killed worker, a restarted broker or database, a web process
that dies mid-upload. Every job must still end ``succeeded`` with each case stored once and
the output identical to a clean run."""

from __future__ import annotations

import http.client
import io
import os
import random
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tests.conftest import JUDGE_DATA
from tests.faults.servers import PrivatePostgres, PrivateRedis
from tests.live import LiveService, live_service
from worker import engines
from worker.db import session_scope
from worker.models import CaseRow
from worker.solving import solve_file

pytestmark = pytest.mark.slow

DECKS = 20_000
#: Short leases and sweeps so that recovery takes seconds, not minutes.
FAST_RECOVERY = {"DEALER_LEASE_SECONDS": "4", "DEALER_STALL_SECONDS": "3", "DEALER_SWEEP_SECONDS": "1",
                 "DEALER_CHUNK_SIZE": "250"}


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """A 20,000-deck 10-20-30 file and its judge output from a clean local run."""
    engine = engines.get("10-20-30")
    rng = random.Random(20_000)
    path = tmp_path_factory.mktemp("faults") / "decks.in"
    path.write_text("".join(engine.generate(rng) + "\n" for _ in range(DECKS)) + "0\n")
    out = io.StringIO()
    with open(path, "rb") as stream:
        solve_file(engine, stream, out)
    return path, out.getvalue().encode()


@pytest.fixture
def servers() -> Iterator[tuple[PrivatePostgres, PrivateRedis]]:
    postgres, redis = PrivatePostgres(), PrivateRedis()
    postgres.start()
    redis.start()
    try:
        yield postgres, redis
    finally:
        redis.stop()
        postgres.destroy()


def check_complete(live: LiveService, job_id: int, expected: bytes) -> None:
    job = live.wait(job_id, timeout=180)
    assert job["status"] == "succeeded", (job, live.logs())
    with session_scope(live.database_url) as session:
        rows = session.scalar(select(func.count()).select_from(CaseRow).where(CaseRow.job_id == job_id))
        distinct = session.scalar(select(func.count(func.distinct(CaseRow.index))).where(CaseRow.job_id == job_id))
    assert rows == distinct == DECKS
    assert job["done"] == DECKS
    assert live.output(job_id) == expected


def wait_for_progress(live: LiveService, job_id: int, at_least: int = 1) -> None:
    live.wait_until(lambda: live.client.job(job_id)["done"] >= at_least, "the job to make progress")


@pytest.mark.parametrize("mode", ["embedded", "production"])
def test_worker_killed_mid_job(mode: str, big_file: tuple[Path, bytes], tmp_path: Path, request) -> None:
    path, expected = big_file
    extra = {}
    if mode == "production":
        postgres, redis = request.getfixturevalue("servers")
        extra = {"database_url": postgres.url, "broker_url": redis.url}
    with live_service(mode, tmp_path, **extra, **FAST_RECOVERY) as live:
        job = live.submit(path, "10-20-30")
        wait_for_progress(live, job["id"], 1000)
        worker = live.workers[0]
        os.killpg(worker.pid, signal.SIGKILL)  # the main process and its pool, mid-task
        worker.wait()
        assert live.client.job(job["id"])["status"] in ("splitting", "solving")
        live.start_worker()
        check_complete(live, job["id"], expected)


def test_redis_restarted_mid_job(big_file: tuple[Path, bytes], servers, tmp_path: Path) -> None:
    path, expected = big_file
    postgres, redis = servers
    with live_service("production", tmp_path, database_url=postgres.url, broker_url=redis.url,
                      **FAST_RECOVERY) as live:
        job = live.submit(path, "10-20-30")
        wait_for_progress(live, job["id"], 1000)
        redis.restart()  # every queued message is gone
        check_complete(live, job["id"], expected)


def test_postgres_restarted_mid_job(big_file: tuple[Path, bytes], servers, tmp_path: Path) -> None:
    path, expected = big_file
    postgres, redis = servers
    with live_service("production", tmp_path, database_url=postgres.url, broker_url=redis.url,
                      **FAST_RECOVERY) as live:
        job = live.submit(path, "10-20-30")
        wait_for_progress(live, job["id"], 1000)
        postgres.stop()
        time.sleep(1)
        connection = http.client.HTTPConnection("127.0.0.1", int(live.url.rsplit(":", 1)[1]), timeout=10)
        connection.request("GET", f"/api/jobs/{job['id']}")
        response = connection.getresponse()
        body = response.read()
        assert response.status == 503, body
        assert b"database unavailable" in body
        time.sleep(2)
        postgres.start()
        check_complete(live, job["id"], expected)
        assert live.get("/api/overview") is not None


def test_web_killed_during_an_upload_leaves_nothing_behind(big_file: tuple[Path, bytes], tmp_path: Path) -> None:
    path, _ = big_file
    with live_service("embedded", tmp_path) as live:
        assert live.web is not None
        port = int(live.url.rsplit(":", 1)[1])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        boundary = "b0undary"
        head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"decks.in\"\r\n"
                "Content-Type: application/octet-stream\r\n\r\n").encode()
        connection.putrequest("POST", "/api/jobs")
        connection.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
        connection.putheader("Content-Length", str(len(head) + path.stat().st_size + 100))
        connection.endheaders()
        connection.send(head + path.read_bytes()[: 1 << 20])
        incoming = live.data_dir / "uploads" / "incoming"
        live.wait_until(lambda: any(incoming.glob("upload-*")), "the partial upload to reach the disk")
        os.killpg(live.web.pid, signal.SIGKILL)
        live.web.wait()
        connection.close()
        live.start_web()
        assert not list(incoming.glob("upload-*"))
        assert live.get("/api/jobs")["total"] == 0
        # and the service takes the next upload as usual
        job = live.submit(JUDGE_DATA / "10-20-30" / "sample.in", "10-20-30")
        assert live.wait(job["id"])["status"] == "succeeded"
