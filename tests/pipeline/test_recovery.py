"""Recovery follows liveness: what a worker held is handed out again seconds after its heartbeat
stops, long before any lease runs out; a job that stalls with an empty queue is sent again whole,
running chunks included; a job that makes no progress says so instead of guessing a time left."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlalchemy.exc import OperationalError

from tests.support import jobs
from tests.support.flaky import FlakyBroker
from tests.support.jobs import output, submit
from tests.support.paths import JUDGE_DATA
from worker import engines
from worker.jobs import lifecycle, split
from worker.jobs.dispatch import owner, process_name
from worker.jobs.service import JobService
from worker.jobs.sweep import sweep
from worker.solving import solve_file
from worker.states import ChunkStatus
from worker.store.chunks import coverage
from worker.store.database import Database
from worker.store.models import Chunk, Job, WorkerRow, utcnow

#: 60 decks: nine chunks of the tests' seven cases.
DECKS = b"".join((JUDGE_DATA / "accordion" / "random-2000.in").read_bytes().splitlines(keepends=True)[:120]) + b"#\n"
#: A pool process of a worker on another host: ``host:worker pid:process pid``.
ELSEWHERE = "elsewhere:4242:4243"


def split_only(service: Any, settings: Any, dispatcher: Any) -> tuple[int, list[int]]:
    return jobs.split_only(service, settings, dispatcher, DECKS)


def claim(db: Database, settings: Any, chunk_id: int, worker: str = ELSEWHERE) -> None:
    """``worker`` takes the chunk (and then says nothing more), with the shipped lease."""
    with db.transaction() as connection:
        lifecycle.claim_chunk(connection, chunk_id, worker, utcnow() + timedelta(seconds=settings.lease_seconds))


def heartbeat(db: Database, name: str, when: Any) -> None:
    with db.session() as session:
        session.merge(WorkerRow(name=name, seen_at=when, started_at=when))


def statuses(db: Database, job_id: int) -> dict[int, str]:
    with db.session(write=False) as session:
        return {ident: status for ident, status in session.execute(
            select(Chunk.id, Chunk.status).where(Chunk.job_id == job_id))}


def test_a_chunk_of_a_worker_whose_heartbeat_stopped_is_sent_again_within_seconds(
        service: Any, queries: Any, db: Database, settings: Any, dispatcher: Any) -> None:
    job_id, chunks = split_only(service, settings, dispatcher)
    dispatcher.solve(chunks[1:])  # the others wait in the queue
    claim(db, settings, chunks[0])
    now = utcnow()
    heartbeat(db, "elsewhere:4242", now)
    # While its worker beats, the chunk is its own, however long it takes.
    assert sweep(db, settings, dispatcher, now=now + timedelta(seconds=settings.worker_timeout))["chunks"] == 0
    assert statuses(db, job_id)[chunks[0]] == ChunkStatus.RUNNING
    # The heartbeat stops: one worker_timeout later the chunk goes out again, its lease far from over.
    later = now + timedelta(seconds=settings.worker_timeout + 1)
    assert settings.worker_timeout + 1 < settings.lease_seconds / 10
    report = sweep(db, settings, dispatcher, now=later)
    assert report["chunks"] == 1 and dispatcher.queue[-1] == ("solve", chunks[0])
    assert statuses(db, job_id)[chunks[0]] == ChunkStatus.PENDING
    dispatcher.drain()
    assert queries.job(job_id).status == "succeeded"


def test_a_job_stalled_with_an_empty_queue_is_sent_again_running_chunks_included(
        service: Any, queries: Any, db: Database, settings: Any, dispatcher: Any) -> None:
    job_id, chunks = split_only(service, settings, dispatcher)
    claim(db, settings, chunks[0], worker="here:1:2")
    heartbeat(db, "here:1", utcnow() + timedelta(hours=1))  # its worker is alive, yet nothing moves
    with db.session() as session:
        session.execute(update(Job).where(Job.id == job_id).values(progress_at=utcnow() - timedelta(hours=1)))
    report = sweep(db, settings, dispatcher, now=utcnow() + timedelta(seconds=settings.stall_seconds + 1))
    assert report["chunks"] == len(chunks)
    assert {ident for kind, ident in dispatcher.queue} == set(chunks)
    dispatcher.drain()
    finished = queries.job(job_id)
    assert finished.status == "succeeded" and finished.done == finished.total == 60


def test_a_split_whose_worker_is_gone_is_split_again(service: Any, queries: Any, db: Database, settings: Any,
                                                     dispatcher: Any) -> None:
    dispatcher.immediate = False
    job = submit(service, DECKS, "accordion")
    dispatcher.queue.clear()
    now = utcnow()
    with db.session() as session:
        row = session.get(Job, job.id)
        assert lifecycle.begin_split(row, settings.lease_seconds, ELSEWHERE)
    assert sweep(db, settings, dispatcher, now=now + timedelta(seconds=1))["splits"] == 0
    report = sweep(db, settings, dispatcher, now=now + timedelta(seconds=settings.worker_timeout + 1))
    assert report["splits"] == 1 and ("split", job.id) in dispatcher.queue
    dispatcher.drain()
    assert queries.job(job.id).status == "succeeded"


def test_a_job_that_answers_nothing_says_stalled_and_guesses_no_time_left(
        service: Any, queries: Any, db: Database, settings: Any, dispatcher: Any) -> None:
    job_id, chunks = split_only(service, settings, dispatcher)
    from worker.jobs.solve import solve_chunk

    solve_chunk(db, replace(settings, solve_run_seconds=0), chunks[0])  # that chunk alone
    moving = queries.job(job_id)
    assert moving.status == "solving" and not moving.stalled and moving.eta_seconds is not None
    with db.session() as session:
        session.execute(update(Job).where(Job.id == job_id).values(progress_at=utcnow() - timedelta(minutes=2)))
    stalled = queries.job(job_id)
    assert stalled.stalled and stalled.eta_seconds is None


def test_a_split_handed_out_again_while_the_broker_is_down_is_sent_once_it_is_back(
        db: Database, settings: Any, queries: Any) -> None:
    """The worker splitting a job is killed; the next sweep hands the split out again and commits that,
    then cannot send it (the broker is down). Once the broker is back, a later sweep sends it: the job
    ends, each case stored once, its output the engine's."""
    broker = FlakyBroker(db, settings)
    try:
        job = submit(JobService(db, settings, broker), DECKS, "accordion")
        # The split stores its first chunk, sends it, and dies before its second chunk commits.
        assert not broker.deliver(kill_at=3)
        held = job_row(db, job.id)
        assert held.status == "splitting" and held.splitter is not None
        broker.down = True
        now = utcnow() + timedelta(seconds=settings.worker_timeout + 1)
        assert not broker.sweep(now)  # the send was refused, after the hand-out committed
        handed = job_row(db, job.id)
        assert handed.status == "splitting" and handed.splitter is None and handed.lease_until is None
        broker.down = False
        broker.drain()  # the first chunk's message: the split itself is in no queue
        assert queries.job(job.id).status == "splitting"
        later = now + timedelta(seconds=settings.stall_seconds + 1)
        assert broker.sweep(later) and ("split", job.id) in broker.queue
        broker.drain()
    finally:
        broker.close()
    assert_solved_once(db, queries, job.id, DECKS, "accordion")


def job_row(db: Database, job_id: int) -> Job:
    with db.session(write=False) as session:
        return session.get(Job, job_id)


def assert_solved_once(db: Database, queries: Any, job_id: int, data: bytes, game: str) -> None:
    """The job succeeded with each case stored once and the judge output ``dealer solve`` gives."""
    finished = queries.job(job_id)
    assert finished.status == "succeeded", finished.error
    with db.session(write=False) as session:
        assert coverage(session, job_id) == (finished.total, finished.total)
    expected = io.StringIO()
    solve_file(engines.get(game), io.BytesIO(data), expected)
    assert output(queries, job_id) == expected.getvalue().encode()


def test_a_split_that_fails_in_a_living_worker_gives_its_lease_up(db: Database, settings: Any, queries: Any,
                                                                  monkeypatch: Any) -> None:
    """The database goes away under a split: it hands the job out again as it fails, so that the sweep
    sends it a stall period later rather than once its lease (five minutes) runs out."""
    broker = FlakyBroker(db, settings)
    try:
        job = submit(JobService(db, settings, broker), DECKS, "accordion")
        heartbeat(db, owner(process_name()), utcnow() + timedelta(hours=1))  # this worker lives on

        def gone(texts: bytes) -> bytes:
            raise OperationalError("INSERT", {}, ConnectionError("the database went away"))

        monkeypatch.setattr(split, "pack_input_texts", gone)
        with pytest.raises(OperationalError):
            split.split_job(db, settings, broker.queue.pop()[1], broker)
        handed = job_row(db, job.id)
        assert handed.status == "splitting" and handed.splitter is None and handed.lease_until is None
        monkeypatch.undo()
        assert broker.sweep(utcnow() + timedelta(seconds=settings.stall_seconds + 1))
        assert broker.queue == [("split", job.id)]
        broker.drain()
    finally:
        broker.close()
    assert_solved_once(db, queries, job.id, DECKS, "accordion")


def test_a_split_delivered_twice_fails_nothing_the_other_took_over_or_ended(
        service: Any, queries: Any, db: Database, settings: Any, dispatcher: Any) -> None:
    """Two deliveries of one split run at once: the one that ends releases the upload, and the other, whose
    next read then finds it gone, must not fail the job (found by the five-fault run: a million-deck job
    failed with "upload 2 has lost its block 10")."""
    dispatcher.immediate = False
    job = submit(service, DECKS, "accordion")
    with db.session() as session:
        assert lifecycle.begin_split(session.get(Job, job.id), settings.lease_seconds, ELSEWHERE)
    # The other delivery took the split over: this one's failure is not the job's.
    assert split._fail(db, job.id, "the upload cannot be read", process_name()) is None
    assert queries.job(job.id).status == "splitting"
    dispatcher.drain()
    assert queries.job(job.id).status == "succeeded"
    # The other ended the split: same.
    assert split._fail(db, job.id, "the upload cannot be read", process_name()) is None
    assert_solved_once(db, queries, job.id, DECKS, "accordion")
