"""What a worker does before it says it is ready: each pool process warms (``work.warm``: a database
connection opened and kept), tells its worker (``PoolWarmth``), and the heartbeat writes the worker's row,
which is what says "ready", only once they all have (``tests/integration/test_warm_start.py`` watches a
real worker's processes)."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from sqlalchemy import select

from worker.testing.waiting import until
from worker import work
from worker.config import Settings
from worker.runner.heartbeat import Heartbeat, PoolWarmth
from worker.store.database import Database
from worker.store.models import WorkerRow


def test_warming_leaves_an_open_connection_in_the_process_pool(db: Database, settings: Settings) -> None:
    db.engine.dispose()
    work.warm(db, settings)
    assert db.engine.pool.checkedin() == 1


def test_the_warmth_counts_the_processes_that_told() -> None:
    warmth = PoolWarmth()
    told = [threading.Thread(target=warmth.tell) for _ in range(3)]
    for thread in told:
        thread.start()
    assert warmth.wait(3) == 3
    warmth.tell()
    assert warmth.wait(2, seconds=0.2) == 1  # one told, the other never does: the wait ends all the same


def test_the_worker_row_is_written_once_its_pool_is_warm(db: Database, settings: Settings, dispatcher: Any) -> None:
    warm = threading.Event()
    beat = Heartbeat(db, replace(settings, heartbeat_seconds=0.01), dispatcher, 2, before_first_beat=warm.wait)

    def rows() -> list[str]:
        with db.session(write=False) as session:
            return list(session.scalars(select(WorkerRow.name)))

    beat.start()
    try:
        assert rows() == []  # the heartbeat is held before its first beat
        warm.set()
        until(rows, lambda names: names == [beat.name_in_db], "the worker's row")
    finally:
        beat.stop()
        beat.join(10)


def test_the_rehearsal_leaves_nothing_and_draws_no_id(db: Database, settings: Settings, service: Any) -> None:
    """Each pool process rehearses a job of every game as it starts (``worker.jobs.rehearsal``): nothing of it
    stays, and the next job's number is the one it would have been."""
    from sqlalchemy import func

    from tests.support.jobs import submit
    from tests.support.paths import JUDGE_DATA
    from worker.jobs.rehearsal import rehearse_upload
    from worker.store.models import Chunk, Job, Upload

    data = (JUDGE_DATA / "accordion" / "sample.in").read_bytes()
    first = submit(service, data, "accordion").id
    work.warm(db, settings)
    work.warm(db, settings)
    rehearse_upload(db)  # what a web process does before its first request
    with db.session(write=False) as session:
        assert session.scalar(select(func.min(Job.id))) == first
        assert session.scalar(select(func.count()).select_from(Chunk).where(Chunk.job_id != first)) == 0
        assert session.scalar(select(func.count()).select_from(Upload).where(Upload.receiver == "rehearsal")) == 0
    assert submit(service, data, "accordion").id == first + 1
