"""When checks are sent to be run: those of a job that has just succeeded (:func:`wake`, by whoever
ended the job, once that has committed), and those whose message was lost (:func:`resend_lost`, by
the recovery sweep). See :mod:`worker.checks.lifecycle` for why no check is forgotten."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select

from worker.config import Settings
from worker.jobs.dispatch import Dispatcher
from worker.states import CheckStatus, JobStatus
from worker.store.database import Database
from worker.store.models import Check, Job


def wake(db: Database, dispatcher: Dispatcher, job_id: int) -> None:
    """Send the pending checks of a job that has just ended to be run."""
    with db.session(write=False) as session:
        ids = list(session.scalars(select(Check.id).where(Check.job_id == job_id,
                                                          Check.status == CheckStatus.PENDING)))
    for check_id in ids:
        dispatcher.check(check_id)


def resend_lost(db: Database, settings: Settings, dispatcher: Dispatcher, now: datetime) -> int:
    """Send again every pending check of a job that succeeded ``stall_seconds`` before ``now`` that no run
    holds: its message was lost. Returns how many were sent (the sweep does this while the broker's
    queue is empty)."""
    ended_before = now - timedelta(seconds=settings.stall_seconds)
    with db.session(write=False) as session:
        ids = list(session.scalars(
            select(Check.id).join(Job, Job.id == Check.job_id)
            .where(Check.status == CheckStatus.PENDING, Job.status == JobStatus.SUCCEEDED,
                   Job.finished_at < ended_before, Job.deleted_at.is_(None), (Check.lease_until.is_(None)) | (Check.lease_until < now))))
    for check_id in ids:
        dispatcher.check(check_id)
    return len(ids)
