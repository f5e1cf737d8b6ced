"""Row locks on PostgreSQL: solve tasks, cancel and failures never wait on each other in a circle.

PostgreSQL breaks such a circle after ``deadlock_timeout`` (a second) by failing one
transaction: a solve task would then retry its whole chunk, a cancel would answer 503.
Each test holds one side's locks open on its own connection and checks that the other
side gets what it needs at once (``lock_timeout``), where the wrong lock order waits.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, Engine, select, text

from tests.support.jobs import submit
from tests.support.paths import first_cases
from tests.support.plugin import postgres_settings
from worker.testing.waiting import until
from worker.config import Settings
from worker.jobs import lifecycle
from worker.jobs.split import split_job
from worker.states import UploadState
from worker.store.chunks import Blobs
from worker.store.database import Database
from worker.store.models import Chunk, Job, Upload, utcnow
from worker.store.uploads import release

#: A job of many chunks (29 of the tests' seven decks): the tests lock two of them, or end the last.
DECKS = first_cases("accordion", 200)


@pytest.fixture
def settings(postgres_url: str, tmp_path: Path) -> Settings:
    """PostgreSQL only: SQLite takes one writer at a time, there are no row locks to order."""
    return postgres_settings(postgres_url, tmp_path)


@pytest.fixture
def solving_job(db: Database, settings: Settings, service, dispatcher) -> Iterator[tuple[Engine, int, list[int]]]:
    """A job split into chunks, none of them solved yet."""
    dispatcher.immediate = False
    job = submit(service, DECKS, "accordion")
    dispatcher.queue.popleft()
    split_job(db, settings, job.id, dispatcher)
    dispatcher.queue.clear()
    engine = db.engine
    with engine.connect() as connection:
        chunks = connection.scalars(select(Chunk.id).where(Chunk.job_id == job.id).order_by(Chunk.id)).all()
    yield engine, job.id, list(chunks)


def _stored_half_way(connection: Connection, job_id: int, chunk_id: int, index: int) -> None:
    """What a solve task has done when it comes to lock its job: stored its chunk's results."""
    connection.execute(text("SET LOCAL lock_timeout = '3s'"))
    assert lifecycle.finish_chunk(connection, chunk_id, utcnow(), "w", Blobs(b"", b"", None, b"{}", b"", None))


def test_two_solve_tasks_lock_their_job_one_after_the_other(solving_job) -> None:
    engine, job_id, chunks = solving_job
    with engine.connect() as first, engine.connect() as second:
        _stored_half_way(first, job_id, chunks[0], 10_001)
        _stored_half_way(second, job_id, chunks[1], 10_002)
        # Each holds its own chunk; the job row is taken last and briefly, so neither waits
        # on the other in a circle.
        first.execute(text("SET LOCAL lock_timeout = '500ms'"))
        assert first.execute(lifecycle._LOCK_PROGRESS, {"p_job": job_id}).one().status == "solving"
        first.commit()
        assert second.execute(lifecycle._LOCK_PROGRESS, {"p_job": job_id}).one().status == "solving"
        second.rollback()


def test_cancel_waits_for_a_solve_task_instead_of_deadlocking(solving_job, service) -> None:
    engine, job_id, chunks = solving_job
    outcome: dict[str, object] = {}
    with engine.connect() as solver:
        _stored_half_way(solver, job_id, chunks[0], 10_001)
        cancel = threading.Thread(target=lambda: outcome.update(job=service.cancel(job_id)))
        cancel.start()
        cancel.join(0.5)
        assert cancel.is_alive()  # it waits for the chunk the solve task holds ...
        # ... and so does not hold the job yet: the solve task gets it at once, sees the
        # job still solving, and stores its case.
        solver.execute(text("SET LOCAL lock_timeout = '500ms'"))
        assert solver.execute(lifecycle._LOCK_PROGRESS, {"p_job": job_id}).one().status == "solving"
        solver.commit()
    cancel.join(10)
    assert outcome["job"].status == "cancelled"  # type: ignore[attr-defined]


def test_an_upload_is_released_while_its_job_ends_without_a_deadlock(db: Database, settings: Settings, service, dispatcher,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The split has ended and releases its upload while the last chunk's task ends the job. Ending it
    writes the job row twice, so PostgreSQL checks its upload key again (``FOR KEY SHARE`` on the upload)
    with the job row held; the release must therefore not hold the upload while it waits for the job
    (the lock order: a job, then its upload)."""
    dispatcher.immediate = False
    monkeypatch.setattr("worker.jobs.split.release", lambda db, upload_id: None)  # released below, by hand
    job_id = submit(service, DECKS, "accordion").id
    split_job(db, settings, job_id, dispatcher)
    with db.session() as session:
        job = session.get(Job, job_id)
        assert job is not None and job.status == "solving" and job.upload_id is not None
        upload_id = job.upload_id
        last = session.scalars(select(Chunk).where(Chunk.job_id == job_id).order_by(Chunk.id.desc())).first()
        assert last is not None
        last_id, last_count = last.id, last.count
        job.done = job.total - last_count  # every other chunk solved
    outcome: dict[str, object] = {}

    def release_upload() -> None:
        try:
            release(db, upload_id)
            outcome["released"] = True
        except Exception as error:  # noqa: BLE001 - the test reports it
            outcome["released"] = error

    with db.engine.connect() as solver:
        _stored_half_way(solver, job_id, last_id, 0)
        assert solver.execute(lifecycle._LOCK_PROGRESS, {"p_job": job_id}).one().status == "solving"
        releaser = threading.Thread(target=release_upload)
        releaser.start()
        until(lambda: _waiting_for_a_lock(solver), bool, "the release to wait for a row lock")
        status = lifecycle.add_progress(solver, job_id, lifecycle.Progress(solved=last_count), utcnow())
        solver.commit()
    releaser.join(30)
    assert status == "succeeded" and outcome["released"] is True
    with db.session(write=False) as session:
        job = session.get(Job, job_id)
        assert job is not None and job.status == "succeeded" and job.upload_id is None
        upload = session.get(Upload, upload_id)  # left to the purge, in small batches
        assert upload is None or upload.state == UploadState.DELETING


def _waiting_for_a_lock(connection: Connection) -> int:
    """How many other sessions of this database wait for a row lock. ``connection`` is in a transaction, in
    which PostgreSQL keeps the first reading of its statistics views: each look clears it first."""
    connection.execute(text("SELECT pg_stat_clear_snapshot()"))
    return connection.scalar(text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                  "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'")) or 0
