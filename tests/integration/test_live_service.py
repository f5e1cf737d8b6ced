"""The real pipeline end to end: a gunicorn web process, a Celery worker process, a real broker
and database — embedded (SQLite + filesystem broker) and production (PostgreSQL + Redis)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tests.support.paths import JUDGE_DATA, failing
from worker.testing.waiting import until
from worker.broker import CeleryDispatcher
from worker.client import ClientError
from worker.config import Settings
from worker.store.chunks import coverage
from worker.store.models import Chunk
from worker.testing.data import random_judge_file
from worker.testing.live import DEALER, LiveService, arriving

pytestmark = pytest.mark.slow

FILES = [("10-20-30", "random-2000"), ("10-20-30", "repeated-decks"), ("10-20-30", "crlf"),
         ("accordion", "random-2000"), ("accordion", "thirteen-per-line"),
         ("mahjong", "random-2000"), ("mahjong", "crafted")]


@pytest.fixture
def live(shared_live: LiveService) -> LiveService:
    """The session's live service of each mode (tests/support/plugin.py), shared with other modules:
    these tests look only at the jobs they made."""
    return shared_live


def _settings(live: LiveService) -> Settings:
    return Settings.from_env(live.env)


def taken(live: LiveService) -> None:
    """Wait until the broker has handed out every message sent so far."""
    until(lambda: live.get("/api/overview"), lambda overview: overview and overview["queue_depth"] == 0,
          "the broker's queue to be empty")


def test_judge_files_come_out_byte_exact(live: LiveService) -> None:
    jobs = {(game, name): live.submit(JUDGE_DATA / game / f"{name}.in", game)["id"] for game, name in FILES}
    for (game, name), job_id in jobs.items():
        job = live.wait(job_id)
        assert job["status"] == "succeeded", job
        assert live.output(job_id) == (JUDGE_DATA / game / f"{name}.out").read_bytes(), (game, name)


def test_results_come_while_a_big_file_is_still_read(live: LiveService, tmp_path: Path) -> None:
    """The solve follows the upload: with the file's first MiBs sent and the rest held back, its first cases
    are solved and visible, the job still splitting; the counts say how far it is (bytes read, cases read),
    and none is ever negative or shrinks. (Held back, not just sent fast: a file sent at once may be split
    and solved by the time a client looks, however slow or fast the machine.)"""
    path = random_judge_file(tmp_path / "decks.in", "10-20-30", 60_000, 7)
    seen: list[dict[str, Any]] = []
    with arriving(live, path, "10-20-30") as job_id:

        def solving() -> bool:
            seen.append(live.client.job(job_id))
            return seen[-1]["done"] > 0

        live.wait_until(solving, "cases solved while the rest of the file is held back")
        midway = seen[-1]
    assert midway["status"] == "splitting" and midway["sha256"] is None
    assert midway["bytes_read"] < path.stat().st_size
    while (state := live.client.job(job_id))["status"] not in ("succeeded", "failed", "cancelled"):
        seen.append(state)
    assert state["status"] == "succeeded" and state["total"] == state["done"] == 60_000
    assert state["size"] == path.stat().st_size
    assert all(0 <= s["done"] <= s["total"] and s["bytes_read"] <= s["size"] and 0 <= s["progress"] <= 1
               for s in seen)
    assert [s["total"] for s in seen] == sorted(s["total"] for s in seen)
    assert [s["done"] for s in seen] == sorted(s["done"] for s in seen)
    overview = live.get("/api/overview")
    assert overview["queued_cases"] >= 0


def test_game_is_recognised_without_being_named(live: LiveService) -> None:
    job = live.submit(JUDGE_DATA / "mahjong" / "sample.in")
    assert job["game"] == "mahjong"
    assert live.wait(job["id"])["status"] == "succeeded"


def test_a_malformed_start_is_refused_with_the_parser_message(live: LiveService, tmp_path: Path) -> None:
    bad = tmp_path / "bad.in"
    bad.write_bytes(b"2 6 5 10 10 4 10 10 10 4 5 10 4 11 10\n0\n")
    jobs = live.get("/api/jobs")["total"]
    with pytest.raises(ClientError, match='400 line 1, column 33: "11" is not a card value \\(1-10\\)'):
        live.submit(bad, "10-20-30")
    assert live.get("/api/jobs")["total"] == jobs


def test_a_malformed_line_past_the_start_fails_its_job_with_the_parser_message(live: LiveService,
                                                                                tmp_path: Path) -> None:
    data, line = failing("10-20-30")
    bad = tmp_path / "bad.in"
    bad.write_bytes(data)
    job = live.wait(live.submit(bad, "10-20-30")["id"])
    assert job["status"] == "failed"
    assert job["error"].startswith(f"line {line}, column 1:"), job["error"]


def test_chunks_delivered_twice_store_each_case_once(live: LiveService) -> None:
    settings = _settings(live)
    dispatcher = CeleryDispatcher.for_settings(settings)
    job = live.submit(JUDGE_DATA / "accordion" / "random-2000.in", "accordion")
    # the split may still be running: wait for all its chunks, then send every one again at once
    live.wait_until(lambda: live.client.job(job["id"])["total_known"], "the split to end")
    with live.db.session() as session:
        ids = session.scalars(select(Chunk.id).where(Chunk.job_id == job["id"])).all()
    dispatcher.solve(ids + ids)
    assert live.wait(job["id"])["status"] == "succeeded"
    dispatcher.solve(ids)
    # Once the broker has handed them out, each is refused at its claim (its chunk is done).
    taken(live)
    with live.db.session() as session:
        assert coverage(session, job["id"]) == (2000, 2000)
    assert live.client.job(job["id"])["done"] == 2000


def test_cancel_stops_a_job(live: LiveService, tmp_path: Path) -> None:
    """Cancelled with cases solved, its file's end still held back (so that it is cancelled before it could
    end, on any machine): its figures are final, and the rest of its file, once sent, is taken all the same."""
    big = random_judge_file(tmp_path / "big.in", "10-20-30", 60_000, 5)
    with arriving(live, big, "10-20-30") as job_id:
        live.wait_until(lambda: live.client.job(job_id)["done"] > 0, "the first results")
        cancelled = live.client._json("POST", f"/api/jobs/{job_id}/cancel")
        assert cancelled["status"] == "cancelled" and 0 < cancelled["done"] < 60_000
    # The cancel locked the job's chunks and then the job, so its figures are final: a task in flight
    # finds its chunk cancelled and stores nothing, and so does every message still queued, once taken.
    taken(live)
    after = live.client.job(job_id)
    assert after["status"] == "cancelled" and after["done"] == cancelled["done"], (cancelled, after)
    assert after["size"] == big.stat().st_size and after["sha256"] is not None


def test_rerun_makes_a_new_job(live: LiveService) -> None:
    first = live.wait(live.submit(JUDGE_DATA / "10-20-30" / "sample.in", "10-20-30")["id"])
    again = live.client._json("POST", f"/api/jobs/{first['id']}/rerun")
    assert again["rerun_of"] == first["id"]
    done = live.wait(again["id"])
    assert done["status"] == "succeeded" and done["cache_hits"] == 3
    assert live.output(again["id"]) == (JUDGE_DATA / "10-20-30" / "sample.out").read_bytes()


def test_dealer_submit_wait_prints_the_judge_output(live: LiveService) -> None:
    done = subprocess.run([*DEALER, "submit", str(JUDGE_DATA / "mahjong" / "many-waits.in"), "--game", "mahjong",
                           "--url", live.url, "--wait", "--no-progress"],
                          env=live.env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (JUDGE_DATA / "mahjong" / "many-waits.out").read_bytes()
    assert done.stderr.decode().startswith("job ")
