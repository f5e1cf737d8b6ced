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
from tests.support.paths import JUDGE_DATA
from tests.support.plugin import postgres_settings
from worker.config import Settings
from worker.jobs import lifecycle
from worker.jobs.split import split_job
from worker.store.chunks import Blobs
from worker.store.database import Database
from worker.store.models import Chunk, utcnow


@pytest.fixture
def settings(postgres_url: str, tmp_path: Path) -> Settings:
    """PostgreSQL only: SQLite takes one writer at a time, there are no row locks to order."""
    return postgres_settings(postgres_url, tmp_path)


@pytest.fixture
def solving_job(settings: Settings, service, dispatcher) -> Iterator[tuple[Engine, int, list[int]]]:
    """A job split into chunks, none of them solved yet."""
    dispatcher.immediate = False
    job = submit(service, (JUDGE_DATA / "accordion" / "random-2000.in").read_bytes(), "accordion")
    dispatcher.queue.popleft()
    split_job(settings, job.id, dispatcher)
    dispatcher.queue.clear()
    engine = Database.of(settings).engine
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
