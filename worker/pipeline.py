"""The work itself: split a job's upload into chunks, solve a chunk, sweep up after failures.

These are plain functions of (settings, id, dispatcher); ``worker.tasks`` wraps them
as Celery tasks and the tests call them directly. The database is the source of
truth: every step first checks what is stored, so running one twice, or two at once,
stores each case once.
"""

from __future__ import annotations

import os
from bisect import bisect_left
import signal
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from hashlib import blake2b
from typing import Any, Protocol

import orjson
import zstandard
from sqlalchemy import JSON, BigInteger, Connection, Integer, String, any_, bindparam, delete, func, select, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from worker import engines
from worker.config import Settings
from worker.db import session_scope, transaction
from worker.engines.base import Case, Diagnostic, InputError, Result, TraceError
from worker.guards import LineLimitReader, other_game_hint, parse_guarded, readable
from worker.models import SOLVE_BUCKETS_US, CaseRow, Chunk, ChunkStatus, Job, JobStatus, UTCDateTime, utcnow

ACTIVE = (JobStatus.SPLITTING, JobStatus.SOLVING)
#: The split commits (and dispatches) its chunks this many at a time.
CHUNKS_PER_COMMIT = 8


class Dispatcher(Protocol):
    """How work is handed out: Celery in the service, a plain list in some tests."""

    def split(self, job_id: int) -> None: ...

    def solve(self, chunk_ids: Sequence[int]) -> None: ...

    def queue_depth(self) -> int | None:
        """Messages waiting in the broker, or ``None`` when that cannot be told."""


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def input_hash(game: str, text: str) -> int:
    """A 63-bit hash of a case's canonical input (fits a signed BIGINT)."""
    digest = blake2b(f"{game}\n{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


_codecs = threading.local()


def _compressor() -> zstandard.ZstdCompressor:
    # Contexts are reused because setting one up costs more than compressing a trace;
    # they are not thread-safe, hence one per thread.
    if not hasattr(_codecs, "compressor"):
        _codecs.compressor = zstandard.ZstdCompressor(level=3)
        _codecs.decompressor = zstandard.ZstdDecompressor()
    return _codecs.compressor


def _decompress(blob: bytes) -> bytes:
    _compressor()
    return _codecs.decompressor.decompress(blob)


def pack_inputs(texts: Iterable[str]) -> bytes:
    return _compressor().compress("\n".join(texts).encode())


def unpack_inputs(blob: bytes) -> list[str]:
    return _decompress(blob).decode().split("\n")


#: The first bytes of every zstd frame; no packed trace starts with them (see ``store_trace``).
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def store_trace(packed: bytes) -> bytes:
    """A packed trace (``Engine.solve_packed``) as stored.

    JSON is compressed with zstd. An engine's own compact form (10-20-30: a byte per
    card and pick-up) is stored as it is: zstd takes it only from ~280 to ~190 bytes,
    at a cost that shows in a worker's throughput.
    """
    return _compressor().compress(packed) if packed[:1] == b"{" else packed


def load_trace(game: str, blob: bytes | None) -> dict[str, Any] | None:
    """The trace a stored blob holds, as JSON-ready data (``TraceError`` if it is damaged)."""
    if blob is None:
        return None
    try:
        packed = _decompress(blob) if blob[:4] == ZSTD_MAGIC else blob
    except zstandard.ZstdError:
        raise TraceError("a stored trace is damaged: it does not decompress") from None
    return engines.get(game).unpack_trace(packed)


# --- split -------------------------------------------------------------------------------


def split_job(settings: Settings, job_id: int, dispatcher: Dispatcher) -> None:
    """Parse the job's upload into chunks and hand each out as soon as it is stored.

    A split that died half-way is resumed: chunks already stored are kept (the
    parse starts over, so the whole file is still checked). A parse error fails the
    job and removes every chunk and case it had.
    """
    url = settings.database_url
    with session_scope(url) as session:
        job = _lock_job(session, job_id)
        if job is None or job.status not in (JobStatus.QUEUED, JobStatus.SPLITTING):
            return
        job.status = JobStatus.SPLITTING
        job.started_at = job.started_at or utcnow()
        job.lease_until = utcnow() + timedelta(seconds=settings.lease_seconds)
        job.progress_at = utcnow()
        game, path, size = job.game, job.upload_path, job.chunk_size
        stored = session.scalar(select(func.coalesce(func.max(Chunk.seq), -1)).where(Chunk.job_id == job_id))

    engine = engines.get(game)
    warnings: list[Diagnostic] = []
    pending: list[Chunk] = []
    total = 0
    limit = settings.max_cases_per_job
    try:
        with open(path, "rb") as raw:
            stream = LineLimitReader(raw, settings.max_line_bytes) if settings.max_line_bytes else raw
            batch: list[Case] = []
            seq = 0
            for case in parse_guarded(engine, stream, warnings):
                total += 1
                if limit and total > limit:
                    _fail_job(settings, job_id,
                              f"the file has more than {limit:,} {engine.unit}s (the limit per job)")
                    return
                batch.append(case)
                if len(batch) == size:
                    if seq > stored:
                        pending.append(_chunk(job_id, seq, batch))
                    seq, batch = seq + 1, []
                    if len(pending) >= CHUNKS_PER_COMMIT and not _store_chunks(settings, job_id, pending, dispatcher):
                        return
            if batch and seq > stored:
                pending.append(_chunk(job_id, seq, batch))
    except InputError as error:
        _fail_job(settings, job_id, readable(str(error)) + (_other_game_hint(game, path) if not total else ""))
        return
    except OSError as error:
        _fail_job(settings, job_id, f"the upload cannot be read: {error.strerror or error}")
        return
    if not _store_chunks(settings, job_id, pending, dispatcher):
        return
    with session_scope(url) as session:
        job = _lock_job(session, job_id)
        if job is None or job.status != JobStatus.SPLITTING:
            return
        job.total = total
        job.warnings = [w.to_dict() for w in warnings]
        job.status = JobStatus.SOLVING
        job.split_at = utcnow()
        job.lease_until = None
        _finish_if_complete(job)


def _other_game_hint(game: str, path: str) -> str:
    """For a file that fails before its first case: say so when it looks like another game's file."""
    try:
        with open(path, "rb") as stream:
            return other_game_hint(game, stream.read(8192))
    except OSError:
        return ""


def _chunk(job_id: int, seq: int, cases: list[Case]) -> Chunk:
    return Chunk(job_id=job_id, seq=seq, first_index=cases[0].index, count=len(cases),
                 inputs=pack_inputs(case.text for case in cases), status=ChunkStatus.PENDING,
                 attempts=0)


def _store_chunks(settings: Settings, job_id: int, chunks: list[Chunk], dispatcher: Dispatcher) -> bool:
    """Commit a batch of chunks, renew the split's lease, then dispatch them. False: job gone or stopped."""
    try:
        with session_scope(settings.database_url) as session:
            job = _lock_job(session, job_id)
            if job is None or job.status != JobStatus.SPLITTING:
                return False
            now = utcnow()
            job.lease_until = now + timedelta(seconds=settings.lease_seconds)
            for chunk in chunks:
                chunk.dispatched_at = now
            session.add_all(chunks)
            session.flush()
            ids = [chunk.id for chunk in chunks]
    except IntegrityError:
        return False  # a second split of this job got there first; it carries on alone
    chunks.clear()
    if ids:
        dispatcher.solve(ids)
    return True


def _fail_job(settings: Settings, job_id: int, reason: str) -> None:
    with session_scope(settings.database_url) as session:
        job = lock_job_with_chunks(session, job_id)
        if job is None or job.status not in ACTIVE:
            return
        session.execute(delete(CaseRow).where(CaseRow.job_id == job_id))
        session.execute(delete(Chunk).where(Chunk.job_id == job_id))
        job.status = JobStatus.FAILED
        job.error = reason
        job.total = job.done = job.failed_cases = job.cache_hits = job.solve_us = 0
        job.counts = {}
        job.solve_hist = []
        job.finished_at = utcnow()
        job.lease_until = None


#: ``FOR NO KEY UPDATE``: a plain ``FOR UPDATE`` would wait for the ``KEY SHARE`` lock that
#: inserting a case (its foreign key) takes on the job row, so two solve tasks each
#: holding one and wanting the other's would deadlock.
JOB_LOCK = {"key_share": True}


def _lock_job(session: Session, job_id: int) -> Job | None:
    return session.get(Job, job_id, with_for_update=JOB_LOCK, populate_existing=True)


def lock_job_with_chunks(session: Session, job_id: int) -> Job | None:
    """Lock a job's chunks, then the job, before changing chunks of a job that may be solving.

    A solve task locks its chunk, then the job; taking them in the same order means the
    two never wait on each other in a circle (which PostgreSQL would end after a second
    by failing one of them).
    """
    session.execute(select(Chunk.id).where(Chunk.job_id == job_id).order_by(Chunk.id).with_for_update())
    return _lock_job(session, job_id)


def _complete(status: str, done: int, failed_cases: int, total: int) -> bool:
    """Whether a job with these counts has every case answered (``total`` is known once split)."""
    return status == JobStatus.SOLVING and done + failed_cases >= total


def _finish_if_complete(job: Job) -> bool:
    """Mark the job succeeded if it is complete; whether it was."""
    if not _complete(job.status, job.done, job.failed_cases, job.total):
        return False
    job.status = JobStatus.SUCCEEDED
    job.finished_at = utcnow()
    return True


# --- solve -------------------------------------------------------------------------------


def solve_chunk(settings: Settings, chunk_id: int) -> None:
    """Solve one chunk and store its cases, all in one transaction."""
    me = worker_name()
    lease = utcnow() + timedelta(seconds=settings.lease_seconds)
    with transaction(settings.database_url) as connection:
        claimed = connection.execute(_CLAIM, {"p_chunk": chunk_id, "p_me": me, "p_lease": lease}).one_or_none()
        if claimed is None:
            return  # done, cancelled or gone
        job_id, first, inputs = claimed
        job = connection.execute(_JOB_STATE, {"p_job": job_id}).one_or_none()
        if job is None or job.status not in ACTIVE:
            connection.execute(_CANCEL_CHUNK, {"p_chunk": chunk_id})
            return
        game, texts = job.game, unpack_inputs(inputs)
        hashes = [input_hash(game, text) for text in texts]
        known = _cached_results(connection, settings, game, hashes, texts) if settings.result_cache else {}

    engine = engines.get(game)
    # Rows in CASE_COLUMNS order, without solved_at (the store adds it).
    rows: list[tuple[Any, ...]] = []
    counts: Counter[str] = Counter()
    timings: list[int] = []
    hits = failed = 0
    solve = _solver(engine, settings.store_traces)
    clock = time.perf_counter
    deadline = clock() + settings.chunk_seconds if settings.chunk_seconds else float("inf")
    next_check = clock() + settings.cancel_check_seconds
    with CaseBudget(settings.case_seconds) as budget:
        for index, text, digest in zip(range(first, first + len(texts)), texts, hashes, strict=True):
            start = clock()
            if start > next_check:
                if not _still_active(settings, job_id):
                    return
                next_check = clock() + settings.cancel_check_seconds
            previous = known.get(text)
            if previous is not None:
                outcome, number, detail, trace = previous
                rows.append((job_id, index, game, text, digest, outcome, number, detail,
                             engine.judge_line(index, outcome, number, detail), trace, None, True, 0, me))
                hits += 1
                counts[outcome] += 1
                continue
            if start > deadline:
                failed += 1
                rows.append((job_id, index, game, text, digest, *_unsolved(
                    f"not solved: the chunk used up its time budget of {settings.chunk_seconds:g} s"), me))
                continue
            budget.started = start
            try:
                result, trace = solve(Case(index, text))
            except CaseTimeout:
                failed += 1
                rows.append((job_id, index, game, text, digest, *_unsolved(
                    f"took longer than its time budget of {settings.case_seconds:g} s"), me))
                continue
            finally:
                budget.started = None
            elapsed = int((clock() - start) * 1e6)
            timings.append(elapsed)
            outcome, number, detail = result.outcome, result.number, result.detail
            rows.append((job_id, index, game, text, digest, outcome, number, detail, result.line, trace, None,
                         False, elapsed, me))
            known[text] = (outcome, number, detail, trace)
            counts[outcome] += 1
    _store_results(settings, chunk_id, job_id, rows, counts, timings, hits, failed)


def _unsolved(reason: str) -> tuple[Any, ...]:
    """A case row's columns from ``outcome`` to ``solve_us`` for a case that was not solved."""
    return None, None, None, None, None, reason, False, 0


def _solver(engine: engines.Engine, traces: bool) -> Callable[[Case], tuple[Result, bytes | None]]:
    """``case -> (result, stored trace or None)``."""
    if not traces:
        return lambda case: (engine.solve(case, False), None)
    solve_packed = engine.solve_packed

    def solve(case: Case) -> tuple[Result, bytes | None]:
        result, packed = solve_packed(case)
        return result, store_trace(packed)

    return solve


class CaseTimeout(Exception):
    pass


class CaseBudget:
    """A per-case time budget from SIGALRM.

    ``with CaseBudget(s) as budget:`` starts a timer that ticks every ``s / 10``
    seconds (at most every second) for a chunk; setting ``budget.started`` to a
    ``time.perf_counter()`` reading while a case runs, and back to ``None`` after it,
    makes a tick past ``s`` seconds raise :class:`CaseTimeout` in that case. Per case
    this costs two assignments, not two system calls. Only the main thread takes
    signals, so elsewhere (or with a budget of 0) cases run unbounded.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.active = seconds > 0 and threading.current_thread() is threading.main_thread()
        self.started: float | None = None
        self._previous: Any = None

    def __enter__(self) -> CaseBudget:
        if self.active:
            self._previous = signal.signal(signal.SIGALRM, self._tick)
            tick = min(1.0, self.seconds / 10)
            signal.setitimer(signal.ITIMER_REAL, tick, tick)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.active:
            self.started = None
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)

    def _tick(self, _signum: int, _frame: Any) -> None:
        started = self.started
        if started is not None and time.perf_counter() - started >= self.seconds:
            self.started = None  # one exception per case, even if the next tick comes early
            raise CaseTimeout


def _cached_results(connection: Connection, settings: Settings, game: str, hashes: list[int],
                    texts: list[str]) -> dict[str, tuple[str, int, list[Any], bytes | None]]:
    """Results already stored for these inputs in any job, by canonical input."""
    wanted = set(texts)
    found: dict[str, tuple[str, int, list[Any], bytes | None]] = {}
    postgres = connection.dialect.name == "postgresql"
    query = _CACHED_PG if postgres else _CACHED
    unique = sorted(set(hashes))
    for text, outcome, number, detail, trace in connection.execute(
            query, {"p_game": game, "p_hashes": unique if postgres else orjson.dumps(unique).decode()}):
        if (outcome is not None and text in wanted and text not in found
                and (trace is not None or not settings.store_traces)):
            found[text] = (outcome, number, detail, trace)
    return found


def _still_active(settings: Settings, job_id: int) -> bool:
    with transaction(settings.database_url, write=False) as connection:
        return connection.execute(_JOB_STATE, {"p_job": job_id}).one().status in ACTIVE


def _store_results(settings: Settings, chunk_id: int, job_id: int, rows: list[tuple[Any, ...]],
                   counts: Counter[str], timings: list[int], hits: int, failed: int) -> None:
    now = utcnow()
    with transaction(settings.database_url) as connection:
        if not connection.execute(_FINISH_CHUNK, {"p_chunk": chunk_id, "p_now": now}).rowcount:
            return  # another delivery of this chunk stored it first
        _insert_cases(connection, rows, now)
        # The job row is locked last and briefly: every chunk of the job passes through here.
        job = connection.execute(_LOCK_PROGRESS, {"p_job": job_id}).one_or_none()
        if job is None or job.status not in ACTIVE:
            connection.rollback()  # cancelled or failed meanwhile: store nothing
            return
        merged = Counter(job.counts)
        merged.update(counts)
        connection.execute(_ADD_PROGRESS, {
            "p_job": job_id, "p_solved": len(rows) - failed, "p_failed": failed, "p_hits": hits,
            "p_counts": dict(merged), "p_hist": _add_histogram(job.solve_hist, timings), "p_us": sum(timings),
            "p_now": now})
        if _complete(job.status, job.done + len(rows) - failed, job.failed_cases + failed, job.total):
            connection.execute(_SUCCEED, {"p_job": job_id, "p_now": now})


# The solve path's statements, built once: building one costs about as much as running it.
_CLAIM = (update(Chunk)
          .where(Chunk.id == bindparam("p_chunk"), Chunk.status.in_([ChunkStatus.PENDING, ChunkStatus.RUNNING]),
                 Chunk.inputs.is_not(None))
          .values(status=ChunkStatus.RUNNING, attempts=Chunk.attempts + 1, worker=bindparam("p_me"),
                  lease_until=bindparam("p_lease", type_=UTCDateTime()))
          .returning(Chunk.job_id, Chunk.first_index, Chunk.inputs))
_JOB_STATE = select(Job.game, Job.status).where(Job.id == bindparam("p_job"))
_CANCEL_CHUNK = update(Chunk).where(Chunk.id == bindparam("p_chunk")).values(status=ChunkStatus.CANCELLED)
_CACHED_COLUMNS = select(CaseRow.input, CaseRow.outcome, CaseRow.number, CaseRow.detail, CaseRow.trace)
# (Unsolved cases are skipped in Python: a condition on outcome can lead SQLite's planner
# to the (game, outcome, number) index, which reads every case of the game.)
_CACHED_WHERE = (CaseRow.game == bindparam("p_game"),)
#: On PostgreSQL one array parameter: planned as fast as one value, where a list of
#: hundreds of parameters costs more to plan than to run.
_CACHED_PG = _CACHED_COLUMNS.where(
    *_CACHED_WHERE, CaseRow.input_hash == any_(bindparam("p_hashes", type_=ARRAY(BigInteger))))
#: On SQLite a JSON array in one parameter: the same statement every time, where hundreds of
#: parameters would be rendered into a new one for each chunk.
_HASHES = func.json_each(bindparam("p_hashes", type_=String)).table_valued("value")
_CACHED = _CACHED_COLUMNS.where(*_CACHED_WHERE, CaseRow.input_hash.in_(select(_HASHES.c.value)))
_FINISH_CHUNK = (update(Chunk)
                 .where(Chunk.id == bindparam("p_chunk"),
                        Chunk.status.not_in([ChunkStatus.DONE, ChunkStatus.CANCELLED]))
                 .values(status=ChunkStatus.DONE, inputs=None, lease_until=None,
                         finished_at=bindparam("p_now", type_=UTCDateTime())))
_LOCK_PROGRESS = (select(Job.status, Job.total, Job.done, Job.failed_cases, Job.counts, Job.solve_hist)
                  .where(Job.id == bindparam("p_job")).with_for_update(**JOB_LOCK))
_ADD_PROGRESS = update(Job).where(Job.id == bindparam("p_job")).values(
    done=Job.done + bindparam("p_solved", type_=Integer),
    failed_cases=Job.failed_cases + bindparam("p_failed", type_=Integer),
    cache_hits=Job.cache_hits + bindparam("p_hits", type_=Integer),
    counts=bindparam("p_counts", type_=JSON), solve_hist=bindparam("p_hist", type_=JSON),
    solve_us=Job.solve_us + bindparam("p_us", type_=BigInteger), progress_at=bindparam("p_now", type_=UTCDateTime()))
_SUCCEED = update(Job).where(Job.id == bindparam("p_job")).values(
    status=JobStatus.SUCCEEDED, finished_at=bindparam("p_now", type_=UTCDateTime()))


#: The columns of a case row as ``solve_chunk`` builds it, then ``solved_at``.
CASE_COLUMNS = ("job_id", "index", "game", "input", "input_hash", "outcome", "number", "detail", "line", "trace",
                "error", "cached", "solve_us", "worker", "solved_at")
_DETAIL = CASE_COLUMNS.index("detail")
_COLUMN_LIST = ", ".join(f'"{name}"' for name in CASE_COLUMNS)
_COPY_CASES = f"COPY cases ({_COLUMN_LIST}) FROM STDIN (FORMAT BINARY)"
_COPY_TYPES = ["int4", "int4", "varchar", "text", "int8", "varchar", "int4", "json", "text", "bytea", "text", "bool",
               "int4", "varchar", "timestamp"]
_INSERT_SQLITE = (f"INSERT INTO cases ({_COLUMN_LIST}) VALUES ({', '.join('?' * len(CASE_COLUMNS))}) "
                  'ON CONFLICT (job_id, "index") DO NOTHING')


def _insert_cases(connection: Connection, rows: list[tuple[Any, ...]], now: datetime) -> None:
    """Insert a chunk's case rows.

    The chunk was claimed in this transaction, so no other delivery inserts them; the
    unique (job_id, index) key still refuses a duplicate if that ever failed. On
    PostgreSQL the rows go in with a binary COPY, some ten times faster than INSERTs
    (and a tenth cheaper for the server than a text one, which spells traces in hex).
    """
    if connection.dialect.name != "postgresql":
        # The driver's own executemany, with values made as SQLAlchemy's types would make them:
        # its per-value processing took longer than SQLite's work.
        moment = now.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        connection.exec_driver_sql(_INSERT_SQLITE, [
            (*row[:_DETAIL], None if row[_DETAIL] is None else orjson.dumps(row[_DETAIL]).decode(),
             *row[_DETAIL + 1 :], moment) for row in rows])
        return
    naive = now.replace(tzinfo=None)  # the column holds UTC without a zone (see UTCDateTime)
    driver = connection.connection.driver_connection
    assert driver is not None
    with driver.cursor() as cursor, cursor.copy(_COPY_CASES) as copy:
        copy.set_types(_COPY_TYPES)
        write = copy.write_row
        for row in rows:
            write((*row, naive))


def _add_histogram(histogram: list[int], timings: list[int]) -> list[int]:
    counts = list(histogram) or [0] * (len(SOLVE_BUCKETS_US) + 1)
    for elapsed in timings:
        counts[bisect_left(SOLVE_BUCKETS_US, elapsed)] += 1
    return counts


# --- recovery ----------------------------------------------------------------------------


def sweep(settings: Settings, dispatcher: Dispatcher, now: datetime | None = None) -> dict[str, int]:
    """Hand out again what a lost worker or a lost queue left behind; finish what is complete.

    - a running chunk whose lease ran out goes back to pending and is sent again;
    - a queued job, or a splitting one whose split lease ran out, is split again;
    - when the broker's queue is empty, the pending chunks of a job that made no
      progress for ``stall_seconds`` are sent again (their messages were lost).
    """
    now = now or utcnow()
    stall = now - timedelta(seconds=settings.stall_seconds)
    report = {"chunks": 0, "splits": 0, "finished": 0}
    depth = dispatcher.queue_depth()
    queue_empty = depth == 0
    resend: list[int] = []
    splits: list[int] = []
    with session_scope(settings.database_url) as session:
        expired = session.scalars(
            select(Chunk).join(Job).where(Job.status.in_(ACTIVE), Chunk.status == ChunkStatus.RUNNING,
                                          Chunk.lease_until < now)).all()
        for chunk in expired:
            chunk.status = ChunkStatus.PENDING
            chunk.dispatched_at = now
            resend.append(chunk.id)
        jobs = session.scalars(select(Job).where(Job.status.in_((JobStatus.QUEUED, *ACTIVE)))).all()
        for job in jobs:
            stalled = (job.progress_at or job.created_at) < stall
            if job.status == JobStatus.QUEUED and stalled and queue_empty:
                splits.append(job.id)
            elif job.status == JobStatus.SPLITTING and job.lease_until is not None and job.lease_until < now:
                splits.append(job.id)
            if job.status in ACTIVE and stalled and queue_empty:
                lost = session.scalars(select(Chunk).where(
                    Chunk.job_id == job.id, Chunk.status == ChunkStatus.PENDING,
                    (Chunk.dispatched_at.is_(None)) | (Chunk.dispatched_at < stall))).all()
                for chunk in lost:
                    chunk.dispatched_at = now
                    resend.append(chunk.id)
            report["finished"] += _finish_if_complete(job)
        for job_id in splits:
            session.execute(update(Job).where(Job.id == job_id).values(progress_at=now, lease_until=None))
    for job_id in splits:
        dispatcher.split(job_id)
    if resend:
        dispatcher.solve(resend)
    report["chunks"], report["splits"] = len(resend), len(splits)
    return report
