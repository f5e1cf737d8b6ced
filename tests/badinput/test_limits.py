"""Limits, each configurable (DEALER_* variables) with a sane default: upload size, line length,
cases per job and unfinished jobs per client."""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.support.http import assert_healthy, finished
from tests.support.http import post_file as post
from tests.support.inline import InlineDispatcher
from tests.support.jobs import stored_uploads, submit
from tests.support.paths import JUDGE_DATA
from tests.support.plugin import sqlite_settings
from worker.config import Settings
from worker.engines.reading import InputError
from worker.jobs.reading import LineLimitReader
from worker.jobs.service import JobService
from worker.jobs.split import split_job
from worker.store.database import Database
from worker.store.uploads import BLOCK_BYTES, UploadReader

FIFTY_MB = 50 * 10**6


def make_app(db: Database, settings: Settings, dispatcher: Any = None, **limits: Any) -> Any:
    from webui.app import create_app

    settings = replace(settings, **limits)
    return create_app(settings, dispatcher or InlineDispatcher(db, settings), config={"TESTING": True}, db=db)


# --- settings ------------------------------------------------------------------------------------


def test_limits_have_sane_defaults_and_come_from_the_environment() -> None:
    defaults = Settings.from_env({})
    assert defaults.max_upload_bytes == 4 << 30
    assert defaults.max_line_bytes == 1 << 20
    assert defaults.max_cases_per_job == 10_000_000
    assert defaults.max_active_jobs_per_client == 20
    custom = Settings.from_env({"DEALER_MAX_UPLOAD_BYTES": "1000", "DEALER_MAX_LINE_BYTES": "4096",
                                "DEALER_MAX_CASES_PER_JOB": "5", "DEALER_MAX_ACTIVE_JOBS_PER_CLIENT": "0"})
    assert (custom.max_upload_bytes, custom.max_line_bytes, custom.max_cases_per_job,
            custom.max_active_jobs_per_client) == (1000, 4096, 5, 0)
    with pytest.raises(ValueError, match="DEALER_MAX_LINE_BYTES='lots': expected a whole number"):
        Settings.from_env({"DEALER_MAX_LINE_BYTES": "lots"})


# --- the line-length reader ----------------------------------------------------------------------


@pytest.mark.parametrize("read_size", [1, 3, 7, 64, 1 << 16])
def test_the_line_reader_passes_short_lines_and_names_the_first_long_one(read_size: int) -> None:
    data = b"1234\n\n12\r\n1234"
    reader = LineLimitReader(io.BytesIO(data), 4)
    assert b"".join(iter(lambda: reader.read(read_size), b"")) == data
    long = b"1234\n12345678\n1\n"
    reader = LineLimitReader(io.BytesIO(long), 4)
    with pytest.raises(InputError) as caught:
        while reader.read(read_size):
            pass
    assert str(caught.value) == "line 2: the line is longer than the limit of 4 bytes"
    assert caught.value.line == 2


def test_the_line_reader_finds_a_long_line_inside_one_big_read() -> None:
    reader = LineLimitReader(io.BytesIO(b"1\n22\n" + b"3" * 10 + b"\n4\n"), 4)
    with pytest.raises(InputError, match="^line 3: "):
        reader.read()


# --- a 50 MB single line, and the line limit ------------------------------------------------------


def _one_line(game: str) -> bytes:
    """A 50 MB file whose first line never ends.

    10-20-30: its decks all on one line, as its judge files may be written. Accordion: one
    deck, then spaces (decks on one line would do too, but its reader takes a minute over
    1 MiB of them: see test_fuzz.py). Mahjong, one hand per line: a hand, then spaces.
    """
    if game == "mahjong":
        return b"1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA" + b" " * FIFTY_MB + b"\n0\n"
    if game == "accordion":
        return (JUDGE_DATA / game / "sample.in").read_bytes().split(b"\n")[0] + b" " * FIFTY_MB + b"\n#\n"
    cards = (JUDGE_DATA / game / "sample.in").read_bytes().split()[:52]
    deck = b" ".join(cards) + b" "
    return deck * (FIFTY_MB // len(deck) + 1) + b"\n" + (b"0" if game == "10-20-30" else b"#") + b"\n"


@pytest.fixture
def one_db_settings(tmp_path: Path) -> Settings:
    """SQLite only: what is tested here is the reading, not the database."""
    return sqlite_settings(tmp_path, chunk_size=500)


@pytest.fixture
def one_db(one_db_settings: Settings) -> Iterator[Database]:
    database = Database(one_db_settings)
    yield database
    database.close()


@pytest.mark.slow
@pytest.mark.parametrize("game", ["10-20-30", "accordion", "mahjong"])
def test_a_50_mb_single_line_fails_at_the_line_limit(one_db: Database, one_db_settings: Settings, game: str) -> None:
    """An upload is refused at the limit as it arrives (tests/badinput/test_screen.py); one stored without
    the screen (before it was built) is held to it by the split all the same, which stops reading at the
    limit (1 MiB), fails the job naming the line, keeps nothing."""
    dispatcher = InlineDispatcher(one_db, one_db_settings, immediate=False)
    client = make_app(one_db, one_db_settings, dispatcher).test_client()
    data = _one_line(game)
    assert len(data) > FIFTY_MB
    assert post(client, data, game, "one-line.in").get_json() == {
        "error": "line 1: the line is longer than the limit of 1 MiB"}
    job_id = submit(JobService(one_db, one_db_settings, dispatcher), data, game, "one-line.in").id
    del data
    read: list[int] = []
    reading = UploadReader.read

    def counted(reader: UploadReader, size: int = -1) -> bytes:
        data = reading(reader, size)
        read.append(len(data))
        return data

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(UploadReader, "read", counted)
        split_job(one_db, one_db_settings, job_id, dispatcher)  # what a worker does; solves stay queued
    # It stopped at the limit: of the 50 MB stored, the line's limit and what the block it ends in holds.
    assert sum(read) <= one_db_settings.max_line_bytes + BLOCK_BYTES < FIFTY_MB // 10
    job = client.get(f"/api/jobs/{job_id}").get_json()
    assert job["status"] == "failed", job
    assert job["error"] == "line 1: the line is longer than the limit of 1 MiB"
    dispatcher.drain()  # the chunks the split had handed out find their job failed
    assert client.get(f"/api/jobs/{job_id}/cases").get_json()["total"] == 0
    dispatcher.immediate = True
    assert_healthy(client)


def test_a_50_mb_token_is_refused_at_once(one_db: Database, one_db_settings: Settings) -> None:
    app = make_app(one_db, one_db_settings)
    client = app.test_client()
    response = post(client, b"7" * FIFTY_MB + b"\n0\n", "10-20-30", "token.in")
    assert response.status_code == 400
    assert response.get_json() == {"error": "line 1, column 1: a token longer than 64 characters"}
    assert stored_uploads(one_db) == []
    assert_healthy(client)


def test_the_line_limit_is_configurable(db: Database, settings: Settings) -> None:
    client = make_app(db, settings, max_line_bytes=200).test_client()
    sample = (JUDGE_DATA / "10-20-30" / "sample.in").read_bytes()
    assert finished(client, post(client, sample, "10-20-30"))["status"] == "succeeded"  # lines of < 100 bytes
    joined = sample.replace(b"\n", b" ", 1)  # the first two lines as one of 137 bytes
    assert finished(client, post(client, joined, "10-20-30"))["status"] == "succeeded"
    long = sample.replace(b"\n", b" ", 3)  # ... and then of 268 bytes
    refused = post(client, long, "10-20-30")
    assert refused.status_code == 400
    assert refused.get_json() == {"error": "line 1: the line is longer than the limit of 200 bytes"}
    off = make_app(db, settings, max_line_bytes=0).test_client()
    assert finished(off, post(off, long, "10-20-30"))["status"] == "succeeded"


# --- cases per job -------------------------------------------------------------------------------


@pytest.mark.parametrize("game, unit", [("10-20-30", "decks"), ("mahjong", "hands")])
def test_a_file_with_more_cases_than_the_limit_fails(db: Database, settings: Settings, game: str, unit: str) -> None:
    client = make_app(db, settings, max_cases_per_job=20).test_client()
    job = finished(client, post(client, (JUDGE_DATA / game / "random-2000.in").read_bytes(), game))
    assert job["status"] == "failed"
    assert job["error"] == f"the file has more than 20 {unit} (the limit per job)"
    assert job["total"] == job["done"] == 0
    assert client.get(f"/api/jobs/{job['id']}/cases").get_json()["total"] == 0  # chunks solved early are gone
    assert_healthy(client)


def test_a_file_with_as_many_cases_as_the_limit_is_solved(db: Database, settings: Settings) -> None:
    client = make_app(db, settings, max_cases_per_job=3).test_client()
    job = finished(client, post(client, (JUDGE_DATA / "10-20-30" / "sample.in").read_bytes(), "10-20-30"))
    assert job["status"] == "succeeded" and job["done"] == 3
    many = finished(client, post(client, (JUDGE_DATA / "10-20-30" / "wins.in").read_bytes(), "10-20-30"))
    assert many["error"] == "the file has more than 3 decks (the limit per job)"


# --- upload size ---------------------------------------------------------------------------------


def test_an_upload_over_the_size_limit_is_refused_and_not_kept(db: Database, settings: Settings) -> None:
    client = make_app(db, settings, max_upload_bytes=300).test_client()
    response = post(client, (JUDGE_DATA / "10-20-30" / "sample.in").read_bytes(), "10-20-30")
    assert response.status_code == 413
    assert response.get_json() == {"error": "the upload is larger than the limit of 300 bytes"}
    assert stored_uploads(db) == []
    assert_healthy(client)


# --- unfinished jobs per client ------------------------------------------------------------------

HANDS = (JUDGE_DATA / "mahjong" / "sample.in").read_bytes()


def test_a_client_with_too_many_unfinished_jobs_is_told_to_wait(db: Database, settings: Settings) -> None:
    dispatcher = InlineDispatcher(db, settings, immediate=False)  # jobs stay queued until drained
    client = make_app(db, settings, dispatcher, max_active_jobs_per_client=2).test_client()
    first, second = (post(client, HANDS, "mahjong") for _ in range(2))
    assert first.status_code == second.status_code == 201
    third = post(client, HANDS, "mahjong")
    assert third.status_code == 429 and third.headers["Retry-After"] == "30"
    assert third.get_json() == {"error": "you already have 2 jobs queued or running, the limit per client; "
                                         "wait for one to finish (or cancel one), then try again"}
    assert client.get("/api/jobs").get_json()["total"] == 2  # nothing was made of the third
    job_id = first.get_json()["id"]
    assert client.post(f"/api/jobs/{job_id}/rerun").status_code == 429  # a rerun is a new job too
    # Another address is another client.
    assert post(client, HANDS, "mahjong", environ_base={"REMOTE_ADDR": "10.9.8.7"}).status_code == 201
    # A cancelled job no longer counts; nor does a finished one.
    assert client.post(f"/api/jobs/{job_id}/cancel").status_code == 200
    assert post(client, HANDS, "mahjong").status_code == 201
    assert post(client, HANDS, "mahjong").status_code == 429
    dispatcher.drain()
    assert all(j["status"] in ("succeeded", "cancelled") for j in client.get("/api/jobs").get_json()["items"])
    assert post(client, HANDS, "mahjong").status_code == 201


def test_the_upload_page_says_so_too(db: Database, settings: Settings) -> None:
    dispatcher = InlineDispatcher(db, settings, immediate=False)
    client = make_app(db, settings, dispatcher, max_active_jobs_per_client=1).test_client()
    assert post(client, HANDS, "mahjong").status_code == 201
    response = client.post("/upload", data={"file": (io.BytesIO(HANDS), "hands.in")},
                           content_type="multipart/form-data")
    assert response.status_code == 429 and response.mimetype == "text/html"
    assert "you already have 1 job queued or running, the limit per client" in response.get_data(as_text=True)


def test_no_limit_on_unfinished_jobs_when_it_is_0(db: Database, settings: Settings) -> None:
    dispatcher = InlineDispatcher(db, settings, immediate=False)
    client = make_app(db, settings, dispatcher, max_active_jobs_per_client=0).test_client()
    assert all(post(client, HANDS, "mahjong").status_code == 201 for _ in range(25))


def test_behind_a_proxy_the_client_is_the_forwarded_address(db: Database, settings: Settings) -> None:
    dispatcher = InlineDispatcher(db, settings, immediate=False)
    client = make_app(db, settings, dispatcher, max_active_jobs_per_client=1, proxy_hops=1).test_client()
    assert post(client, HANDS, "mahjong", headers={"X-Forwarded-For": "203.0.113.1"}).status_code == 201
    assert post(client, HANDS, "mahjong", headers={"X-Forwarded-For": "203.0.113.1"}).status_code == 429
    assert post(client, HANDS, "mahjong", headers={"X-Forwarded-For": "203.0.113.2"}).status_code == 201
    direct = make_app(db, settings, dispatcher, max_active_jobs_per_client=1).test_client()  # no proxy trusted
    assert post(direct, HANDS, "mahjong", headers={"X-Forwarded-For": "203.0.113.3"}).status_code == 201
    assert post(direct, HANDS, "mahjong", headers={"X-Forwarded-For": "203.0.113.4"}).status_code == 429


def test_the_job_limit_holds_under_concurrent_uploads(db: Database, settings: Settings) -> None:
    """Uploads racing each other cannot slip past the limit (a lock per client on PostgreSQL)."""
    from concurrent.futures import ThreadPoolExecutor

    dispatcher = InlineDispatcher(db, settings, immediate=False)
    app = make_app(db, settings, dispatcher, max_active_jobs_per_client=3)
    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(lambda _: post(app.test_client(), HANDS, "mahjong").status_code, range(8)))
    assert sorted(codes) == [201] * 3 + [429] * 5
