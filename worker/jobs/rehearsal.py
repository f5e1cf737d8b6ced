"""A job's path rehearsed, in a transaction that is rolled back: what a process does before its first task,
so that its first job does not pay for what a process does only once.

A process's first split and first solve cost tens of milliseconds more than the next (measured on
PostgreSQL, 2026-12-06): SQLAlchemy compiles each statement the first time the process runs it, the
database server reads each table's and index's description into the session's caches the first time
it touches them, and the engines and compressors set up what they keep. So each pool process, as it
starts, takes one case of each game through the split's and the solve's own statements and code: a job
row and its chunk inserted, split, taken, solved, stored and added to the job's figures, then all of it
rolled back. The job's id is below zero, which no job has: the next job's number does not move (its
chunk's is drawn as any chunk's, an id no one reads), and no one else sees either.
"""

from __future__ import annotations

import io
import os
import random
from datetime import timedelta

from sqlalchemy import select, update

from worker import engines
from worker.config import Settings
from worker.engines.reading import Faults
from worker.jobs import lifecycle
from worker.jobs.dispatch import process_name
from worker.jobs.reading import take_guarded
from worker.jobs.solve import solve_inputs
from worker.states import UploadState
from worker.store.chunks import pack, pack_input_texts
from worker.store.codecs import compress
from worker.store.database import Database
from worker.store.models import ARRIVING, Upload, UploadBlock, utcnow
from worker.store.uploads import hold


def rehearse(db: Database, settings: Settings) -> None:
    """Take one case of each game through a split and a solve, and roll it all back."""
    me = process_name()
    with db.session() as session:
        try:
            for k, engine in enumerate(engines.all_engines()):
                ident = -(os.getpid() * 8 + k)  # below zero, one a game, apart from other processes'
                data = f"{engine.generate(random.Random(k))}\n{engine.terminator}\n".encode()
                texts, count = take_guarded(engine, engine.read_inputs(io.BytesIO(data), [], faults=Faults()), 1)
                job = lifecycle.new_job(id=ident, game=engine.slug, filename="rehearsal", upload_id=None, sha256="",
                                        size=len(data), chunk_size=1)
                session.add(job)
                session.flush()
                job = lifecycle.lock_job(session, ident)
                assert job is not None
                lifecycle.begin_split(job, settings.lease_seconds, me)
                chunk = lifecycle.new_chunk(ident, 0, 1, count, None, pack_input_texts(texts), utcnow())
                session.add(chunk)
                lifecycle.renew_split(job, settings.lease_seconds, count, len(data))
                session.flush()  # the chunk's id is drawn as the split's are (an id no one reads)
                lifecycle.end_split(session, job, count, [])
                session.flush()
                connection = session.connection()
                lease = utcnow() + timedelta(seconds=settings.lease_seconds)
                taken = lifecycle.claim_chunk(connection, chunk.id, me, lease)
                assert taken is not None
                solved, progress, tally = solve_inputs(settings, engine, 1, taken.inputs)
                lifecycle.finish_chunk(connection, chunk.id, utcnow(), me, pack(solved, tally))
                lifecycle.claim_next_chunk(connection, ident, me, lease)
                lifecycle.add_progress(connection, ident, progress, utcnow())
        finally:
            session.rollback()


def rehearse_upload(db: Database) -> None:
    """What a web process does before its first request: the statements of an upload (its row, a block, its
    end: ``store.uploads.UploadWriter``'s) and of its job's making (the upload held, the job row:
    ``JobService.create_job``'s; the file's end for a job made while it arrived: ``worker.jobs.arriving``),
    on rows rolled back (the job's id below zero, as :func:`rehearse`'s).
    A statement written here unlike theirs is only compiled in vain: the first upload pays for its own,
    as before. Worth it: a live service's first upload took 30 to 55 ms longer than the next without it
    (``bench/job_sizes.py``, 10,000 decks), and no longer with it."""
    with db.session() as session:
        try:
            upload = Upload(state=UploadState.RECEIVING, receiver="rehearsal", owner=None)
            session.add(upload)
            session.flush()
            session.add(UploadBlock(upload_id=upload.id, seq=0, data=compress(b"")))
            session.execute(update(Upload).where(Upload.id == upload.id).values(seen_at=utcnow(), size=0))
            session.scalar(select(Upload.id).where(Upload.sha256 == "", Upload.state == UploadState.STORED,
                                                   Upload.size == 0, Upload.owner.is_not_distinct_from(None)).limit(1))
            session.execute(update(Upload).where(Upload.id == upload.id).values(
                state=UploadState.STORED, sha256="", size=0, blocks=1, seen_at=utcnow()))
            hold(session, upload.id)
            ident = -os.getpid() * 8
            game = engines.all_engines()[0].slug
            lifecycle.started_before(session, None, game, "")
            session.add(lifecycle.new_job(id=ident, game=game, filename="rehearsal", upload_id=upload.id,
                                          sha256=ARRIVING, head_sha256="", size=0, chunk_size=1, client=None,
                                          rerun_of=None, owner=None))
            session.flush()
            lifecycle.file_arrived(session, ident, "", 0)
        finally:
            session.rollback()
