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
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select

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
    stall = now - timedelta(seconds=settings.stall_seconds)
    gone_since = now - timedelta(seconds=settings.worker_timeout)
    # A chunk claimed moments ago may belong to a worker whose first heartbeat is not written yet.
    claimed_before = now + timedelta(seconds=settings.lease_seconds - settings.worker_timeout)
    report = {"chunks": 0, "splits": 0, "finished": 0}
    if queue_empty is None:
        queue_empty = dispatcher.queue_depth() == 0
    resend: dict[int, None] = {}
    splits: list[int] = []
    orphaned: set[int] = set()  # jobs a gone worker held chunks of
    held_before = outage.held_before if outage is not None else None
    with db.session() as session:
        alive = set(session.scalars(select(WorkerRow.name).where(WorkerRow.seen_at >= gone_since)))
        running = session.scalars(
            select(Chunk).join(Job).where(Job.status.in_(ACTIVE), Chunk.status == ChunkStatus.RUNNING)).all()
        for chunk in running:
            lost = owner(chunk.worker) not in alive and chunk.lease_until is not None \
                and chunk.lease_until < claimed_before
            if lost or (chunk.lease_until is not None and chunk.lease_until < now):
                lifecycle.requeue_chunk(chunk, now)
                resend[chunk.id] = None
                orphaned.add(chunk.job_id)
            elif _taken_before(chunk.lease_until, held_before, settings):
                lifecycle.requeue_chunk(chunk, now)
                resend[chunk.id] = None
        for job in session.scalars(select(Job).where(Job.status.in_(UNFINISHED))).all():
            stalled = (job.progress_at or job.created_at) < stall
            if _unclaimed(job):
                # A split sent twice may be split twice at once (stored once): after an outage too, only while
                # the queue is empty (its messages lost, or waiting out their tasks' retries).
                sent = job.split_sent_at or job.created_at
                split_again = queue_empty and (outage is not None or sent < stall)
            else:
                split_again = job.status == JobStatus.SPLITTING and (
                    _split_lost(job, alive, now, claimed_before)
                    or _taken_before(job.lease_until, held_before, settings))
            if split_again:
                splits.append(job.id)
            if job.status in ACTIVE and outage is not None:
                for chunk in session.scalars(select(Chunk).where(Chunk.job_id == job.id,
                                                                 Chunk.status == ChunkStatus.PENDING)):
                    chunk.dispatched_at = now
                    resend[chunk.id] = None
            if job.status in ACTIVE and queue_empty and (stalled or job.id in orphaned):
                for chunk in session.scalars(select(Chunk).where(
                        Chunk.job_id == job.id, Chunk.status.in_((ChunkStatus.PENDING, ChunkStatus.RUNNING)),
                        (Chunk.dispatched_at.is_(None)) | (Chunk.dispatched_at < stall) | (Chunk.id.in_(resend)))):
                    chunk.dispatched_at = now
                    resend[chunk.id] = None
            report["finished"] += lifecycle.finish_if_complete(session, job)
        for job_id in splits:
            lifecycle.resend_split(session, job_id, now)
    withdraw_abandoned(db)
    for job_id in splits:
        dispatcher.split(job_id)
    if resend:
        dispatcher.solve(list(resend))
    report["chunks"], report["splits"] = len(resend), len(splits)
    return report


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
