"""A database that keeps its size: jobs made and deleted one after the other, the latest few kept, and the
chunks' table (with its TOAST, where the blobs are) stays the size a few jobs need however many come and
go, since the purge vacuums what it removed and the next chunks take that space (PostgreSQL; SQLite
reuses a freed page by itself, and its file is held to the same bound)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.support.inline import InlineDispatcher
from tests.support.jobs import submit
from worker.testing.waiting import until
from worker import work
from worker.config import Settings
from worker.jobs.service import JobService
from worker.store.database import Database
from worker.testing.data import random_judge_file

KEEP = 3
ROUNDS = 5 * KEEP


def stored_bytes(db: Database) -> int:
    """The chunks' table with its TOAST and indexes (PostgreSQL), or the database's pages in use (SQLite)."""
    with db.engine.connect() as connection:
        if db.postgres:
            return int(connection.scalar(text("SELECT pg_total_relation_size('chunks')")) or 0)
        pages = connection.exec_driver_sql("PRAGMA page_count").scalar_one()
        return int(pages * connection.exec_driver_sql("PRAGMA page_size").scalar_one())


@pytest.mark.slow
def test_churned_jobs_leave_the_chunks_the_size_of_the_jobs_kept(db: Database, settings: Settings, tmp_path: Path) -> None:
    # Small chunks of 10-20-30 with their traces: blobs of kilobytes, stored out of line on PostgreSQL.
    settings = dataclasses.replace(settings, chunk_size=100, vacuum_bytes=0)
    service = JobService(db, settings, InlineDispatcher(db, settings))
    kept: list[int] = []
    sizes = []
    for seed in range(ROUNDS):
        data = random_judge_file(tmp_path / f"{seed}.in", "10-20-30", 1000, seed).read_bytes()
        kept.append(submit(service, data, "10-20-30").id)
        if len(kept) > KEEP:
            service.delete(kept.pop(0))
        assert work.purge(db, settings) or len(kept) <= KEEP
        sizes.append(stored_bytes(db))
    # Once the first jobs are deleted, the size is what KEEP jobs, the one made before the purge and what
    # the purge has not yet vacuumed need, whatever the number of rounds: the later rounds store their
    # chunks in the space the earlier ones freed.
    settled = max(sizes[: KEEP + 2])
    assert max(sizes[KEEP + 2:]) <= settled * 1.25, sizes


def test_the_purge_vacuums_what_it_removed_as_it_goes(db: Database, settings: Settings, tmp_path: Path) -> None:
    if not db.postgres:
        pytest.skip("SQLite reuses a freed page by itself: nothing to vacuum")
    # Every batch past a byte of blobs: a vacuum after each, and one at the end.
    settings = dataclasses.replace(settings, chunk_size=100, delete_batch_rows=4, vacuum_bytes=1)
    service = JobService(db, settings, InlineDispatcher(db, settings))
    job = submit(service, random_judge_file(tmp_path / "a.in", "10-20-30", 1000, 1).read_bytes(), "10-20-30")
    service.delete(job.id)

    def vacuums() -> int:
        with db.engine.connect() as connection:
            return int(connection.scalar(text(
                "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'chunks'")) or 0)

    before = vacuums()
    batches = [batch for batch in work.purge(db, settings) if batch.table == "chunks"]
    assert len(batches) >= 3
    until(lambda: vacuums() - before, lambda done: done >= len(batches), "the chunks vacuumed after each batch")
