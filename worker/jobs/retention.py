"""Retention: what the service stops keeping by itself, marked for the purge (:mod:`worker.store.purge`).

The workers' sweep runs :func:`expire` (through :func:`worker.work.sweep`):

- the upload of a job that failed or was cancelled is kept ``keep_uploads_hours`` after the
  job ended (a re-run within that time splits it again), then released like any upload no job
  needs (another job still waiting to read it keeps it);
- a finished job is deleted ``keep_days`` after it ended (per role of its owner's key), exactly as a
  delete by hand: gone for every read at once, its rows removed by the purge.

Each run marks a bounded number of rows (``delete_batch_rows`` a kind), so that the sweep stays short;
the next run goes on where it stopped.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import or_, select, true, update

from worker.config import Settings
from worker.jobs import lifecycle
from worker.jobs.service import mark_deleted
from worker.states import FINISHED, NO_OUTPUT
from worker.store.database import Database
from worker.store.models import ApiKey, Job, utcnow
from worker.store.uploads import release


def expire(db: Database, settings: Settings, now: datetime | None = None) -> dict[str, int]:
    """Release the uploads and delete the jobs kept past their time; how many of each."""
    now = now or utcnow()
    return {"uploads": _expire_uploads(settings, db, now), "jobs": _expire_jobs(settings, db, now)}


def _expire_uploads(settings: Settings, db: Database, now: datetime) -> int:
    if not settings.keep_uploads_hours:
        return 0
    ended = now - timedelta(hours=settings.keep_uploads_hours)
    kept_past = (Job.status.in_(NO_OUTPUT), Job.finished_at < ended, Job.upload_id.is_not(None))
    with db.session() as session:
        uploads = set(session.scalars(select(Job.upload_id).where(*kept_past).limit(settings.delete_batch_rows)))
        session.execute(update(Job).where(*kept_past, Job.upload_id.in_(uploads)).values(upload_id=None))
    for upload in uploads:
        release(db, upload)
    return len(uploads)


def _expire_jobs(settings: Settings, db: Database, now: datetime) -> int:
    """Delete the jobs past ``keep_days``: by the role of their owner's key, the bare number for the rest
    (a job made in open mode, an owner whose key is gone or of a role not named)."""
    keep = settings.keep_days
    role = select(ApiKey.role).where(ApiKey.name == Job.owner).scalar_subquery()
    rules = [(role == name, days) for name, days in keep.roles]
    if keep.rest is not None:
        named = [name for name, _ in keep.roles]
        rules.append((role.is_(None) | role.not_in(named) if named else true(), keep.rest))
    if not rules:
        return 0
    with db.session(write=False) as session:
        expired = session.scalars(select(Job.id).where(
            Job.deleted_at.is_(None), Job.status.in_(FINISHED),
            or_(*(which & (Job.finished_at < now - timedelta(days=days)) for which, days in rules)))
            .order_by(Job.id).limit(settings.delete_batch_rows)).all()
    for job_id in expired:
        with db.session() as session:
            job = lifecycle.lock_job_with_chunks(session, job_id)
            if job is None or job.deleted_at is not None or job.status not in FINISHED:
                continue
            uploads = mark_deleted(session, job)
        for upload in uploads:
            release(db, upload)
    return len(expired)
