"""The job state machine: the only code that changes a job's or a chunk's status.

Every transition of a job or a chunk (:mod:`worker.states`) is a function here, and so is the order
in which rows are locked. The split, the solve tasks, the service's commands and the
recovery sweep all call these instead of writing a status themselves.

Lock order: a chunk (or all of a job's chunks) first, then the job row, always with
``FOR NO KEY UPDATE`` on the job (see :data:`JOB_LOCK`); then an upload, then checks
(ARCHITECTURE.md, "Lock order"). A solve task takes them in that order; so must anyone
who changes the chunks of a job that may be solving, or the two would wait on each other
in a circle (PostgreSQL ends that after a second by failing one of them).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Connection,
    Float,
    Integer,
    LargeBinary,
    Row,
    bindparam,
    case,
    delete,
    func,
    insert,
    literal,
    select,
    update,
)
from sqlalchemy.orm import Session, aliased

from worker import engines
from worker.states import ACTIVE, OPEN_CHUNKS, UNFINISHED, CheckStatus, ChunkStatus, JobStatus, NotifyState
from worker.store.chunks import Blobs, first_unsolved
from worker.store.models import Check, Chunk, Job, UTCDateTime, utcnow

#: ``FOR NO KEY UPDATE``: a plain ``FOR UPDATE`` would wait for the ``KEY SHARE`` lock that
#: inserting a case (its foreign key) takes on the job row, so two solve tasks each
#: holding one and wanting the other's would deadlock.
JOB_LOCK = {"key_share": True}


# --- locks --------------------------------------------------------------------------------


def lock_job(session: Session, job_id: int) -> Job | None:
    return session.get(Job, job_id, with_for_update=JOB_LOCK, populate_existing=True)


def lock_job_with_chunks(session: Session, job_id: int) -> Job | None:
    """Lock a job's chunks, then the job: before changing chunks of a job that may be solving."""
    session.execute(select(Chunk.id).where(Chunk.job_id == job_id).order_by(Chunk.id).with_for_update())
    return lock_job(session, job_id)


# --- a job's life -------------------------------------------------------------------------


def new_job(**columns: Any) -> Job:
    """A job row for a stored upload, queued (added to a session by the caller)."""
    return Job(status=JobStatus.QUEUED, warnings=[], counts={}, progress_at=utcnow(), **columns)


def begin_split(job: Job, lease_seconds: float, splitter: str) -> bool:
    """Mark a queued job (or one whose split died) as splitting by ``splitter`` (a process name); whether
    there is a split to do."""
    if job.status not in (JobStatus.QUEUED, JobStatus.SPLITTING):
        return False
    now = utcnow()
    job.status = JobStatus.SPLITTING
    job.splitter = splitter
    job.started_at = job.started_at or now
    job.lease_until = now + timedelta(seconds=lease_seconds)
    job.progress_at = now
    return True


def renew_split(job: Job, lease_seconds: float, total: int, bytes_read: int) -> bool:
    """Extend a running split's lease and note how far it has read (``total`` cases so far, stored
    with their chunks in the same transaction); whether the job is still being split."""
    if job.status != JobStatus.SPLITTING:
        return False
    job.lease_until = utcnow() + timedelta(seconds=lease_seconds)
    job.total = max(job.total, total)
    job.bytes_read = max(job.bytes_read, bytes_read)
    return True


@dataclass(frozen=True)
class FileFaults:
    """A file's bad cases, read past: the first listed (``Job.faults``), how many in all, the place of the first."""

    listed: list[dict[str, Any]]
    count: int
    case: int | None


def end_split(session: Session, job: Job, total: int, warnings: list[dict[str, Any]],
              faults: FileFaults | None = None) -> bool:
    """The whole upload is read: the job has ``total`` cases and solves on (or is already done), to end
    failed when the file has ``faults``; whether it ended (every case was answered before the split
    ended)."""
    if job.status != JobStatus.SPLITTING:
        return False
    job.total = total
    job.bytes_read = job.size
    job.warnings = warnings
    if faults is not None and faults.count:
        job.faults, job.fault_count, job.fault_case = faults.listed, faults.count, faults.case
    job.status = JobStatus.SOLVING
    job.split_at = utcnow()
    job.lease_until = None
    job.splitter = None
    return finish_if_complete(session, job)


def earlier_results(session: Session, job: Job, traces: bool) -> int | None:
    """An earlier job of the same file (same game and SHA-256) and the same owner whose stored results the
    new ``job`` may copy instead of solving: one that succeeded, with every case's trace when traces are
    kept, cut into the same chunks (a split resumed with chunks of its own stored goes on with the earlier
    job's). Only the owner's own jobs: a copy names its source (``copied_from``), and how fast a job ends
    would tell anyone else that the file was sent before."""
    for old in session.scalars(select(Job.id).where(
            Job.sha256 == job.sha256, Job.game == job.game, Job.status == JobStatus.SUCCEEDED, Job.id != job.id,
            Job.chunk_size == job.chunk_size,
            Job.owner.is_not_distinct_from(job.owner), Job.deleted_at.is_(None))
            .order_by(Job.id.desc()).limit(4)):
        if not traces or not session.scalar(select(func.count()).select_from(Chunk).where(
                Chunk.job_id == old, Chunk.traces.is_(None), Chunk.count > 0)):
            return old
    return None


def started_before(session: Session, owner: str | None, game: str, head_sha256: str) -> bool:
    """Whether an earlier job of ``owner`` that succeeded had a file of ``game`` that started as one does
    (the SHA-256 of its first MiB): the new file may be that one again, which the result cache would copy."""
    return session.scalar(select(Job.id).where(
        Job.head_sha256 == head_sha256, Job.game == game, Job.status == JobStatus.SUCCEEDED,
        Job.owner.is_not_distinct_from(owner), Job.deleted_at.is_(None)).limit(1)) is not None


def copy_results(session: Session, job: Job, old: Job, seqs: tuple[int, int], lease_seconds: float) -> int:
    """Copy the stored chunks ``seqs`` (first, last) of an earlier job of the same file into ``job``, which
    is splitting (locked by the caller); the cases copied. The database copies the blobs itself."""
    if job.status != JobStatus.SPLITTING:
        return 0
    now = utcnow()
    kept = (Chunk.seq, Chunk.first_index, Chunk.count, Chunk.gaps, Chunk.facets, Chunk.bloom, Chunk.errors, Chunk.facts,
            Chunk.inputs, Chunk.lines, Chunk.traces)
    copied = session.execute(
        insert(Chunk).from_select(
            ["job_id", "status", "attempts", "dispatched_at", "finished_at", *(c.key for c in kept)],
            select(literal(job.id), literal(ChunkStatus.DONE.value), literal(0), literal(now, UTCDateTime()),
                   literal(now, UTCDateTime()), *kept)
            .where(Chunk.job_id == old.id, Chunk.status == ChunkStatus.DONE, Chunk.seq.between(*seqs)))
        .returning(Chunk.count)).scalars().all()
    job.lease_until = now + timedelta(seconds=lease_seconds)
    job.total, job.done = old.total, job.done + sum(copied)
    job.bytes_read = round(job.size * job.done / old.total) if old.total else 0
    job.progress_at = now
    return sum(copied)


def end_copy(job: Job, old: Job) -> bool:
    """A job whose every case was copied from an earlier job of the same file succeeds with its figures;
    whether it did (``False``: the job stopped meanwhile, or the earlier one did not hold them all)."""
    if job.status != JobStatus.SPLITTING or job.done != old.done:
        return False
    now = utcnow()
    job.status, job.copied_from = JobStatus.SUCCEEDED, old.id
    job.total, job.bytes_read, job.warnings = old.total, job.size, list(old.warnings)
    job.counts, job.distribution = dict(old.counts), {o: dict(n) for o, n in old.distribution.items()}
    job.cache_hits = job.done
    job.split_at = job.finished_at = job.progress_at = now
    job.lease_until, job.splitter = None, None
    _ended(job, now)
    return True


def drop_chunks(session: Session, job: Job) -> None:
    """Forget the chunks a splitting job copied from an earlier one that went away meanwhile: it is split
    from its upload instead."""
    session.execute(delete(Chunk).where(Chunk.job_id == job.id))
    job.done = job.total = job.bytes_read = 0


def copy_chunks(session: Session, old: Job, job: Job) -> list[int]:
    """Give a new job (a rerun) the chunks of a job that was split, ready to solve: the new job
    skips its split. Returns the new chunks' ids."""
    now = utcnow()
    rows = session.execute(select(Chunk.seq, Chunk.first_index, Chunk.count, Chunk.gaps, Chunk.inputs)
                           .where(Chunk.job_id == old.id).order_by(Chunk.seq)).all()
    if sum(row.count for row in rows) != old.total or any(row.inputs is None for row in rows):
        raise ValueError(f"job {old.id}'s cases are no longer all stored")
    chunks = [new_chunk(job.id, row.seq, row.first_index, row.count, row.gaps, row.inputs, now) for row in rows]
    session.add_all(chunks)
    job.status = JobStatus.SOLVING
    job.started_at = job.split_at = job.progress_at = now
    job.total, job.bytes_read, job.warnings = old.total, old.size, list(old.warnings)
    job.faults, job.fault_count, job.fault_case = list(old.faults), old.fault_count, old.fault_case
    session.flush()
    finish_if_complete(session, job)  # a file without cases
    return [chunk.id for chunk in chunks]


def fail(session: Session, job_id: int, reason: str, splitter: str | None = None) -> bool:
    """Fail an active job with ``reason``, removing every chunk and case it had; whether it was failed. With
    ``splitter``, only a job that split (a process name) holds, still splitting."""
    job = lock_job_with_chunks(session, job_id)
    if job is None or job.status not in ACTIVE:
        return False
    if splitter is not None and (job.status != JobStatus.SPLITTING or job.splitter != splitter):
        return False
    session.execute(delete(Chunk).where(Chunk.job_id == job_id))
    job.status = JobStatus.FAILED
    job.error = reason
    job.total = job.done = job.failed_cases = job.cache_hits = job.solve_us = job.solve_cpu_us = 0
    job.counts, job.distribution, job.solve_hist = {}, {}, []
    job.slowest_us = job.slowest_index = None
    job.finished_at = utcnow()
    job.lease_until = None
    _ended(job, job.finished_at)
    session.execute(_CHECKS_DUE, {"p_job": job_id, "p_now": job.finished_at})
    return True


def cancel(session: Session, job: Job) -> bool:
    """Cancel an unfinished job (locked with its chunks by the caller); whether it was cancelled."""
    if job.status not in UNFINISHED:
        return False
    job.status = JobStatus.CANCELLED
    job.finished_at = utcnow()
    job.lease_until = None
    session.execute(update(Chunk).where(Chunk.job_id == job.id, Chunk.status.in_(OPEN_CHUNKS))
                    .values(status=ChunkStatus.CANCELLED))
    _ended(job, job.finished_at)
    session.execute(_CHECKS_DUE, {"p_job": job.id, "p_now": job.finished_at})
    return True


def file_arrived(session: Session, job_id: int, sha256: str, size: int) -> bool:
    """The whole file of a job made while it arrived is stored (in ``session``'s transaction): the job
    takes its hash and size; whether its split is to be sent again (it stopped waiting for the file)."""
    job = lock_job(session, job_id)
    if job is None or job.deleted_at is not None:
        return False
    job.sha256, job.size = sha256, size
    if job.status == JobStatus.SPLITTING and job.lease_until is None:
        job.split_sent_at = utcnow()
        return True
    return False


def withdraw(session: Session, job_id: int) -> None:
    """Remove a job made while its file arrived, the file refused or abandoned before its end: gone for
    every read at once, as if never made (its chunks and row removed later, :mod:`worker.store.purge`)."""
    job = lock_job_with_chunks(session, job_id)
    if job is None or job.deleted_at is not None:
        return
    cancel(session, job)
    mark_deleted(job)


def mark_deleted(job: Job) -> None:
    """Delete a finished job (locked with its chunks by the caller) for every read at once: its checks,
    chunks and row are removed later, a few at a time (:mod:`worker.store.purge`)."""
    job.deleted_at = utcnow()
    job.upload_id = None


def complete(status: str, done: int, failed_cases: int, total: int) -> bool:
    """Whether a job with these counts has every case answered (``total`` is known once split)."""
    return status == JobStatus.SOLVING and done + failed_cases >= total


def finish_if_complete(session: Session, job: Job) -> bool:
    """End the job if every case is answered: succeeded, or failed when some case could not be solved
    (its judge output would be short); whether it ended."""
    if not complete(job.status, job.done, job.failed_cases, job.total):
        return False
    session.flush()  # the faults just noted, which the reason of a failure reads
    job.status, job.error = _ending(session.connection(), job.id, job.game, job.failed_cases, job.total,
                                    job.fault_count)
    job.finished_at = utcnow()
    _ended(job, job.finished_at)
    if job.status != JobStatus.SUCCEEDED:
        session.execute(_CHECKS_DUE, {"p_job": job.id, "p_now": job.finished_at})
    return True


def _ended(job: Job, now: datetime) -> None:
    """A job that has just ended (locked): its callback, if it waits for that, is due now
    (``worker.checks.notify`` sends it once the transaction commits, the sweep if that send is lost)."""
    if job.notify_state == NotifyState.WAITING:
        job.notify_state, job.notify_next_at = NotifyState.DUE, now


def partial_output(job_id: int) -> str:
    """Where a job's partial judge output is served."""
    return f"/api/jobs/{job_id}/output?partial=1"


def _ending(connection: Connection, job_id: int, game: str, failed: int, total: int, faults: int
            ) -> tuple[JobStatus, str | None]:
    """The status a complete job ends in, and why when it failed."""
    if faults:
        return JobStatus.FAILED, _faulty(connection, job_id, game, failed, total, faults)
    if not failed:
        return JobStatus.SUCCEEDED, None
    first = first_unsolved(connection, job_id)
    unit = engines.get(game).unit
    return JobStatus.FAILED, (
        f"{failed:,} of {total:,} {unit}s could not be solved within their time budget (the first is {unit} "
        f"{first}); the judge output of the others is kept as the job's partial output")


def _faulty(connection: Connection, job_id: int, game: str, failed: int, total: int, faults: int) -> str:
    """Why a job whose file has bad cases failed: the first of them, and what was kept."""
    listed, case = connection.execute(select(Job.faults, Job.fault_case).where(Job.id == job_id)).one()
    unit = engines.get(game).unit
    more = f" (and {faults - 1:,} more fault{'' if faults == 2 else 's'})" if faults > 1 else ""
    kept = (f"its {total:,} good {unit}{' is' if total == 1 else 's are'} kept" if total
            else f"no {unit} of it is good")
    if failed:
        kept += f" ({failed:,} of them could not be solved within their time budget)"
    # Where the partial output is served is the job's ``partial_output``: a sentence names no path.
    before = (f", and the judge output of the {case - 1:,} {unit}{'' if case == 2 else 's'} before the first fault "
              "is kept as the job's partial output" if case is not None and case > 1 else "")
    return f"{listed[0]['message']}{more}: the file is no valid judge file; {kept}{before}"


def resend_split(session: Session, job_id: int, now: datetime) -> None:
    """The sweep hands a job's split out again (its lease and splitter given up) and notes when it sent it."""
    session.execute(update(Job).where(Job.id == job_id).values(split_sent_at=now, lease_until=None, splitter=None))


def give_up_split(session: Session, job_id: int, splitter: str) -> None:
    """A split that failed in a living process hands the job out again, as the sweep would (the stall
    rule sends it), if it still holds it."""
    session.execute(update(Job).where(Job.id == job_id, Job.status == JobStatus.SPLITTING, Job.splitter == splitter)
                    .values(lease_until=None, splitter=None))


# --- a chunk's life (the solve path: Core statements, built once) ----------------------------


def claim_chunk(connection: Connection, chunk_id: int, worker: str, lease_until: datetime) -> Row[Any] | None:
    """Take the chunk a message named to solve: ``(id, job_id, first_index, gaps, inputs, game, status)`` (its job's
    game and status), or, when it is not to be taken, its job's next pending chunk (:func:`claim_next_chunk`);
    ``None`` when there is neither.

    A chunk is taken when pending, or when running and sent again since it was taken (``dispatched_at``,
    which a claim clears): a worker that died or a job that stalled had it sent again (``worker.jobs.sweep``),
    and the first to store it wins (:func:`finish_chunk`). A message sent before the chunk was taken
    (another solve task took it from the database first) takes the job's next chunk instead: no message
    is wasted and no chunk solved twice.
    """
    params = {"p_chunk": chunk_id, "p_me": worker, "p_lease": lease_until}
    return connection.execute(_CLAIM, params).one_or_none() or connection.execute(_CLAIM_NEXT_OF, params).one_or_none()


def claim_next_chunk(connection: Connection, job_id: int, worker: str, lease_until: datetime) -> Row[Any] | None:
    """Take the job's first pending chunk that no other transaction holds (skipped, not waited for), as
    :func:`claim_chunk` takes one; ``None`` when there is none."""
    return connection.execute(_CLAIM_NEXT, {"p_job": job_id, "p_me": worker, "p_lease": lease_until}).one_or_none()


def give_back(executor: Connection | Session, chunk_ids: list[int], worker: str, now: datetime) -> list[int]:
    """Running chunks ``worker`` took and will not finish (its task failed, or the process is gone) go
    back to pending, as sent ``now``: the next message of their job takes them, or the sweep sends them
    again. The ids of those that did (the others were stored or given back meanwhile)."""
    return list(executor.execute(
        update(Chunk).where(Chunk.id.in_(chunk_ids), Chunk.status == ChunkStatus.RUNNING, Chunk.worker == worker)
        .values(status=ChunkStatus.PENDING, worker=None, lease_until=None, dispatched_at=now)
        .returning(Chunk.id)).scalars())


def cancel_chunk(connection: Connection, chunk_id: int) -> None:
    connection.execute(_CANCEL_CHUNK, {"p_chunk": chunk_id})


def finish_chunk(connection: Connection, chunk_id: int, now: datetime, worker: str, blobs: Blobs) -> bool:
    """Mark a claimed chunk done with its results (:func:`worker.store.chunks.pack`); ``False`` when
    another delivery of it was stored first."""
    return bool(connection.execute(_FINISH_CHUNK, {
        "p_chunk": chunk_id, "p_now": now, "p_worker": worker, **{f"p_{name}": value for name, value in
                                                                   blobs._asdict().items()}}).rowcount)


@dataclass
class Progress:
    """What one stored chunk adds to its job's figures."""

    solved: int = 0
    failed: int = 0
    cache_hits: int = 0
    #: Solved cases by (outcome, number).
    numbers: Counter[tuple[str, int]] = field(default_factory=Counter)
    histogram: list[int] = field(default_factory=list)
    solve_us: int = 0
    cpu_us: int = 0
    slowest: tuple[int, int] | None = None  # (microseconds, index)


def add_progress(connection: Connection, job_id: int, chunk: Progress, now: datetime) -> JobStatus | None:
    """Add a stored chunk's figures to its job (locked last and briefly), and end the job when that was
    its last chunk; the job's status after it (``worker.work`` wakes what the job's end made ready once
    that commits). ``None``: the job was cancelled or failed meanwhile, and the caller must store
    nothing."""
    job = connection.execute(_LOCK_PROGRESS, {"p_job": job_id}).one_or_none()
    if job is None or job.status not in ACTIVE:
        return None
    rate = recent_rate(job.rate, chunk.solved + chunk.failed, job.progress_at, now)
    counts = Counter(job.counts)
    distribution: dict[str, dict[str, int]] = {o: dict(n) for o, n in job.distribution.items()}
    for (outcome, number), count in chunk.numbers.items():
        counts[outcome] += count
        by_number = distribution.setdefault(outcome, {})
        by_number[str(number)] = by_number.get(str(number), 0) + count
    histogram = ([a + b for a, b in zip(job.solve_hist, chunk.histogram, strict=True)]
                 if job.solve_hist and chunk.histogram else job.solve_hist or chunk.histogram)
    slowest_us, slowest_index = job.slowest_us, job.slowest_index
    if chunk.slowest is not None and (slowest_us is None or chunk.slowest[0] > slowest_us):
        slowest_us, slowest_index = chunk.slowest
    connection.execute(_ADD_PROGRESS, {
        "p_job": job_id, "p_solved": chunk.solved, "p_failed": chunk.failed, "p_hits": chunk.cache_hits,
        "p_counts": dict(counts), "p_distribution": distribution, "p_hist": histogram, "p_us": chunk.solve_us,
        "p_cpu": chunk.cpu_us, "p_slowest_us": slowest_us, "p_slowest_index": slowest_index, "p_rate": rate,
        "p_now": now})
    failed = job.failed_cases + chunk.failed
    if complete(job.status, job.done + chunk.solved, failed, job.total):
        status, error = _ending(connection, job_id, job.game, failed, job.total, job.fault_count)
        connection.execute(_FINISH, {"p_job": job_id, "p_now": now, "p_status": status, "p_error": error})
        if status != JobStatus.SUCCEEDED:
            connection.execute(_CHECKS_DUE, {"p_job": job_id, "p_now": now})
        return status
    return JobStatus(job.status)


#: Seconds over which a job's recent rate forgets: a chunk stored this long ago weighs 1/e of one stored now.
RATE_SECONDS = 5.0


def recent_rate(rate: float, answered: int, last: datetime | None, now: datetime) -> float:
    """What ``jobs.rate`` holds after a chunk of ``answered`` cases is stored at ``now``, the last one
    having been at ``last``: every case stored so far, each weighed down by its age (``exp(-age /
    RATE_SECONDS)``), per :data:`RATE_SECONDS`. Chunks stored at once by several processes simply
    add up, so the figure does not jump with the order they land in; :func:`current_rate` reads it.

    >>> from datetime import datetime, timedelta
    >>> t = datetime(2026, 11, 30)
    >>> recent_rate(0.0, 500, t, t)
    100.0
    >>> round(recent_rate(100.0, 500, t, t + timedelta(seconds=5)), 1)
    136.8
    """
    if answered <= 0:
        return rate
    age = max((now - last).total_seconds(), 0.0) if last is not None else 0.0
    return rate * math.exp(-age / RATE_SECONDS) + answered / RATE_SECONDS


def current_rate(rate: float, last: datetime | None, first: datetime | None, now: datetime) -> float:
    """Cases per second lately, from ``jobs.rate`` (see :func:`recent_rate`) as of ``last``: aged to
    ``now``, and scaled up while the job is younger than a few :data:`RATE_SECONDS` (``first`` is
    when it began), when fewer cases than a steady pace would have stored are in the sum yet.

    A steady 1,000 cases a second, in chunks of 100 every 0.1 s for 20 s, reads as about 1,000:

    >>> from datetime import datetime, timedelta
    >>> t, stored = datetime(2026, 11, 30), 0.0
    >>> for k in range(1, 201):
    ...     stored = recent_rate(stored, 100, t + timedelta(seconds=(k - 1) / 10), t + timedelta(seconds=k / 10))
    >>> round(current_rate(stored, t + timedelta(seconds=20), t, t + timedelta(seconds=20)), -2)
    1000.0
    """
    if last is None or rate <= 0:
        return 0.0
    aged = rate * math.exp(-max((now - last).total_seconds(), 0.0) / RATE_SECONDS)
    span = max((now - (first or last)).total_seconds(), 0.0)
    return aged / max(1 - math.exp(-span / RATE_SECONDS), 0.05)


def requeue_chunk(chunk: Chunk, now: datetime) -> None:
    """A running chunk whose lease lapsed goes back to pending (the sweep then sends it again)."""
    chunk.status = ChunkStatus.PENDING
    chunk.dispatched_at = now


#: What a claim sets, and returns: the job's game and status come in the same round trip (a claim is on
#: every chunk's path).
_TAKE = {"status": ChunkStatus.RUNNING, "attempts": Chunk.attempts + 1, "worker": bindparam("p_me"),
         "lease_until": bindparam("p_lease", type_=UTCDateTime()), "dispatched_at": None}
_TAKEN = (Chunk.id, Chunk.job_id, Chunk.first_index, Chunk.gaps, Chunk.inputs,
          select(Job.game).where(Job.id == Chunk.job_id).scalar_subquery().label("game"),
          select(Job.status).where(Job.id == Chunk.job_id).scalar_subquery().label("status"))
_CLAIM = (update(Chunk)
          .where(Chunk.id == bindparam("p_chunk"), Chunk.inputs.is_not(None),
                 (Chunk.status == ChunkStatus.PENDING)
                 | ((Chunk.status == ChunkStatus.RUNNING) & Chunk.dispatched_at.is_not(None)))
          .values(**_TAKE).returning(*_TAKEN))


def _claim_next(job: Any) -> Any:
    """The claim of ``job``'s first pending chunk (by ``seq``) that no other transaction has locked."""
    other = aliased(Chunk)  # not the row being updated
    first = (select(other.id).where(other.job_id == job, other.status == ChunkStatus.PENDING, other.inputs.is_not(None))
             .order_by(other.seq).limit(1).with_for_update(skip_locked=True).scalar_subquery())
    return (update(Chunk).where(Chunk.id == first, Chunk.status == ChunkStatus.PENDING)
            .values(**_TAKE).returning(*_TAKEN))


_CLAIM_NEXT = _claim_next(bindparam("p_job"))
_NAMED = aliased(Chunk)
_CLAIM_NEXT_OF = _claim_next(select(_NAMED.job_id).where(_NAMED.id == bindparam("p_chunk")).scalar_subquery())
_CANCEL_CHUNK = update(Chunk).where(Chunk.id == bindparam("p_chunk")).values(status=ChunkStatus.CANCELLED)
_FINISH_CHUNK = (update(Chunk)
                 .where(Chunk.id == bindparam("p_chunk"), Chunk.status.in_(OPEN_CHUNKS))
                 .values(status=ChunkStatus.DONE, lease_until=None, worker=bindparam("p_worker"),
                         lines=bindparam("p_lines", type_=LargeBinary),
                         facts=bindparam("p_facts", type_=LargeBinary),
                         traces=bindparam("p_traces", type_=LargeBinary),
                         facets=bindparam("p_facets", type_=LargeBinary),
                         bloom=bindparam("p_bloom", type_=LargeBinary),
                         errors=bindparam("p_errors", type_=JSON),
                         finished_at=bindparam("p_now", type_=UTCDateTime())))
_LOCK_PROGRESS = (select(Job.status, Job.game, Job.total, Job.done, Job.failed_cases, Job.fault_count,
                         Job.counts, Job.distribution, Job.solve_hist, Job.slowest_us, Job.slowest_index, Job.rate,
                         Job.progress_at)
                  .where(Job.id == bindparam("p_job")).with_for_update(**JOB_LOCK))
_ADD_PROGRESS = update(Job).where(Job.id == bindparam("p_job")).values(
    done=Job.done + bindparam("p_solved", type_=Integer),
    failed_cases=Job.failed_cases + bindparam("p_failed", type_=Integer),
    cache_hits=Job.cache_hits + bindparam("p_hits", type_=Integer),
    counts=bindparam("p_counts", type_=JSON), distribution=bindparam("p_distribution", type_=JSON),
    solve_hist=bindparam("p_hist", type_=JSON),
    solve_us=Job.solve_us + bindparam("p_us", type_=BigInteger),
    solve_cpu_us=Job.solve_cpu_us + bindparam("p_cpu", type_=BigInteger),
    slowest_us=bindparam("p_slowest_us", type_=Integer), slowest_index=bindparam("p_slowest_index", type_=Integer),
    rate=bindparam("p_rate", type_=Float), progress_at=bindparam("p_now", type_=UTCDateTime()))
_WAITING = Job.notify_state == NotifyState.WAITING
_FINISH = update(Job).where(Job.id == bindparam("p_job")).values(
    status=bindparam("p_status"), error=bindparam("p_error"), finished_at=bindparam("p_now", type_=UTCDateTime()),
    # A callback waiting for the end is due now (as :func:`_ended` makes it).
    notify_state=case((_WAITING, NotifyState.DUE.value), else_=Job.notify_state),
    notify_next_at=case((_WAITING, bindparam("p_now", type_=UTCDateTime())), else_=Job.notify_next_at))
#: A job ended without a judge output: its pending checks never will be judged, so their callbacks are due
#: (a check's view shows it failed).
_CHECKS_DUE = update(Check).where(
    Check.job_id == bindparam("p_job"), Check.status == CheckStatus.PENDING,
    Check.notify_state == NotifyState.WAITING).values(
    notify_state=NotifyState.DUE, notify_next_at=bindparam("p_now", type_=UTCDateTime()))

def new_chunk(job_id: int, seq: int, first_index: int, count: int, gaps: list[Any] | None, inputs: bytes,
              now: datetime) -> Chunk:
    """A chunk of a job's cases as the split stores it (``gaps``: the numbers they skip, ``Chunk.gaps``):
    pending, about to be sent out."""
    return Chunk(job_id=job_id, seq=seq, first_index=first_index, count=count, gaps=gaps, inputs=inputs,
                 status=ChunkStatus.PENDING, attempts=0, dispatched_at=now)
