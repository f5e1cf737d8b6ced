"""Running a check on a worker: the job's judge lines from its chunks and the output from its upload,
both streamed from the database, judged, and the verdicts stored part by part.

A plain function of (settings, check id), like the split and the solve: ``worker.runner``
wraps it as a Celery task and the tests call it through their dispatcher.
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy import select

from worker.checks import compare, store
from worker.checks.compare import Judge, OutputError, OutputLines, Part
from worker.config import Settings
from worker.jobs.states import ChunkStatus
from worker.store.codecs import decompress
from worker.store.database import Database
from worker.store.models import Chunk
from worker.store.uploads import UploadReader

#: Parts stored per transaction.
PARTS_PER_COMMIT = 8
#: Chunks of judge lines read per transaction.
CHUNKS_PER_READ = 64


def run_check(settings: Settings, check_id: int) -> None:
    """Judge a pending check of a succeeded job and store what it came to (nothing when another run
    holds it or ended it, or its job has not ended)."""
    db = Database.of(settings)
    claimed = store.claim(db, check_id, settings.lease_seconds)
    if claimed is None:
        return
    attempt = claimed.attempt
    if claimed.upload_id is None:
        store.fail(db, check_id, attempt, "the output is no longer stored: send it again")
        return
    parts: list[Part] = []

    def keep(part: Part) -> None:
        parts.append(part)
        if len(parts) >= PARTS_PER_COMMIT:
            store.save_parts(db, check_id, attempt, parts, settings.lease_seconds)
            parts.clear()

    try:
        with UploadReader(db, claimed.upload_id) as raw:
            judge = Judge(OutputLines(raw, settings.max_line_bytes), keep, part_lines=compare.PART_LINES)
            for block, count in judge_lines(db, claimed.job_id):
                judge.expect(block, count)
            report = judge.finish()
    except OutputError as error:
        store.fail(db, check_id, attempt, f"the output cannot be judged: {error}")
        return
    except FileNotFoundError as error:  # its upload (or a block of it) is gone
        store.fail(db, check_id, attempt, f"the output cannot be read: {error}")
        return
    except BaseException:
        # The task is tried again (the database went away, the worker is stopping): let that run in
        # at once instead of after the lease.
        store.let_go(db, check_id, attempt)
        raise
    if parts:
        store.save_parts(db, check_id, attempt, parts, settings.lease_seconds)
    store.finish(db, check_id, attempt, report)


def judge_lines(db: Database, job_id: int) -> Iterator[tuple[bytes, int]]:
    """A job's judge lines in file order, a chunk at a time: ``(its lines joined by LF, how many)``,
    read a few chunks per transaction."""
    query = (select(Chunk.first_index, Chunk.count, Chunk.lines)
             .where(Chunk.job_id == job_id, Chunk.status == ChunkStatus.DONE)
             .order_by(Chunk.first_index).limit(CHUNKS_PER_READ))
    after = 0
    while True:
        with db.session(write=False) as session:
            rows = session.execute(query.where(Chunk.first_index > after)).all()
        for row in rows:
            yield decompress(row.lines), row.count
        if len(rows) < CHUNKS_PER_READ:
            return
        after = rows[-1].first_index
