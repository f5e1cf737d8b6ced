"""Deletes in the background: a deleted job is gone for every read at once, and the purge removes its rows
(chunks, checks and their parts, upload blocks) in transactions bounded in rows and bytes, so that a write
that comes meanwhile waits for one small batch at most; retention marks what is kept past its time."""

from __future__ import annotations

import dataclasses
import io
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select

from tests.support.inline import InlineDispatcher
from tests.support.jobs import all_uploads, stored_uploads, submit
from tests.support.paths import judge
from worker import work
from worker.checks.service import CheckService
from worker.config import PerRole, Settings
from worker.jobs.overview import OverviewQueries
from worker.jobs.queries import JobQueries
from worker.jobs.service import JobService
from worker.store.database import Database
from worker.store.models import Check, CheckPart, Chunk, Job, Upload, UploadBlock, utcnow
from worker.store.purge import purge_batch
from worker.store.uploads import BLOCK_BYTES, store_stream

ROWS = 5


def count(db: Database, table: Any) -> int:
    with db.session(write=False) as session:
        return session.scalar(select(func.count()).select_from(table)) or 0


def small_batches(settings: Settings) -> Settings:
    return dataclasses.replace(settings, delete_batch_rows=ROWS, delete_batch_bytes=64 << 10)


def big_job(db: Database, settings: Settings) -> tuple[Any, JobService, InlineDispatcher]:
    """A finished job of many chunks with a judged check (parts), its upload kept (cancelled while queued)
    besides one of several blocks."""
    dispatcher = InlineDispatcher(db, settings)
    service = JobService(db, settings, dispatcher)
    job = submit(service, judge("mahjong", "random-2000").read_bytes(), "mahjong")
    checks = CheckService(db, settings, dispatcher, service)
    output = store_stream(service.db, io.BytesIO(judge("mahjong", "random-2000").with_suffix(".out").read_bytes()),
                          settings.max_upload_bytes)
    checks.create_check(job.id, output, "out.txt")
    return job, service, dispatcher


def test_a_deleted_job_is_gone_at_once_and_its_rows_go_in_small_batches(db: Database, settings: Settings) -> None:
    settings = small_batches(settings)
    job, service, _ = big_job(db, settings)
    chunks = count(db, Chunk)
    assert chunks >= 4 * ROWS and count(db, CheckPart) >= 1
    big = store_stream(service.db, io.BytesIO(b"1S 2S 3S\n" * (3 * BLOCK_BYTES // 9)), settings.max_upload_bytes)
    service.forget_upload(big)  # a refused upload of several blocks

    service.delete(job.id)
    queries = JobQueries(db)
    assert queries.jobs().total == 0
    assert OverviewQueries(db, settings).overview(None).jobs_by_status["succeeded"] == 0
    assert stored_uploads(db) == []
    assert count(db, Chunk) == chunks, "nothing removed yet: the purge does it"

    batches = []
    while (batch := purge_batch(db, settings.delete_batch_rows,
                                settings.delete_batch_bytes)) is not None:
        batches.append(batch)
        if len(batches) == 1:  # a write between two batches goes through, on a job of its own
            small = submit(service, judge("mahjong", "sample").read_bytes(), "mahjong")
            assert queries.job(small.id).status == "succeeded"
    assert all(1 <= batch.rows <= ROWS for batch in batches)
    assert all(batch.bytes <= settings.delete_batch_bytes or batch.rows == 1 for batch in batches)
    assert sum(batch.rows for batch in batches if batch.table == "chunks") == chunks
    assert sum(batch.rows for batch in batches if batch.table == "upload_blocks") >= 3
    assert len(batches) >= chunks // ROWS
    with db.session(write=False) as session:
        assert session.get(Job, job.id) is None
        assert session.scalar(select(func.count()).select_from(Check).where(Check.job_id == job.id)) == 0
        assert session.scalar(select(func.count()).select_from(Chunk).where(Chunk.job_id == job.id)) == 0
    assert count(db, UploadBlock) == 0 and all_uploads(db) == []
    assert queries.jobs().total == 1


def test_the_purge_of_work_runs_until_nothing_is_left(db: Database, settings: Settings) -> None:
    settings = small_batches(settings)
    job, service, _ = big_job(db, settings)
    service.delete(job.id)
    batches = work.purge(db, settings)
    assert batches and all(batch.rows <= ROWS for batch in batches)
    assert count(db, Job) == count(db, Chunk) == count(db, Upload) == 0
    assert work.purge(db, settings) == []


def test_uploads_of_failed_or_cancelled_jobs_expire(db: Database, settings: Settings) -> None:
    settings = dataclasses.replace(settings, keep_uploads_hours=2.0)
    dispatcher = InlineDispatcher(db, settings, immediate=False)
    service = JobService(db, settings, dispatcher)
    cancelled = submit(service, judge("mahjong", "sample").read_bytes(), "mahjong")
    service.cancel(cancelled.id)
    waiting = submit(service, judge("accordion", "sample").read_bytes(), "accordion")
    assert len(stored_uploads(db)) == 2

    assert work.sweep(db, settings, dispatcher, utcnow() + timedelta(hours=1))["expired_uploads"] == 0
    assert len(stored_uploads(db)) == 2
    assert work.sweep(db, settings, dispatcher, utcnow() + timedelta(hours=3))["expired_uploads"] == 1
    with db.session(write=False) as session:
        assert session.get(Job, cancelled.id).upload_id is None
        assert [upload for upload, in session.execute(select(Upload.id).where(Upload.state == "stored"))] == \
            [session.get(Job, waiting.id).upload_id], "a job still waiting to be split keeps its upload"
    work.purge(db, settings)
    assert len(all_uploads(db)) == 1


def test_keep_days_deletes_finished_jobs_past_their_time(db: Database, settings: Settings) -> None:
    settings = dataclasses.replace(settings, keep_days=PerRole.parse("DEALER_KEEP_DAYS", "30"))
    dispatcher = InlineDispatcher(db, settings)
    service = JobService(db, settings, dispatcher)
    old = submit(service, judge("mahjong", "sample").read_bytes(), "mahjong")
    with db.session() as session:
        session.get(Job, old.id).finished_at = utcnow() - timedelta(days=31)
    new = submit(service, judge("accordion", "sample").read_bytes(), "accordion")
    assert work.sweep(db, settings, dispatcher)["expired_jobs"] == 1
    assert [view.id for view in JobQueries(db).jobs().items] == [new.id]
    work.purge(db, settings)
    assert count(db, Job) == 1
