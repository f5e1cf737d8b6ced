"""The split: a job's upload parsed as a stream into chunks of cases, each sent out as soon as it is stored.

A plain function of (settings, job id, dispatcher): ``worker.runner`` wraps it as a
Celery task and the tests call it directly. The database is the source of truth: a
split that died half-way is resumed (chunks already stored are kept; the parse starts
over, so the whole file is still checked), and two splits of one job store each chunk
once.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from worker import engines
from worker.config import Settings
from worker.engines.base import Case, Diagnostic, InputError
from worker.jobs import lifecycle
from worker.jobs.dispatch import Dispatcher
from worker.jobs.reading import LineLimitReader, other_game_hint, parse_guarded, readable
from worker.store.codecs import pack_inputs
from worker.store.database import Database
from worker.store.models import Chunk, utcnow

#: The split commits (and dispatches) its chunks this many at a time.
CHUNKS_PER_COMMIT = 8


def split_job(settings: Settings, job_id: int, dispatcher: Dispatcher) -> None:
    """Parse the job's upload into chunks and hand each out as soon as it is stored.

    A parse error fails the job and removes every chunk and case it had.
    """
    db = Database.of(settings)
    with db.session() as session:
        job = lifecycle.lock_job(session, job_id)
        if job is None or not lifecycle.begin_split(job, settings.lease_seconds):
            return
        game, path, size = job.game, job.upload_path, job.chunk_size
        stored = session.scalar(select(func.coalesce(func.max(Chunk.seq), -1)).where(Chunk.job_id == job_id))

    engine = engines.get(game)
    warnings: list[Diagnostic] = []
    pending: list[list[Case]] = []
    total = seq = 0
    limit = settings.max_cases_per_job
    try:
        with open(path, "rb") as raw:
            stream = LineLimitReader(raw, settings.max_line_bytes) if settings.max_line_bytes else raw
            batch: list[Case] = []
            for case in parse_guarded(engine, stream, warnings):
                total += 1
                if limit and total > limit:
                    _fail(settings, job_id, f"the file has more than {limit:,} {engine.unit}s (the limit per job)")
                    return
                batch.append(case)
                if len(batch) == size:
                    if seq > stored:
                        pending.append(batch)
                    seq, batch = seq + 1, []
                    if len(pending) >= CHUNKS_PER_COMMIT:
                        if not _store_chunks(db, settings, job_id, seq - len(pending), pending, dispatcher):
                            return
                        pending = []
            if batch and seq > stored:
                pending.append(batch)
                seq += 1
    except InputError as error:
        _fail(settings, job_id, readable(str(error)) + (_other_game_hint(game, path) if not total else ""))
        return
    except OSError as error:
        _fail(settings, job_id, f"the upload cannot be read: {error.strerror or error}")
        return
    if not _store_chunks(db, settings, job_id, seq - len(pending), pending, dispatcher):
        return
    with db.session() as session:
        job = lifecycle.lock_job(session, job_id)
        if job is not None:
            lifecycle.end_split(job, total, [w.to_dict() for w in warnings])


def _other_game_hint(game: str, path: str) -> str:
    """For a file that fails before its first case: say so when it looks like another game's file."""
    try:
        with open(path, "rb") as stream:
            return other_game_hint(game, stream.read(8192))
    except OSError:
        return ""


def _store_chunks(db: Database, settings: Settings, job_id: int, first_seq: int, batches: list[list[Case]],
                  dispatcher: Dispatcher) -> bool:
    """Commit a run of chunks (numbered from ``first_seq``), renew the split's lease, then
    dispatch them. ``False``: the job is gone or stopped."""
    try:
        with db.session() as session:
            job = lifecycle.lock_job(session, job_id)
            if job is None or not lifecycle.renew_split(job, settings.lease_seconds):
                return False
            now = utcnow()
            chunks = [lifecycle.new_chunk(job_id, first_seq + k, cases[0].index, len(cases),
                                          pack_inputs(case.text for case in cases), now)
                      for k, cases in enumerate(batches)]
            session.add_all(chunks)
            session.flush()
            ids = [chunk.id for chunk in chunks]
    except IntegrityError:
        return False  # a second split of this job got there first; it carries on alone
    if ids:
        dispatcher.solve(ids)
    return True


def _fail(settings: Settings, job_id: int, reason: str) -> None:
    with Database.of(settings).session() as session:
        lifecycle.fail(session, job_id, reason)
