"""Read models of jobs: every question the pages and the API ask of a job and of the list of jobs, answered
from the database alone, as typed views (a job's cases: :mod:`worker.jobs.cases`; the service as a whole:
:mod:`worker.jobs.overview`).

Nothing here reads in proportion to the history: a job's figures come from its row, the judge output
and the input from its chunks in order.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Collection, Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from typing import NamedTuple

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from worker import engines
from worker.engines.reading import Diagnostic
from worker.jobs.errors import Conflict, Invalid, NotFound
from worker.jobs.filters import MAX_PER_PAGE
from worker.jobs.lifecycle import current_rate, partial_output
from worker.jobs.views import (
    ContextLineView,
    DiagnosticView,
    DistributionView,
    FaultView,
    JobPage,
    JobView,
    NotifyView,
    NumberCount,
    SlowestCase,
    TimingsView,
)
from worker.states import ACTIVE, JobStatus, NotifyState
from worker.store.chunks import job_inputs, judge_output
from worker.store.database import Database
from worker.store.models import OWNER_LENGTH, SOLVE_BUCKETS_US, Check, Job, Notified, case_id, utcnow
from worker.store.owners import EVERYTHING, Viewer

#: The longest file name filter (a stored name is at most as long).
MAX_FILENAME_FILTER = 255
#: A running job that answered no case for this long is shown as stalled (no time left is guessed).
STALLED_AFTER = timedelta(seconds=15)


def expected_cases(job: Job) -> int:
    """The cases a job's file holds: counted once read, estimated from the bytes read so far until then."""
    if job.split_at is None and job.bytes_read and job.size:
        return max(job.total, round(job.total * job.size / job.bytes_read))
    return job.total


def remaining_cases(job: Job) -> int:
    """Cases of a job not answered yet (never below none: while the file is read, the cases solved can run
    ahead of those counted read)."""
    return max(expected_cases(job) - job.done - job.failed_cases, 0)


def percentile_bound(histogram: list[int], share: float) -> int | None:
    """The solve time within which ``share`` of the cases counted in ``histogram`` (one count per bucket of
    ``SOLVE_BUCKETS_US``, then the rest) were solved: the upper edge of the bucket that holds that
    percentile (``None`` when nothing is counted, or it lies past the last edge).

    >>> percentile_bound([990, 9, 1] + [0] * 12, 0.99), percentile_bound([980, 15, 5] + [0] * 12, 0.99)
    (50, 100)
    """
    total = sum(histogram)
    if total <= 0:
        return None
    wanted, seen = math.ceil(share * total), 0
    for edge, count in zip(SOLVE_BUCKETS_US, histogram, strict=False):
        seen += count
        if seen >= wanted:
            return edge
    return None


class _Pace(NamedTuple):
    """How fast a job goes, and how long it has left."""

    elapsed: float
    rate: float
    eta: float | None
    stalled: bool


def _pace(job: Job, now: datetime, answered: int, expected: int) -> _Pace:
    end = job.finished_at or now
    elapsed = (end - job.started_at).total_seconds() if job.started_at else 0.0
    running = job.status in ACTIVE
    stalled = running and job.progress_at is not None and now - job.progress_at > STALLED_AFTER
    # While it runs, the rate and the time left are as of the last chunk stored, the time left counting
    # down from there: between two chunks nothing new is known, and a rate aged by the wait would make the
    # time left climb until the next chunk drops it again (a sawtooth). It can only rise when a chunk
    # brings a slower pace or a larger estimate of the file: the noise of the figures themselves.
    rate = (current_rate(job.rate, job.progress_at, job.started_at, job.progress_at or now) if running
            else answered / elapsed if elapsed > 0 else 0.0)
    since = (now - job.progress_at).total_seconds() if job.progress_at else 0.0
    remaining = max(expected - answered, 0)
    eta = None if not running or stalled or rate <= 0 else round(max(remaining / rate - since, 0.0), 1)
    return _Pace(elapsed, rate, eta, stalled)


def job_view(job: Job, now: datetime | None = None) -> JobView:
    answered = job.done + job.failed_cases
    expected = expected_cases(job)
    pace = _pace(job, now or utcnow(), answered, expected)
    return JobView(
        id=job.id, game=job.game, filename=job.filename, size=job.size, sha256=job.sha256 or None, status=job.status,
        error=job.error, warnings=[DiagnosticView(**Diagnostic.from_dict(w).to_dict()) for w in job.warnings],
        faults=[FaultView(line=fault["line"], column=fault["column"], message=fault["message"],
                          context=[ContextLineView(**line) for line in fault["context"]]) for fault in job.faults],
        fault_count=job.fault_count, partial_output=_partial_output(job), partial_cases=_partial_cases(job),
        total=job.total, total_known=job.split_at is not None, expected=expected, bytes_read=job.bytes_read,
        done=job.done,
        failed_cases=job.failed_cases, cache_hits=job.cache_hits,
        counts={o: job.counts.get(o, 0) for o in engines.get(job.game).outcomes},
        progress=_progress(job, answered, expected),
        rate=round(pace.rate, 1),
        eta_seconds=pace.eta,
        stalled=pace.stalled,
        elapsed_seconds=round(pace.elapsed, 3), chunk_size=job.chunk_size, rerun_of=job.rerun_of, owner=job.owner,
        shared=job.shared, reveal_answers=job.reveal_answers, checks=list(job.check_ids or []),
        created_at=job.created_at, started_at=job.started_at, split_at=job.split_at, finished_at=job.finished_at,
        notify=notify_view(job))


def notify_view(row: Notified) -> NotifyView | None:
    """A job's or a check's callback, as its view shows it (never its secret)."""
    if row.notify_state is None or row.notify_url is None:
        return None
    return NotifyView(url=row.notify_url, signed=bool(row.notify_secret), state=row.notify_state,
                      attempts=row.notify_attempts, last_status=row.notify_code, last_error=row.notify_error,
                      next_at=row.notify_next_at if row.notify_state == NotifyState.DUE else None,
                      delivered_at=row.notify_delivered_at)


def _progress(job: Job, answered: int, expected: int) -> float:
    """The share of a job's cases answered; of a failed one, the share of its file solved, which its faults
    keep below 1 (each a case it has no answer to) as do the cases it could not solve: a failed job never
    reads as done."""
    if job.status == JobStatus.SUCCEEDED:
        return 1.0
    if job.status == JobStatus.FAILED:
        held = job.total + job.fault_count
        return job.done / held if held else 0.0
    return min(1.0, answered / expected) if expected else 0.0


def _partial_cases(job: Job) -> int:
    """How many cases a job's partial output is of (see ``_partial_output``)."""
    if _partial_output(job) is None:
        return 0
    return job.fault_case - 1 if job.fault_count and job.fault_case is not None else job.done


def _partial_output(job: Job) -> str | None:
    """Where a failed job's partial judge output is: that of the cases before its first fault, or of those
    solved when some could not be; ``None`` when it would hold no case."""
    if job.status != JobStatus.FAILED:
        return None
    if job.fault_count:
        return partial_output(job.id) if job.fault_case is not None and job.fault_case > 1 else None
    return partial_output(job.id) if job.failed_cases and job.done else None


def no_output(job_id: int, status: str, partial: str | None = None) -> str:
    """Why a job has no judge output (yet), and what there is instead (``partial``: where a failed job's
    partial output is): the one wording, for the API and the pages alike."""
    if status == JobStatus.FAILED:
        return (f"job {job_id} failed, so it has no complete output: "
                + (f"the answers to its cases before its first fault are its partial output, at {partial}"
                   if partial else "it has no partial output"))
    if status == JobStatus.CANCELLED:
        return f"job {job_id} was cancelled, so it has no output: rerun it for one"
    return f"job {job_id} is {status}; its output is complete once it has succeeded"


def timings_view(job: Job, view: JobView) -> TimingsView:
    """How long a job's phases and its cases took (``view``: the job's figures, of the same moment)."""
    solved = job.done - job.cache_hits

    def between(start: datetime | None, end: datetime | None) -> float | None:
        return round((end - start).total_seconds(), 3) if start and end else None

    slowest = None
    if job.slowest_index is not None and job.slowest_us is not None:
        slowest = SlowestCase(id=case_id(job.id, job.slowest_index), index=job.slowest_index,
                              solve_us=job.slowest_us)
    return TimingsView(
        job_id=job.id, queued_seconds=between(job.created_at, job.started_at),
        split_seconds=between(job.started_at, job.split_at), elapsed_seconds=view.elapsed_seconds,
        rate=view.rate, solved=solved, cached=job.cache_hits, solve_us_total=job.solve_us,
        solve_us_mean=round(job.solve_us / solved, 1) if solved > 0 else None,
        solve_us_max=job.slowest_us, solve_us_p99=percentile_bound(job.solve_hist, 0.99),
        slowest_case=slowest)


def visible_job(session: Session, viewer: Viewer, job_id: int, shared: bool = False) -> Job | None:
    """The job, when ``viewer`` reads it (``shared``: or it is shared with the viewer), else ``None``."""
    seen = viewer.reads_shared(Job.owner, Job.shared) if shared else viewer.reads(Job.owner)
    return session.scalars(select(Job).where(Job.id == job_id, seen, Job.deleted_at.is_(None))).first()


def readable_job(session: Session, viewer: Viewer, job_id: int, shared: bool = False) -> Job:
    """The job, when ``viewer`` reads it (``shared``: or it is shared with the viewer, for what a shared
    job shows of itself: its figures and its input), else not found."""
    job = visible_job(session, viewer, job_id, shared)
    if job is None:
        raise NotFound(f"no job {job_id}")
    return job


class JobQueries:
    """The reads of jobs, as ``viewer`` may make them: every job it may not see is left out of every answer
    (lists, counts), and asked for by id it is not found."""

    def __init__(self, db: Database, viewer: Viewer = EVERYTHING) -> None:
        self.db = db
        self.viewer = viewer

    def seen_by(self, viewer: Viewer) -> JobQueries:
        """These queries for ``viewer``."""
        return JobQueries(self.db, viewer)

    def job(self, job_id: int) -> JobView:
        """A job the viewer reads or that is shared with it; of a shared job, the viewer's own checks alone."""
        with self.db.session(write=False) as session:
            job = readable_job(session, self.viewer, job_id, shared=True)
            view = job_view(job)
            if self.viewer.may_read(job.owner):
                return view
            mine = session.scalars(select(Check.id).where(Check.job_id == job_id, Check.owner == self.viewer.name)
                                   .order_by(Check.id)).all()
            return replace(view, checks=list(mine))

    def jobs(self, page: int = 1, per_page: int = 20, status: str | None = None,
             game: str | None = None, filename: str | None = None, owner: str | None = None,
             shared: bool | None = None) -> JobPage:
        """A page of the jobs the viewer reads; ``shared``: only those shared (with it, or by it), or only
        those not."""
        per_page = max(1, min(per_page, MAX_PER_PAGE))
        page = max(1, page)
        if shared:
            query = select(Job).where(self.viewer.reads_shared(Job.owner, Job.shared), Job.shared.is_(True),
                                      Job.deleted_at.is_(None))
        else:
            query = select(Job).where(self.viewer.reads(Job.owner), Job.deleted_at.is_(None))
            if shared is not None:
                query = query.where(Job.shared.is_(False))
        if owner is not None:
            if len(owner) > OWNER_LENGTH:
                raise Invalid(f"owner must be at most {OWNER_LENGTH} characters")
            query = query.where(Job.owner == owner)
        if status is not None:
            if status not in [s.value for s in JobStatus]:
                raise Invalid(f"unknown status {status!r}; expected one of " + ", ".join(s.value for s in JobStatus))
            query = query.where(Job.status == status)
        if game is not None:
            query = query.where(Job.game == engines.check(game))
        if filename is not None:
            if len(filename) > MAX_FILENAME_FILTER:
                raise Invalid(f"filename must be at most {MAX_FILENAME_FILTER} characters")
            pattern = "%" + re.sub(r"([\\%_])", r"\\\1", filename) + "%"
            query = query.where(Job.filename.ilike(pattern, escape="\\"))
        with self.db.session(write=False) as session:
            total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
            rows = session.scalars(query.order_by(Job.id.desc()).offset((page - 1) * per_page).limit(per_page))
            now = utcnow()
            return JobPage(items=[job_view(job, now) for job in rows], total=total, page=page, per_page=per_page)

    def output(self, job_id: int, partial: bool = False) -> Iterator[bytes]:
        """The judge output, in pieces of whole lines, exactly as the reference solutions print it; ``partial``:
        that of the cases solved so far, and before the file's first fault when it has faults."""
        with self.db.session(write=False) as session:
            job = readable_job(session, self.viewer, job_id)
            if job.status != JobStatus.SUCCEEDED and not partial:
                raise Conflict(no_output(job_id, job.status, _partial_output(job)))
        return judge_output(self.db, job_id, before=job.fault_case)

    def kept_lines(self, job_id: int) -> Iterator[bytes]:
        """The judge line of every case of a job solved so far, in file order, in pieces of whole lines: of a
        failed job, each kept case's, those after its first fault too (a bad case has none); of a succeeded
        one, its output."""
        with self.db.session(write=False) as session:
            readable_job(session, self.viewer, job_id)
        return judge_output(self.db, job_id)

    def input(self, job_id: int) -> Iterator[bytes]:
        """The job's judge file as the split read it: each case's canonical input on a line, then the
        game's terminator. It reads back to the same cases (an upload is kept only until its split
        ends; this is what stays of it, and all a generated job's file ever was)."""
        with self.db.session(write=False) as session:
            job = readable_job(session, self.viewer, job_id, shared=True)
            if job.split_at is None:
                raise Conflict(f"job {job_id} is {job.status}: its input is whole once its file has been read")
            end = engines.get(job.game).terminator.encode() + b"\n"
        return itertools.chain(job_inputs(self.db, job_id), (end,))

    def distribution(self, job_id: int) -> DistributionView:
        """Counts of (outcome, number) for a job: what the job page's charts draw."""
        with self.db.session(write=False) as session:
            job = readable_job(session, self.viewer, job_id)
            rows = sorted((NumberCount(outcome=outcome, number=int(number), count=count)
                           for outcome, by_number in job.distribution.items() for number, count in by_number.items()),
                          key=lambda r: (r.number, r.outcome))
            engine = engines.get(job.game)
            return DistributionView(game=job.game, number_name=engine.number_name, outcomes=list(engine.outcomes),
                                    counts=job_view(job).counts, by_number=rows)

    def timings(self, job_id: int) -> TimingsView:
        """How long a job's phases and its cases took: the job page's timings panel."""
        with self.db.session(write=False) as session:
            job = readable_job(session, self.viewer, job_id)
        return timings_view(job, job_view(job))

    def watched(self, job_ids: Collection[int]) -> dict[int, tuple[JobView, TimingsView]]:
        """The figures and timings of many jobs, read at once (the live streams' poller asks this every tick
        for every job watched, whatever the number of its viewers); a job deleted, or not this viewer's
        to see, is left out."""
        with self.db.session(write=False) as session:
            rows = session.scalars(select(Job).where(Job.id.in_(job_ids), self.viewer.reads(Job.owner),
                                                     Job.deleted_at.is_(None))).all()
        now = utcnow()
        return {job.id: (view, timings_view(job, view)) for job in rows for view in (job_view(job, now),)}
