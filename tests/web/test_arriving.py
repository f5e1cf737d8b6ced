"""A job is made as its file's first MiB is stored and split while the rest arrives (``worker/jobs/arriving.py``):
the solve starts before the upload ends, and a file refused or abandoned half-way leaves no job."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, update

from tests.support.inline import InlineDispatcher
from tests.support.jobs import output, submit
from worker.testing.waiting import until
from tests.web.test_refused_early import BOUNDARY, CountingBody, post_body
from webui.app import create_app
from worker import work
from worker.config import Settings
from worker.jobs.arriving import ArrivingJob, withdraw_abandoned
from worker.jobs.queries import JobQueries
from worker.jobs.service import JobService
from worker.jobs.sweep import sweep
from worker.states import ChunkStatus, JobStatus, UploadState
from worker.store.database import Database
from worker.store.models import ARRIVING, Chunk, Job, Upload, utcnow
from worker.store.uploads import BLOCK_BYTES, UploadGone, UploadReader, UploadStalled, UploadWriter
from worker.testing.data import random_judge_file

DECKS = 40_000  # about 4.5 MiB of 10-20-30 decks: the first MiB stored leaves several to come


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Chunks sized as the service sizes them (7 cases a chunk would make thousands of a few MiB)."""
    return replace(settings, chunk_size=0)


@pytest.fixture
def decks(tmp_path: Path) -> bytes:
    return random_judge_file(tmp_path / "decks.in", "10-20-30", DECKS, 11).read_bytes()


def body_of(data: bytes, before: bytes = b"", after: bytes = b"", at: int = -1,
            then: Callable[[], None] | None = None) -> CountingBody:
    """A multipart body of ``data`` between parts ``before`` and ``after`` (:func:`part`) that calls ``then``
    once, when the server reads past byte ``at`` of the file."""
    called = []

    def fill(start: int, count: int) -> bytes:
        if then is not None and not called and start + count > at >= 0:
            called.append(True)
            then()
        return data[start:start + count]

    body = CountingBody("file", len(data), fill, extra=before)
    body.tail = b"\r\n" + after + f"--{BOUNDARY}--\r\n".encode()
    body.length = len(before) + len(body.head) + len(data) + len(body.tail)
    return body


def part(name: str, value: bytes, filename: str | None = None) -> bytes:
    named = f"; filename=\"{filename}\"" if filename else ""
    return (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"{named}\r\n\r\n").encode() \
        + value + b"\r\n"


def jobs(db: Database) -> list[Job]:
    with db.session(write=False) as session:
        return list(session.scalars(select(Job).order_by(Job.id)))


@pytest.mark.slow
def test_the_solve_starts_while_the_file_arrives(client: Any, db: Database, settings: Settings, queries: JobQueries,
                                                 service: JobService, decks: bytes) -> None:
    seen: list[tuple[str, str, int, int]] = []

    def midway() -> None:  # the server has read 3 MiB of the file: its request has not ended
        (job,) = jobs(db)
        with db.session(write=False) as session:
            done = session.scalar(select(func.count()).select_from(Chunk).where(
                Chunk.job_id == job.id, Chunk.status == ChunkStatus.DONE)) or 0
            upload = session.get(Upload, job.upload_id)
            assert upload is not None
            seen.append((job.sha256, upload.state, job.size, done))

    response = post_body(client, "/api/jobs", body_of(decks, at=3 << 20, then=midway))
    assert response.status_code == 201, response.get_json()
    # Midway the job was made, its file still arriving, and chunks of its first MiB were solved already.
    ((sha256, state, size, done),) = seen
    assert (sha256, state) == (ARRIVING, UploadState.RECEIVING) and done > 0
    assert len(decks) < size < len(decks) + 1024  # the request's length, until the file is whole
    job = queries.job(response.get_json()["id"])
    assert job.status == JobStatus.SUCCEEDED and job.total == job.done == DECKS
    assert job.size == len(decks) and job.sha256 is not None and len(job.sha256) == 64
    # Byte for byte the judge output of the same file made into a job once whole.
    whole = submit(service, decks, "10-20-30")
    assert output(queries, job.id) == output(queries, whole.id)


@pytest.mark.slow
def test_the_game_chosen_decides(client: Any, db: Database, settings: Settings, decks: bytes) -> None:
    # Chosen after the file, so the job was made of what the content says: another game is refused as for
    # a whole file, and the job goes.
    refused = post_body(client, "/api/jobs", body_of(decks, after=part("game", b"mahjong")))
    assert refused.status_code == 400 and "not a mahjong file" in refused.get_json()["error"], refused.get_json()
    assert client.get("/api/jobs").get_json()["total"] == 0
    # The same game, chosen after or before: the job made while the file arrived is the one answered.
    for body in (body_of(decks, after=part("game", b"10-20-30")), body_of(decks, before=part("game", b"10-20-30"))):
        made = post_body(client, "/api/jobs", body).get_json()
        assert made["game"] == "10-20-30" and made["status"] in ("splitting", "solving", "succeeded")
        assert [job.id for job in jobs(db) if job.deleted_at is None][-1] == made["id"]
    assert client.get("/api/jobs").get_json()["total"] == 2


@pytest.mark.slow
def test_an_output_to_check_comes_with_a_job_made_while_its_file_arrived(client: Any, service: JobService,
                                                                         queries: JobQueries, decks: bytes) -> None:
    expected = output(queries, submit(service, decks, "10-20-30").id)
    job = post_body(client, "/api/jobs", body_of(decks, after=part("expected", expected, "out.txt"))).get_json()
    assert len(job["checks"]) == 1, job
    check = client.get(f"/api/checks/{job['checks'][0]}").get_json()
    assert check["status"] == "done" and check["verdict"] == "accepted", check


def test_a_file_refused_half_way_leaves_no_job(client: Any, db: Database, settings: Settings, decks: bytes) -> None:
    bad = decks[:3 << 20] + b"\x00" + decks[3 << 20:]
    response = post_body(client, "/api/jobs", body_of(bad))
    assert response.status_code == 400 and "byte 0x00" in response.get_json()["error"]
    (job,) = jobs(db)  # made from the first MiB, withdrawn with the file
    assert job.deleted_at is not None and job.status == JobStatus.CANCELLED and job.upload_id is None
    assert client.get("/api/jobs").get_json()["total"] == 0
    assert client.get(f"/api/jobs/{job.id}").status_code == 404
    work.purge(db, settings)
    assert jobs(db) == []


def test_a_split_follows_the_file_as_it_is_written(db: Database, settings: Settings, queries: JobQueries, decks: bytes) -> None:
    """A worker's split on another thread reads the blocks while the web's writer stores them: chunks are
    stored before the file is whole."""
    dispatcher = InlineDispatcher(db, settings, immediate=False)
    service = JobService(db, replace(settings, split_patience_seconds=60), dispatcher)
    writer = UploadWriter(service.db, settings.max_upload_bytes)
    writer.follower = arriving = ArrivingJob(service, "decks.in", None, len(decks))
    writer.write(decks[:2 << 20])
    assert arriving.job is not None and dispatcher.queue.popleft() == ("split", arriving.job.id)
    job_id = arriving.job.id
    split = threading.Thread(target=work.split, args=(service.db, service.settings, job_id, dispatcher))
    split.start()
    try:
        for at in range(2 << 20, len(decks), BLOCK_BYTES):
            before = chunks_of(db, job_id)
            writer.write(decks[at:at + BLOCK_BYTES])
            # Each block stored is read by the split while the next is not written yet.
            until(lambda seen=before: chunks_of(db, job_id) > seen or not split.is_alive(), bool,
                  "the split to store the block's chunks", every=0.01)
        assert split.is_alive()  # still waiting for the file's end
        writer.commit()
        view = arriving.arrived()
        assert view.sha256 is not None
    finally:
        split.join(30)
    dispatcher.drain()
    job = queries.job(arriving.job.id)
    assert job.status == JobStatus.SUCCEEDED and job.total == DECKS and job.size == len(decks)


def test_a_split_lets_a_slow_file_go_and_its_end_sends_it_again(db: Database, settings: Settings, queries: JobQueries,
                                                                decks: bytes) -> None:
    dispatcher = InlineDispatcher(db, settings, immediate=False)
    service = JobService(db, replace(settings, split_patience_seconds=0.05), dispatcher)
    writer = UploadWriter(service.db, settings.max_upload_bytes)
    writer.follower = arriving = ArrivingJob(service, "decks.in", None, len(decks))
    writer.write(decks[:2 << 20])
    assert arriving.job is not None
    dispatcher.drain()  # the split reads the first MiB, waits for the rest in vain and lets the job go
    with db.session(write=False) as session:
        job = session.get(Job, arriving.job.id)
        assert job is not None and job.status == JobStatus.SPLITTING and job.lease_until is None
        assert job.splitter is None and job.bytes_read > 0
    # The sweep leaves it be (no split could read on) ...
    assert sweep(db, service.settings, dispatcher, queue_empty=True, now=utcnow() + timedelta(hours=1))["splits"] == 0
    # ... and the file's end sends it again.
    writer.write(decks[2 << 20:])
    writer.commit()
    arriving.arrived()
    assert ("split", arriving.job.id) in dispatcher.queue
    dispatcher.drain()
    done = queries.job(arriving.job.id)
    assert done.status == JobStatus.SUCCEEDED and done.total == done.done == DECKS


def test_a_job_whose_web_process_died_is_withdrawn(db: Database, settings: Settings, decks: bytes) -> None:
    dispatcher = InlineDispatcher(db, settings, immediate=False)
    service = JobService(db, settings, dispatcher)
    writer = UploadWriter(service.db, settings.max_upload_bytes)
    writer.follower = arriving = ArrivingJob(service, "decks.in", None, len(decks))
    writer.write(decks[:2 << 20])
    assert arriving.job is not None
    with db.session() as session:  # written by a process of this host now gone
        session.execute(update(Upload).values(receiver=f"{socket.gethostname()}:999999999"))
    assert withdraw_abandoned(service.db) == 1
    (job,) = jobs(db)
    assert job.deleted_at is not None and job.status == JobStatus.CANCELLED
    dispatcher.drain()  # its split, sent before, finds nothing to do
    assert chunks_of(db, job.id) == 0


def test_a_reader_of_an_arriving_upload_waits_then_says_why_it_stops(db: Database, settings: Settings) -> None:
    writer = UploadWriter(db, 1 << 30)
    writer.write(b"x" * (BLOCK_BYTES + 1))  # one block stored, a byte waiting for the next
    assert writer.upload_id is not None
    with pytest.raises(FileNotFoundError):
        UploadReader(db, writer.upload_id)  # only a patient reader reads an upload still arriving
    reader = UploadReader(db, writer.upload_id, patience=0.05)
    assert reader.read(BLOCK_BYTES) == b"x" * BLOCK_BYTES
    with pytest.raises(UploadStalled):
        reader.read(1)
    writer.discard()
    with pytest.raises(UploadGone):
        reader.read(1)


def chunks_of(db: Database, job_id: int) -> int:
    with db.session(write=False) as session:
        return session.scalar(select(func.count()).select_from(Chunk).where(Chunk.job_id == job_id)) or 0


@pytest.mark.slow
def test_a_file_that_starts_as_one_solved_before_is_copied_once_whole(db: Database, settings: Settings, queries: JobQueries,
                                                                      decks: bytes) -> None:
    cached = replace(settings, result_cache=True)
    client = create_app(cached, InlineDispatcher(db, cached), config={"TESTING": True}, db=db).test_client()
    first = post_body(client, "/api/jobs", body_of(decks)).get_json()
    assert queries.job(first["id"]).cache_hits == 0
    # Sent again, it starts as the first did: its job is made once the file is whole, and copied.
    again = queries.job(post_body(client, "/api/jobs", body_of(decks)).get_json()["id"])
    assert again.status == JobStatus.SUCCEEDED and again.cache_hits == again.total == DECKS
    assert output(queries, again.id) == output(queries, first["id"])
    # One that starts the same and then differs is solved, once whole.
    assert decks.endswith(b"\n0\n")
    other = decks[:-2] + b" ".join(decks.split()[:52]) + b"\n0\n"  # one deck more, before the end
    third = queries.job(post_body(client, "/api/jobs", body_of(other)).get_json()["id"])
    assert third.status == JobStatus.SUCCEEDED and third.cache_hits == 0 and third.total == DECKS + 1
