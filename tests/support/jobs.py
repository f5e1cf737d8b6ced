"""Jobs through the service layer, without HTTP."""

from __future__ import annotations

import io
from typing import Any

from sqlalchemy import select

from worker.config import Settings
from worker.jobs.queries import JobQueries
from worker.jobs.service import JobService
from worker.jobs.split import split_job
from worker.jobs.views import JobView
from worker.states import UploadState
from worker.store.chunks import case_place, pack_traces, read_chunks
from worker.store.database import Database
from worker.store.models import Chunk, Upload
from worker.store.uploads import store_stream


def submit(service: JobService, data: bytes, game: str | None = None, name: str = "judge.in") -> JobView:
    """Store ``data`` as an upload and make a job of it (the inline dispatcher may run it at once)."""
    upload = store_stream(service.db, io.BytesIO(data), service.settings.max_upload_bytes)
    return service.create_job(upload, name, game)


def output(queries: JobQueries, job_id: int) -> bytes:
    """A job's judge output, whole."""
    return b"".join(queries.output(job_id))


def split_only(service: JobService, settings: Settings, dispatcher: Any, data: bytes,
               game: str = "accordion") -> tuple[int, list[int]]:
    """A job of ``data`` split into chunks, none solved, their messages dropped: (job id, its chunks' ids
    in the order of the file)."""
    dispatcher.immediate = False
    job = submit(service, data, game)
    kind, ident = dispatcher.queue.popleft()
    assert kind == "split"
    split_job(service.db, settings, ident, dispatcher)
    dispatcher.queue.clear()
    return job.id, chunk_ids(service.db, job.id)


def chunk_ids(db: Database, job_id: int) -> list[int]:
    """A job's chunks, in the order of the file."""
    with db.session(write=False) as session:
        return list(session.scalars(select(Chunk.id).where(Chunk.job_id == job_id).order_by(Chunk.seq)))


def stored_uploads(db: Database) -> list[tuple[int, str]]:
    """``(id, state)`` of every upload the database keeps (whole or still arriving): not those deleted,
    whose blocks the purge is yet to remove (``all_uploads`` has them too)."""
    return [row for row in all_uploads(db) if row[1] != UploadState.DELETING]


def all_uploads(db: Database) -> list[tuple[int, str]]:
    """``(id, state)`` of every upload row the database holds."""
    with db.session(write=False) as session:
        return [tuple(row) for row in session.execute(select(Upload.id, Upload.state).order_by(Upload.id))]


def replace_trace(db: Database, job_id: int, index: int, packed: bytes) -> None:
    """Store ``packed`` as the trace of one case (to test what a damaged trace does)."""
    with db.session() as session:
        chunk = session.scalars(select(Chunk).where(Chunk.job_id == job_id, Chunk.first_index <= index)
                                .order_by(Chunk.first_index.desc()).limit(1)).one()
        data = read_chunks(session, [chunk.id], traces=True)[chunk.id]
        k = case_place(chunk, index)
        chunk.traces = pack_traces([packed if place == k else data.trace(place) or b"" for place in range(chunk.count)])
