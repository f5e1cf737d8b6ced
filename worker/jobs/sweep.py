"""The recovery sweep: hand out again what a lost worker or a lost queue left behind.

Every worker's heartbeat runs it (``worker.runner.heartbeat``), so there is no separate
scheduler to keep alive; running it twice at once sends some work twice, which the
solve path stores once.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select

from worker.config import Settings
from worker.jobs import lifecycle
from worker.jobs.dispatch import Dispatcher
from worker.jobs.states import ACTIVE, UNFINISHED, ChunkStatus, JobStatus
from worker.store.database import Database
from worker.store.models import Chunk, Job, utcnow
from worker.store.uploads import discard_stale


def sweep(settings: Settings, dispatcher: Dispatcher, now: datetime | None = None) -> dict[str, int]:
    """Send again what was lost; finish what is complete. Returns what it did.

    - a running chunk whose lease ran out goes back to pending and is sent again;
    - a queued job, or a splitting one whose split lease ran out, is split again;
    - when the broker's queue is empty, the pending chunks of a job that made no
      progress for ``stall_seconds`` are sent again (their messages were lost).
    """
    now = now or utcnow()
    stall = now - timedelta(seconds=settings.stall_seconds)
    report = {"chunks": 0, "splits": 0, "finished": 0}
    queue_empty = dispatcher.queue_depth() == 0
    resend: list[int] = []
    splits: list[int] = []
    with Database.of(settings).session() as session:
        expired = session.scalars(
            select(Chunk).join(Job).where(Job.status.in_(ACTIVE), Chunk.status == ChunkStatus.RUNNING,
                                          Chunk.lease_until < now)).all()
        for chunk in expired:
            lifecycle.requeue_chunk(chunk, now)
            resend.append(chunk.id)
        for job in session.scalars(select(Job).where(Job.status.in_(UNFINISHED))).all():
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
            report["finished"] += lifecycle.succeed_if_complete(job)
        for job_id in splits:
            lifecycle.resend_split(session, job_id, now)
    discard_stale(Database.of(settings))
    for job_id in splits:
        dispatcher.split(job_id)
    if resend:
        dispatcher.solve(resend)
    report["chunks"], report["splits"] = len(resend), len(splits)
    return report
