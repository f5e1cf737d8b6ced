"""The check state machine (:class:`worker.states.CheckStatus`): the only code that changes a check's
status. A check is made ``pending`` (with its job locked), claimed by a run, its parts stored, ended
``done`` (or ``failed``).

No lost wakeup: a check is made with its job row locked (``worker.jobs.lifecycle.lock_job``,
the lock every transaction that ends a job takes too). Either the job had already ended, and
the check's maker sends it to be run, or the check was stored before the job could end, and
whoever ends the job wakes it (:func:`worker.checks.wake.wake`) after that commit. A message
lost on the way is sent again by the recovery sweep (:func:`worker.checks.wake.resend_lost`).

A run claims the check with a lease and a new ``attempt``: the parts it stores carry it, and
only the parts of the attempt that ended the check count, so two runs at once (or one that
died half-way) store nothing twice.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import asdict
from datetime import timedelta
from typing import Any, NamedTuple

from sqlalchemy import case, delete, literal, select, update
from sqlalchemy.orm import Session

from worker.checks.compare import Part, Report
from worker.jobs.intake import clean_filename
from worker.states import CheckStatus, JobStatus, NotifyState
from worker.store.codecs import compress
from worker.store.database import Database
from worker.store.models import Check, CheckPart, Job, UTCDateTime, utcnow
from worker.store.uploads import StoredUpload, release


class Claim(NamedTuple):
    attempt: int
    job_id: int
    upload_id: int | None


def new_check(session: Session, job: Job, upload: StoredUpload, filename: str, owner: str | None) -> Check:
    """A pending check of an output against ``job`` (locked by the caller), listed on the job; ``owner``
    sent the output."""
    check = Check(job_id=job.id, upload_id=upload.id, filename=clean_filename(filename), size=upload.size,
                  sha256=upload.sha256, status=CheckStatus.PENDING, counts={}, lines=0, attempt=0, owner=owner)
    session.add(check)
    session.flush()
    job.check_ids = [*job.check_ids, check.id]
    return check


def claim(db: Database, check_id: int, lease_seconds: float) -> Claim | None:
    """Take a pending check of a succeeded job to run, unless another run holds it."""
    now = utcnow()
    with db.session() as session:
        check = session.get(Check, check_id, with_for_update=True)
        if check is None or check.status != CheckStatus.PENDING:
            return None
        if check.lease_until is not None and check.lease_until > now:
            return None
        status = session.scalar(select(Job.status).where(Job.id == check.job_id))
        if status != JobStatus.SUCCEEDED:
            return None  # it is woken when its job ends; a failed job's check shows as failed
        check.attempt += 1
        check.lease_until = now + timedelta(seconds=lease_seconds)
        return Claim(check.attempt, check.job_id, check.upload_id)


def let_go(db: Database, check_id: int, attempt: int) -> None:
    """Give up a run's claim, so that the next run need not wait for its lease (best effort: the
    database may be what failed)."""
    with suppress(Exception), db.session() as session:  # else the lease runs out by itself
        session.execute(update(Check).where(Check.id == check_id, Check.attempt == attempt,
                                            Check.status == CheckStatus.PENDING).values(lease_until=None))


def save_parts(db: Database, check_id: int, attempt: int, parts: list[Part], lease_seconds: float) -> None:
    """Store parts of a run's verdicts and renew its lease."""
    with db.session() as session:
        session.add_all(CheckPart(check_id=check_id, attempt=attempt, seq=part.seq, first_line=part.first,
                                  count=len(part.verdicts), counts=part.counts(), verdicts=compress(part.verdicts),
                                  got=compress(b"\n".join(part.got))) for part in parts)
        session.execute(update(Check).where(Check.id == check_id, Check.attempt == attempt)
                        .values(lease_until=utcnow() + timedelta(seconds=lease_seconds)))


def finish(db: Database, check_id: int, attempt: int, report: Report) -> bool:
    """End a check with its run's report; ``False`` when another run ended it first."""
    first = asdict(report.differences[0]) if report.differences else None
    return _end(db, check_id, attempt, status=CheckStatus.DONE, verdict=report.verdict, counts=report.counts,
                first_difference=first, lines=report.lines)


def fail(db: Database, check_id: int, attempt: int, reason: str) -> bool:
    """End a check whose output cannot be judged (it is lost, or no text after all)."""
    return _end(db, check_id, attempt, status=CheckStatus.FAILED, error=reason)


def _end(db: Database, check_id: int, attempt: int, **values: Any) -> bool:
    with db.session() as session:
        now, waiting = utcnow(), Check.notify_state == NotifyState.WAITING
        # A callback waiting for the end is due now (``worker.checks.notify`` sends it).
        ended = session.execute(update(Check).where(Check.id == check_id, Check.attempt == attempt,
                                                    Check.status == CheckStatus.PENDING)
                                .values(finished_at=now, lease_until=None, **values,
                                        notify_state=case((waiting, NotifyState.DUE.value), else_=Check.notify_state),
                                        notify_next_at=case((waiting, literal(now, UTCDateTime())),
                                                            else_=Check.notify_next_at))).rowcount
        # The check keeps the parts of the run that ended it; a run that came too late removes its own.
        mine = CheckPart.attempt == attempt
        session.execute(delete(CheckPart).where(CheckPart.check_id == check_id, ~mine if ended else mine))
        upload_id = session.scalar(select(Check.upload_id).where(Check.id == check_id)) if ended else None
    if ended:
        release(db, upload_id)  # a done check keeps what it needs of its output in its parts
    return bool(ended)
