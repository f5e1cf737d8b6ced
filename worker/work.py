"""The work a worker does, as plain functions of (database, settings, id, dispatcher): split a job, solve a chunk,
judge a check, make a callback, and the recovery sweep.

The Celery tasks (:mod:`worker.runner.tasks`) and the tests' in-process dispatcher both call
these, so a test runs exactly what a worker runs. Each does its floor's work
(:mod:`worker.jobs.split`, :mod:`worker.jobs.solve`, :mod:`worker.checks.run`,
:mod:`worker.jobs.sweep`), then wakes what that work made ready: a job that has just
succeeded sends its pending checks to be judged (once the transaction that ended it has
committed), a job or a check that ended sends its callback (``notify_url``), and the sweep sends
again the checks and callbacks whose message was lost (and the callbacks whose retry is due). The floors below
never send work for the floors above.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from worker.checks import wake
from worker.checks.notify import Notices
from worker.checks.run import run_check
from worker.config import Settings
from worker.jobs import retention
from worker.jobs import sweep as jobs_sweep
from worker.jobs.dispatch import Dispatcher, send_quietly
from worker.jobs.rehearsal import rehearse
from worker.jobs.solve import solve_chunk
from worker.jobs.split import split_job
from worker.states import FINISHED, JobStatus
from worker.store import purge as store_purge
from worker.store.database import Database
from worker.store.models import utcnow


def warm(db: Database, settings: Settings) -> None:
    """Do now what a process's first task would do first, so that a job is not kept waiting by it: open a
    database connection (kept in the process's pool) and rehearse a job's split and solve on it, rolled
    back (:mod:`worker.jobs.rehearsal`)."""
    rehearse(db, settings)


def split(db: Database, settings: Settings, job_id: int, dispatcher: Dispatcher) -> None:
    """Split a job into chunks, each sent to ``dispatcher`` as soon as it is stored."""
    status = split_job(db, settings, job_id, dispatcher)
    if status == JobStatus.SUCCEEDED:
        wake.wake(db, dispatcher, job_id)
    if status in FINISHED:
        Notices(db, settings, dispatcher).send_due(job_id=job_id)


def solve(db: Database, settings: Settings, chunk_id: int, dispatcher: Dispatcher) -> None:
    """Solve a chunk and store its cases, and the job's next ones for a moment (a run); a run cut short by
    its time sends a message to go on with the job (after the jobs queued meanwhile: each takes its turn)."""
    stored = solve_chunk(db, settings, chunk_id)
    if stored is None:
        return
    if stored.status == JobStatus.SUCCEEDED:
        wake.wake(db, dispatcher, stored.job_id)
    elif stored.cut_short:
        send_quietly(lambda: dispatcher.solve([stored.chunk_id]))
    if stored.status in FINISHED:
        Notices(db, settings, dispatcher).send_due(job_id=stored.job_id)


def check(db: Database, settings: Settings, check_id: int, dispatcher: Dispatcher) -> None:
    """Judge a check, then send its callback if it ended."""
    run_check(db, settings, check_id)
    Notices(db, settings, dispatcher).send_due(check_id=check_id)


def notify(db: Database, settings: Settings, kind: str, ident: int, dispatcher: Dispatcher) -> None:
    """Make the callback of a job or a check (``kind``) that is due (:mod:`worker.checks.notify`)."""
    Notices(db, settings, dispatcher).send(kind, ident)


def sweep(db: Database, settings: Settings, dispatcher: Dispatcher, now: datetime | None = None,
          outage: jobs_sweep.Outage | None = None) -> dict[str, int]:
    """The recovery sweep (:func:`worker.jobs.sweep.sweep`; ``outage``: run right after one), and, while the
    broker's queue is empty, every pending check of a job that succeeded ``stall_seconds`` ago that no run
    holds sent again, and every due callback whose time has come (a retry's, a lost send's: ``notices``);
    then the uploads and jobs kept past their time are marked for the purge (:mod:`worker.jobs.retention`).
    Returns what it did: the jobs' sweep's report with the ``checks`` sent and the ``expired`` uploads and
    jobs."""
    now = now or utcnow()
    queue_empty = dispatcher.queue_depth() == 0
    report = jobs_sweep.sweep(db, settings, dispatcher, now, queue_empty=queue_empty, outage=outage)
    report["checks"] = wake.resend_lost(db, settings, dispatcher, now) if queue_empty else 0
    report["notices"] = Notices(db, settings, dispatcher).resend_due(now)
    expired = retention.expire(db, settings, now)
    report["expired_uploads"], report["expired_jobs"] = expired["uploads"], expired["jobs"]
    return report


def purge(db: Database, settings: Settings, more: Callable[[], bool] = lambda: True) -> list[store_purge.Batch]:
    """Remove what deletes and expiry marked, in short transactions (:mod:`worker.store.purge`), until none
    is left or ``more()`` says stop; the batches."""
    return store_purge.purge(db, settings.delete_batch_rows, settings.delete_batch_bytes, more,
                             settings.vacuum_bytes)
