"""The split hands each chunk out as soon as it is stored: a solve of the first chunk can run, and store its
cases, while the split still holds the rest of the file unread."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.support.inline import InlineDispatcher
from tests.support.jobs import output, submit
from worker import work
from worker.config import Settings
from worker.jobs.queries import JobQueries
from worker.jobs.service import JobService
from worker.states import ChunkStatus, JobStatus
from worker.store.database import Database
from worker.store.models import Chunk, Job
from worker.testing.data import random_judge_file


class SolvesTheFirstChunkAtOnce(InlineDispatcher):
    """Queues its work like the inline dispatcher, but solves the first chunk it is sent right in the
    send: the split that sent it waits there, before it reads on, and what the job and the chunk are
    then is kept in ``seen``."""

    def __init__(self, db: Database, settings: Settings) -> None:
        super().__init__(db, settings, immediate=False)
        self.seen: list[tuple[str, str, int]] = []

    def solve(self, chunk_ids: Sequence[int]) -> None:
        if self.seen:
            super().solve(chunk_ids)
            return
        first, rest = chunk_ids[0], chunk_ids[1:]
        work.solve(self.db, self.settings, first, self)
        with self.db.session(write=False) as session:
            chunk = session.get(Chunk, first)
            assert chunk is not None
            job = session.get(Job, chunk.job_id)
            assert job is not None
            chunks = len(session.scalars(select(Chunk.id).where(Chunk.job_id == job.id)).all())
            self.seen.append((job.status, chunk.status, chunks))
        super().solve(rest)


@pytest.mark.slow
def test_the_first_chunk_is_solved_while_the_split_reads_on(db: Database, settings: Settings, queries: JobQueries,
                                                          tmp_path: Path) -> None:
    dispatcher = SolvesTheFirstChunkAtOnce(db, settings)
    service = JobService(db, settings, dispatcher)
    data = random_judge_file(tmp_path / "decks.in", "10-20-30", 5_000, 5).read_bytes()
    job = submit(service, data, "10-20-30")
    dispatcher.drain()  # the split, which solves its first chunk on the way, then the other chunks
    (status, chunk_status, chunks_then), = dispatcher.seen
    # The first chunk was stored solved while the job was still splitting and the file was not all read.
    assert (status, chunk_status) == (JobStatus.SPLITTING, ChunkStatus.DONE)
    with db.session(write=False) as session:
        assert chunks_then < len(session.scalars(select(Chunk.id).where(Chunk.job_id == job.id)).all())
    finished = queries.job(job.id)
    assert finished.status == JobStatus.SUCCEEDED and finished.done == finished.total == 5_000
    assert output(queries, job.id).count(b"\n") == 5_000
