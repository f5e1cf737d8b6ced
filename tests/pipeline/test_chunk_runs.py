"""A solve message starts a run: after the chunk it names, the task takes its job's next pending chunks
straight from the database (``DEALER_SOLVE_RUN_SECONDS``), so that a job is not one broker round trip a
chunk. No chunk is solved twice for it: a message whose chunk another run took takes the job's next
pending chunk instead, and a chunk taken is taken again only once it is sent again (recovery)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from tests.support import jobs
from tests.support.jobs import output
from tests.support.paths import JUDGE_DATA
from worker.jobs import lifecycle
from worker.jobs.solve import solve_chunk
from worker.jobs.sweep import sweep
from worker.store.database import Database
from worker.store.models import Chunk, Job, WorkerRow, utcnow

#: 60 decks: nine chunks of the tests' seven cases.
DECKS = b"".join((JUDGE_DATA / "accordion" / "random-2000.in").read_bytes().splitlines(keepends=True)[:120]) + b"#\n"
#: A pool process of a worker on another host: ``host:worker pid:process pid``.
ELSEWHERE = "elsewhere:4242:4243"


def split_only(service: Any, settings: Any, dispatcher: Any) -> tuple[int, list[int]]:
    return jobs.split_only(service, settings, dispatcher, DECKS)


def rows(db: Database, job_id: int) -> dict[int, tuple[str, int, str | None]]:
    """Each chunk's (status, attempts, worker), by id."""
    with db.session(write=False) as session:
        return {ident: (status, attempts, worker) for ident, status, attempts, worker in session.execute(
            select(Chunk.id, Chunk.status, Chunk.attempts, Chunk.worker).where(Chunk.job_id == job_id))}


def take(db: Database, chunk_id: int, worker: str = ELSEWHERE) -> Any:
    """``worker`` takes the chunk by its message (and then says nothing more)."""
    with db.transaction() as connection:
        return lifecycle.claim_chunk(connection, chunk_id, worker, utcnow() + timedelta(seconds=300))


def test_one_message_solves_its_job_chunk_after_chunk(service: Any, queries: Any, db: Database, settings: Any,
                                                     dispatcher: Any) -> None:
    job_id, chunks = split_only(service, settings, dispatcher)
    stored = solve_chunk(db, replace(settings, solve_run_seconds=3600), chunks[0])
    assert stored is not None and stored.status == "succeeded"
    assert all(status == "done" and attempts == 1 for status, attempts, _ in rows(db, job_id).values())
    expected = (JUDGE_DATA / "accordion" / "random-2000.out").read_bytes().splitlines(keepends=True)[:60]
    assert output(queries, job_id) == b"".join(expected)
    # The other messages, delivered now, find nothing to take and store nothing.
    assert all(solve_chunk(db, settings, chunk) is None for chunk in chunks[1:])
    assert all(attempts == 1 for _, attempts, _ in rows(db, job_id).values())


def test_with_no_run_a_message_solves_its_chunk_alone(service: Any, db: Database, settings: Any, dispatcher: Any) -> None:
    job_id, chunks = split_only(service, settings, dispatcher)
    solve_chunk(db, replace(settings, solve_run_seconds=0), chunks[3])
    assert [rows(db, job_id)[chunk][0] for chunk in chunks].count("done") == 1
    assert rows(db, job_id)[chunks[3]][0] == "done"


def test_a_run_takes_the_jobs_chunks_in_order_and_skips_the_taken(service: Any, db: Database, settings: Any,
                                                                  dispatcher: Any) -> None:
    job_id, chunks = split_only(service, settings, dispatcher)
    take(db, chunks[1])  # another run holds it
    solve_chunk(db, replace(settings, solve_run_seconds=3600), chunks[0])
    after = rows(db, job_id)
    assert after[chunks[1]] == ("running", 1, ELSEWHERE)
    assert all(after[chunk][:2] == ("done", 1) for chunk in chunks if chunk != chunks[1])


def test_a_message_whose_chunk_was_taken_takes_the_next_instead(service: Any, db: Database, settings: Any,
                                                               dispatcher: Any) -> None:
    job_id, chunks = split_only(service, settings, dispatcher)
    take(db, chunks[0])
    # chunks[0]'s own message comes after another run took it: it is not solved twice, the next one is.
    taken = take(db, chunks[0], worker="here:1:2")
    assert taken is not None and taken.id == chunks[1] and taken.job_id == job_id
    assert rows(db, job_id)[chunks[0]] == ("running", 1, ELSEWHERE)
    assert rows(db, job_id)[chunks[1]] == ("running", 1, "here:1:2")


def test_a_taken_chunk_sent_again_is_taken_again(service: Any, queries: Any, db: Database, settings: Any,
                                                 dispatcher: Any) -> None:
    """Recovery sends a running chunk again (its worker stopped beating, or its job stalled): that message
    takes it, whoever held it."""
    job_id, chunks = split_only(service, settings, dispatcher)
    take(db, chunks[0])
    now = utcnow()
    with db.session() as session:
        session.merge(WorkerRow(name="elsewhere:4242", seen_at=now, started_at=now))
        session.execute(update(Job).where(Job.id == job_id).values(progress_at=now - timedelta(hours=1)))
    report = sweep(db, settings, dispatcher, now=now + timedelta(seconds=settings.stall_seconds + 1))
    assert ("solve", chunks[0]) in dispatcher.queue and report["chunks"] == len(chunks)
    dispatcher.drain()
    assert queries.job(job_id).status == "succeeded"
    assert rows(db, job_id)[chunks[0]][:2] == ("done", 2)


def test_a_chunk_whose_store_fails_is_given_back_and_taken_by_the_next_message(
        service: Any, queries: Any, db: Database, settings: Any, dispatcher: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from worker.jobs import solve

    job_id, chunks = split_only(service, settings, dispatcher)

    def lost(*_: Any, **__: Any) -> Any:
        raise ConnectionError("the database went away")

    monkeypatch.setattr(solve, "store_results", lost)
    with pytest.raises(ConnectionError):
        solve_chunk(db, settings, chunks[0])
    assert rows(db, job_id)[chunks[0]][0] == "pending"
    monkeypatch.undo()
    # Any message of the job (here the retry's) takes it again.
    stored = solve_chunk(db, replace(settings, solve_run_seconds=3600), chunks[5])
    assert stored is not None and stored.status == "succeeded"
    assert rows(db, job_id)[chunks[0]][:2] == ("done", 2)
    assert queries.job(job_id).done == 60


def test_a_run_stops_at_a_cancelled_job(service: Any, queries: Any, db: Database, settings: Any, dispatcher: Any) -> None:
    job_id, chunks = split_only(service, settings, dispatcher)
    solve_chunk(db, replace(settings, solve_run_seconds=0), chunks[0])
    service.cancel(job_id)
    assert solve_chunk(db, replace(settings, solve_run_seconds=3600), chunks[1]) is None
    assert queries.job(job_id).done == 7


def test_a_chunk_of_a_pool_process_that_died_is_given_back_at_its_workers_next_beat(
        service: Any, queries: Any, db: Database, settings: Any, dispatcher: Any) -> None:
    """A pool process killed mid-chunk leaves it running under its name while its worker beats on: the
    worker's heartbeat gives it back and sends it; a living process's chunk stays its own."""
    import subprocess
    import sys

    from worker.jobs.dispatch import worker_name
    from worker.jobs.sweep import give_back_gone
    from worker.store.uploads import process_alive

    job_id, chunks = split_only(service, settings, dispatcher)
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True)
    gone, living = f"{worker_name()}:{finished.stdout.strip()}", f"{worker_name()}:{__import__('os').getpid()}"
    take(db, chunks[0], worker=gone)
    take(db, chunks[1], worker=living)
    take(db, chunks[2], worker=ELSEWHERE)  # another worker's: not this one's to judge
    assert give_back_gone(db, dispatcher, worker_name(), process_alive) == 1
    assert list(dispatcher.queue) == [("solve", chunks[0])]
    assert [rows(db, job_id)[chunk][0] for chunk in chunks[:3]] == ["pending", "running", "running"]
    assert give_back_gone(db, dispatcher, worker_name(), process_alive) == 0
