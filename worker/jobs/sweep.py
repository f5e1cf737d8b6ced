"""The recovery sweep: hand out again what a lost worker or a lost queue left behind.

Every worker's heartbeat thread runs it (through :func:`worker.work.sweep`, which sends lost
checks again too), so there is no separate scheduler to keep alive; running it twice at once sends some work twice, which
the solve path stores once. Recovery follows liveness, not leases: a worker whose
heartbeat stops for ``worker_timeout`` seconds has its chunks and its split handed out
again at the next sweep; the lease only catches a living worker whose task hangs.

No send is trusted: every unfinished job carries in its rows when its work was last handed out
(a split no split holds: ``jobs.split_sent_at``, or when the job was made; a chunk:
``dispatched_at``), and whatever has not moved for ``stall_seconds`` since is sent again while the
broker's queue is empty. A send that failed, or a message the broker lost, so costs one stall
period, whichever process died or whichever broker was down when.

Right after an outage (:class:`Outage`: a worker's heartbeat reaches the database again, or its consumer
the broker) no period is waited for: whatever may have lost its message meanwhile is sent again at once,
and after a database outage so is what was held from before it (a task that failed while the database
was away could not give it back). Sending too much costs nothing but a message: a chunk is stored once,
whichever delivery comes first (:func:`lifecycle.finish_chunk`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from worker.config import Settings
from worker.jobs import lifecycle
from worker.jobs.arriving import withdraw_abandoned
from worker.jobs.dispatch import Dispatcher, owner, send_quietly
from worker.states import ACTIVE, UNFINISHED, ChunkStatus, JobStatus
from worker.store.database import Database
from worker.store.models import ARRIVING, Chunk, Job, WorkerRow, utcnow


@dataclass(frozen=True)
class Outage:
    """What the sweep run right after an outage is told of it."""

    #: The database was away from this moment on (as first seen: a heartbeat or a task that failed): a chunk
    #: or a split taken before it may have been left by a task that failed meanwhile. ``None``: only the
    #: broker was.
    held_before: datetime | None = None


def sweep(db: Database, settings: Settings, dispatcher: Dispatcher, now: datetime | None = None,
          queue_empty: bool | None = None, outage: Outage | None = None) -> dict[str, int]:
    """Send again what was lost; finish what is complete. Returns what it did.

    - a running chunk whose worker is gone (no heartbeat for ``worker_timeout``), or whose
      lease ran out, goes back to pending and is sent again;
    - a splitting job whose splitter is gone, or whose split lease ran out, is handed out again
      (no splitter, no lease) and sent;
    - the uploads of web processes that died mid-upload are dropped, the jobs made while they arrived
      withdrawn (:func:`withdraw_abandoned`);
    - when the broker's queue is empty: a queued job, or a split handed out that no split took, sent
      ``stall_seconds`` ago is sent again (whether that send reached the broker or not), and every
      unfinished chunk of a job that made no progress for ``stall_seconds`` (or that a gone worker
      held chunks of) is sent again, running ones included;
    - right after an ``outage``: every pending chunk of an active job is sent again at once, whatever the
      queue holds (a message naming a chunk already taken takes its job's next one), and so is every split
      no split holds while the queue is empty; after a database outage, every running chunk and every split
      taken before it went away (``Outage.held_before``) is handed out again and sent.

    ``queue_empty``: what the caller found the broker's queue to be, else asked here.
    """
    now = now or utcnow()
    if queue_empty is None:
        queue_empty = dispatcher.queue_depth() == 0
    found = _Round(settings, now, queue_empty, outage)
    with db.session() as session:
        found.alive = set(session.scalars(select(WorkerRow.name).where(WorkerRow.seen_at >= found.gone_since)))
        _requeue_lost_chunks(session, found)
        for job in session.scalars(select(Job).where(Job.status.in_(UNFINISHED))).all():
            _sweep_job(session, job, found)
        for job_id in found.splits:
            lifecycle.resend_split(session, job_id, now)
    withdraw_abandoned(db)
    for job_id in found.splits:
        dispatcher.split(job_id)
    if found.resend:
        dispatcher.solve(list(found.resend))
    return {"chunks": len(found.resend), "splits": len(found.splits), "finished": found.finished}


@dataclass
class _Round:
    """One sweep: its moments, and what it found to send again."""

    settings: Settings
    now: datetime
    queue_empty: bool
    outage: Outage | None
    #: The workers whose heartbeat is fresh.
    alive: set[str] = field(default_factory=set)
    #: The chunks to send again, in the order found.
    resend: dict[int, None] = field(default_factory=dict)
    #: The jobs whose split is to be sent again.
    splits: list[int] = field(default_factory=list)
    #: The jobs a gone worker held chunks of.
    orphaned: set[int] = field(default_factory=set)
    finished: int = 0

    @property
    def stall(self) -> datetime:
        return self.now - timedelta(seconds=self.settings.stall_seconds)

    @property
    def gone_since(self) -> datetime:
        return self.now - timedelta(seconds=self.settings.worker_timeout)

    @property
    def claimed_before(self) -> datetime:
        # A chunk claimed moments ago may belong to a worker whose first heartbeat is not written yet.
        return self.now + timedelta(seconds=self.settings.lease_seconds - self.settings.worker_timeout)

    @property
    def held_before(self) -> datetime | None:
        return self.outage.held_before if self.outage is not None else None


def _requeue_lost_chunks(session: Session, found: _Round) -> None:
    """The running chunks of active jobs whose worker is gone or whose lease ran out, and after a database
    outage those taken before it, back to pending, to be sent again."""
    running = session.scalars(
        select(Chunk).join(Job).where(Job.status.in_(ACTIVE), Chunk.status == ChunkStatus.RUNNING)).all()
    for chunk in running:
        lost = owner(chunk.worker) not in found.alive and chunk.lease_until is not None \
            and chunk.lease_until < found.claimed_before
        if lost or (chunk.lease_until is not None and chunk.lease_until < found.now):
            lifecycle.requeue_chunk(chunk, found.now)
            found.resend[chunk.id] = None
            found.orphaned.add(chunk.job_id)
        elif _taken_before(chunk.lease_until, found.held_before, found.settings):
            lifecycle.requeue_chunk(chunk, found.now)
            found.resend[chunk.id] = None


def _sweep_job(session: Session, job: Job, found: _Round) -> None:
    """One unfinished job: its split sent again when lost, its chunks when lost or after an outage, and
    the job finished when it is complete."""
    stalled = (job.progress_at or job.created_at) < found.stall
    if _split_again(job, found):
        found.splits.append(job.id)
    if job.status in ACTIVE and found.outage is not None:
        _resend(session, found, Chunk.job_id == job.id, Chunk.status == ChunkStatus.PENDING)
    if job.status in ACTIVE and found.queue_empty and (stalled or job.id in found.orphaned):
        _resend(session, found, Chunk.job_id == job.id,
                Chunk.status.in_((ChunkStatus.PENDING, ChunkStatus.RUNNING)),
                (Chunk.dispatched_at.is_(None)) | (Chunk.dispatched_at < found.stall) | (Chunk.id.in_(found.resend)))
    found.finished += lifecycle.finish_if_complete(session, job)


def _split_again(job: Job, found: _Round) -> bool:
    """Whether the job's split is to be sent again."""
    if _unclaimed(job):
        # A split sent twice may be split twice at once (stored once): after an outage too, only while
        # the queue is empty (its messages lost, or waiting out their tasks' retries).
        sent = job.split_sent_at or job.created_at
        return found.queue_empty and (found.outage is not None or sent < found.stall)
    return job.status == JobStatus.SPLITTING and (
        _split_lost(job, found.alive, found.now, found.claimed_before)
        or _taken_before(job.lease_until, found.held_before, found.settings))


def _resend(session: Session, found: _Round, *where: Any) -> None:
    """The chunks ``where`` says, marked sent now, to be sent again."""
    for chunk in session.scalars(select(Chunk).where(*where)):
        chunk.dispatched_at = found.now
        found.resend[chunk.id] = None


def give_back_gone(db: Database, dispatcher: Dispatcher, worker: str, alive: Callable[[int], bool]) -> int:
    """The running chunks of ``worker``'s pool processes that are gone (``alive(pid)`` says not) given back
    and sent again: how many. A worker runs it at each heartbeat, which a killed pool process does not stop
    (the worker replaces the process and beats on); the chunk's message, delivered again, cannot tell its
    process is gone: it takes its job's next chunk instead (``lifecycle.claim_chunk``)."""
    prefix = f"{worker}:"
    now = utcnow()
    with db.session() as session:
        held: dict[str, list[int]] = {}
        for ident, name in session.execute(select(Chunk.id, Chunk.worker).where(
                Chunk.status == ChunkStatus.RUNNING, Chunk.worker.startswith(prefix, autoescape=True))):
            pid = name[len(prefix):]
            if pid.isdigit() and not alive(int(pid)):
                held.setdefault(name, []).append(ident)
        sent = [ident for name, ids in held.items() for ident in lifecycle.give_back(session, ids, name, now)]
    if sent:
        send_quietly(lambda: dispatcher.solve(sent))
    return len(sent)


def _taken_before(lease_until: datetime | None, held_before: datetime | None, settings: Settings) -> bool:
    """Whether a chunk or a split under this lease was taken (or its lease last renewed) before
    ``held_before``."""
    return held_before is not None and lease_until is not None \
        and lease_until - timedelta(seconds=settings.lease_seconds) < held_before


def _unclaimed(job: Job) -> bool:
    """Whether a job's split is to be sent and no split holds it: queued, or handed out again (by a
    sweep, or by a split that failed) and not taken since. A split that let its job go while the file
    arrives is sent by the file's end (``worker.jobs.arriving``)."""
    return job.status == JobStatus.QUEUED or (job.status == JobStatus.SPLITTING and job.lease_until is None
                                              and job.sha256 != ARRIVING)


def _split_lost(job: Job, alive: set[str], now: datetime, claimed_before: datetime) -> bool:
    """Whether a splitting job's split died: its worker is gone, or its lease ran out."""
    if job.lease_until is None:
        return False
    if job.lease_until < now:
        return True
    return owner(job.splitter) not in alive and job.lease_until < claimed_before
