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
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from hashlib import blake2b
from typing import Any, Protocol

import orjson
import zstandard
from sqlalchemy import BigInteger, any_, bindparam, delete, func, select, update
from sqlalchemy.dialects import sqlite
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from worker import engines
from worker.config import Settings
from worker.db import session_scope
from worker.engines.base import Case, Diagnostic, InputError
from worker.guards import LineLimitReader, other_game_hint, parse_guarded, readable
from worker.models import SOLVE_BUCKETS_US, CaseRow, Chunk, ChunkStatus, Job, JobStatus, utcnow

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


def pack_trace(trace: dict[str, Any]) -> bytes:
    """A trace as stored: zstd-compressed JSON."""
    return _compressor().compress(orjson.dumps(trace))


def unpack_trace(blob: bytes | None) -> dict[str, Any] | None:
    return orjson.loads(_decompress(blob)) if blob is not None else None


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
        job = _lock_job(session, job_id)
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


def _lock_job(session: Session, job_id: int) -> Job | None:
    return session.get(Job, job_id, with_for_update=True, populate_existing=True)


def _finish_if_complete(job: Job) -> None:
    if job.status == JobStatus.SOLVING and job.done + job.failed_cases >= job.total:
        job.status = JobStatus.SUCCEEDED
        job.finished_at = utcnow()


# --- solve -------------------------------------------------------------------------------


def solve_chunk(settings: Settings, chunk_id: int) -> None:
    """Solve one chunk and store its cases, all in one transaction."""
    url = settings.database_url
    me = worker_name()
    with session_scope(url) as session:
        chunk = session.get(Chunk, chunk_id, with_for_update=True)
        if chunk is None or chunk.status in (ChunkStatus.DONE, ChunkStatus.CANCELLED) or chunk.inputs is None:
            return
        job = session.get(Job, chunk.job_id)
        if job is None or job.status not in ACTIVE:
            chunk.status = ChunkStatus.CANCELLED
            return
        chunk.status = ChunkStatus.RUNNING
        chunk.attempts += 1
        chunk.worker = me
        chunk.lease_until = utcnow() + timedelta(seconds=settings.lease_seconds)
        game, first, texts = job.game, chunk.first_index, unpack_inputs(chunk.inputs)
        job_id = job.id

    engine = engines.get(game)
    hashes = [input_hash(game, text) for text in texts]
    known = _cached_results(settings, game, hashes, texts) if settings.result_cache else {}
    rows: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    hits = failed = 0
    chunk_deadline = time.monotonic() + settings.chunk_seconds if settings.chunk_seconds else float("inf")
    next_check = time.monotonic() + settings.cancel_check_seconds
    with CaseBudget(settings.case_seconds) as budget:
        for offset, (text, digest) in enumerate(zip(texts, hashes, strict=True)):
            if time.monotonic() > next_check:
                if not _still_active(settings, job_id):
                    return
                next_check = time.monotonic() + settings.cancel_check_seconds
            index = first + offset
            row: dict[str, Any] = {"job_id": job_id, "index": index, "game": game, "input": text,
                                   "input_hash": digest, "worker": me, "error": None, "cached": False,
                                   "solve_us": 0, "outcome": None, "number": None, "detail": None,
                                   "line": None, "trace": None}
            rows.append(row)
            previous = known.get(text)
            if previous is not None:
                outcome, number, detail, trace = previous
                row.update(outcome=outcome, number=number, detail=detail, trace=trace, cached=True,
                           line=engine.judge_line(index, outcome, number, detail))
                hits += 1
                counts[outcome] += 1
                continue
            if time.monotonic() > chunk_deadline:
                row["error"] = f"not solved: the chunk used up its time budget of {settings.chunk_seconds:g} s"
                failed += 1
                continue
            start = time.perf_counter()
            try:
                budget.start()
                result = engine.solve(Case(index, text), settings.store_traces)
            except CaseTimeout:
                row["error"] = f"took longer than its time budget of {settings.case_seconds:g} s"
                failed += 1
                continue
            finally:
                budget.stop()
            elapsed = int((time.perf_counter() - start) * 1e6)
            trace = pack_trace(result.trace) if result.trace is not None else None
            row.update(outcome=result.outcome, number=result.number, detail=result.detail, trace=trace,
                       solve_us=elapsed, line=result.line)
            known[text] = (result.outcome, result.number, result.detail, trace)
            counts[result.outcome] += 1
    _store_results(settings, chunk_id, job_id, rows, counts, hits, failed)


class CaseTimeout(Exception):
    pass


class CaseBudget:
    """A per-case time budget from SIGALRM.

    ``with CaseBudget(s) as budget:`` installs the handler for a chunk; ``budget.start()``
    and ``budget.stop()`` bracket each case. Only the main thread takes signals, so
    elsewhere (or with a budget of 0) cases run unbounded.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.active = seconds > 0 and threading.current_thread() is threading.main_thread()
        self.armed = False
        self._previous: Any = None

    def __enter__(self) -> CaseBudget:
        if self.active:
            self._previous = signal.signal(signal.SIGALRM, self._expired)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.active:
            self.stop()
            signal.signal(signal.SIGALRM, self._previous)

    def start(self) -> None:
        if self.active:
            self.armed = True
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def stop(self) -> None:
        if self.active:
            self.armed = False  # first, so that an alarm already on its way is ignored
            signal.setitimer(signal.ITIMER_REAL, 0)

    def _expired(self, _signum: int, _frame: Any) -> None:
        if self.armed:
            self.armed = False
            raise CaseTimeout


def _cached_results(settings: Settings, game: str, hashes: list[int],
                    texts: list[str]) -> dict[str, tuple[str, int, list[Any], bytes | None]]:
    """Results already stored for these inputs in any job, by canonical input."""
    wanted = set(texts)
    found: dict[str, tuple[str, int, list[Any], bytes | None]] = {}
    with session_scope(settings.database_url, write=False) as session:
        if _is_postgres(session):
            # One array parameter: PostgreSQL plans it as fast as one value, where a list of
            # hundreds of parameters costs more to plan than to run.
            matches = CaseRow.input_hash == any_(bindparam("hashes", list(set(hashes)), type_=ARRAY(BigInteger)))
        else:
            matches = CaseRow.input_hash.in_(set(hashes))
        query = (select(CaseRow.input, CaseRow.outcome, CaseRow.number, CaseRow.detail, CaseRow.trace)
                 .where(CaseRow.game == game, matches, CaseRow.outcome.is_not(None)))
        for text, outcome, number, detail, trace in session.execute(query):
            if text in wanted and text not in found and (trace is not None or not settings.store_traces):
                found[text] = (outcome, number, detail, trace)
    return found


def _still_active(settings: Settings, job_id: int) -> bool:
    with session_scope(settings.database_url, write=False) as session:
        return session.scalar(select(Job.status).where(Job.id == job_id)) in ACTIVE


def _store_results(settings: Settings, chunk_id: int, job_id: int, rows: list[dict[str, Any]],
                   counts: Counter[str], hits: int, failed: int) -> None:
    with session_scope(settings.database_url) as session:
        claimed = session.execute(
            update(Chunk)
            .where(Chunk.id == chunk_id, Chunk.status.not_in([ChunkStatus.DONE, ChunkStatus.CANCELLED]))
            .values(status=ChunkStatus.DONE, inputs=None, finished_at=utcnow(), lease_until=None)
        ).rowcount
        if not claimed:
            return  # another delivery of this chunk stored it first
        _insert_cases(session, rows)
        # The job row is locked last and briefly: every chunk of the job passes through here.
        job = _lock_job(session, job_id)
        if job is None or job.status not in ACTIVE:
            session.rollback()  # cancelled or failed meanwhile: store nothing
            return
        job.done += len(rows) - failed
        job.failed_cases += failed
        job.cache_hits += hits
        merged = Counter(job.counts)
        merged.update(counts)
        job.counts = dict(merged)
        job.solve_hist = _add_histogram(job.solve_hist, rows)
        job.solve_us += sum(row["solve_us"] for row in rows)
        job.progress_at = utcnow()
        _finish_if_complete(job)


CASE_COLUMNS = ("job_id", "index", "game", "input", "input_hash", "outcome", "number", "detail", "line", "trace",
                "error", "cached", "solve_us", "worker", "solved_at")


def _insert_cases(session: Session, rows: list[dict[str, Any]]) -> None:
    """Insert a chunk's case rows.

    The chunk was claimed in this transaction, so no other delivery inserts them; the
    unique (job_id, index) key still refuses a duplicate if that ever failed. On
    PostgreSQL the rows go in with COPY, some ten times faster than INSERTs.
    """
    now = utcnow()
    for row in rows:
        row["solved_at"] = now
    if not _is_postgres(session):
        session.execute(sqlite.insert(CaseRow).on_conflict_do_nothing(index_elements=["job_id", "index"]), rows)
        return
    naive = now.replace(tzinfo=None)  # the column holds UTC without a zone (see UTCDateTime)
    connection = session.connection().connection.driver_connection
    columns = ", ".join(f'"{name}"' for name in CASE_COLUMNS)
    with connection.cursor() as cursor, cursor.copy(f"COPY cases ({columns}) FROM STDIN") as copy:
        for row in rows:
            detail = row["detail"]
            copy.write_row((row["job_id"], row["index"], row["game"], row["input"], row["input_hash"],
                            row["outcome"], row["number"],
                            None if detail is None else orjson.dumps(detail).decode(), row["line"],
                            row["trace"], row["error"], row["cached"], row["solve_us"], row["worker"], naive))


def _is_postgres(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def _add_histogram(histogram: list[int], rows: list[dict[str, Any]]) -> list[int]:
    counts = list(histogram) or [0] * (len(SOLVE_BUCKETS_US) + 1)
    for row in rows:
        if row["outcome"] is not None and not row["cached"]:
            counts[bisect_left(SOLVE_BUCKETS_US, row["solve_us"])] += 1
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
            if job.status == JobStatus.SOLVING and job.done + job.failed_cases >= job.total:
                _finish_if_complete(job)
                report["finished"] += 1
        for job_id in splits:
            session.execute(update(Job).where(Job.id == job_id).values(progress_at=now, lease_until=None))
    for job_id in splits:
        dispatcher.split(job_id)
    if resend:
        dispatcher.solve(resend)
    report["chunks"], report["splits"] = len(resend), len(splits)
    return report
