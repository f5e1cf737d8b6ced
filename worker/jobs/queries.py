"""Read models: every question the pages and the API ask, answered from the database alone, as typed views."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from worker import engines
from worker.config import Settings
from worker.engines.base import Diagnostic, TraceError
from worker.jobs.errors import Conflict, Invalid, NotFound
from worker.jobs.filters import MAX_PER_PAGE, ResultFilter
from worker.jobs.states import ACTIVE, FINISHED, OPEN_CHUNKS, JobStatus
from worker.jobs.views import (
    CaseDetail,
    CasePage,
    CaseView,
    DiagnosticView,
    DistributionView,
    JobPage,
    JobView,
    NumberCount,
    OverviewView,
    SlowestCase,
    TimingsView,
    WorkerView,
)
from worker.store.codecs import load_trace
from worker.store.database import Database
from worker.store.models import CaseRow, Chunk, Job, WorkerRow, utcnow

#: A worker whose heartbeat is older than this is counted as gone.
WORKER_TIMEOUT = timedelta(seconds=30)


def job_view(job: Job, now: datetime | None = None) -> JobView:
    now = now or utcnow()
    end = job.finished_at or now
    elapsed = (end - job.started_at).total_seconds() if job.started_at else 0.0
    rate = job.done / elapsed if elapsed > 0 and job.done else 0.0
    remaining = max(job.total - job.done - job.failed_cases, 0)
    return JobView(
        id=job.id, game=job.game, filename=job.filename, size=job.size, sha256=job.sha256, status=job.status,
        error=job.error, warnings=[DiagnosticView(**Diagnostic.from_dict(w).to_dict()) for w in job.warnings],
        total=job.total, done=job.done, failed_cases=job.failed_cases, cache_hits=job.cache_hits,
        counts={o: job.counts.get(o, 0) for o in engines.get(job.game).outcomes},
        progress=1.0 if job.status == JobStatus.SUCCEEDED else (
            (job.done + job.failed_cases) / job.total if job.total else 0.0),
        rate=round(rate, 1),
        eta_seconds=(None if job.status in FINISHED or not rate or job.status != JobStatus.SOLVING
                     else round(remaining / rate, 1)),
        elapsed_seconds=round(elapsed, 3), chunk_size=job.chunk_size, rerun_of=job.rerun_of,
        created_at=job.created_at, started_at=job.started_at, split_at=job.split_at, finished_at=job.finished_at)


def case_view(row: CaseRow) -> CaseView:
    return CaseView(id=row.id, job_id=row.job_id, index=row.index, game=row.game, input=row.input,
                    outcome=row.outcome, number=row.number, detail=row.detail, line=row.line, error=row.error,
                    cached=row.cached, solve_us=row.solve_us, worker=row.worker, solved_at=row.solved_at)


def case_detail(row: CaseRow) -> CaseDetail:
    trace: dict[str, Any] | None = None
    problem: str | None = None
    try:
        trace = load_trace(row.game, row.trace)
    except TraceError as error:  # shown on the case, not a failed request
        problem = str(error)
    return CaseDetail(id=row.id, job_id=row.job_id, index=row.index, game=row.game, input=row.input,
                      outcome=row.outcome, number=row.number, detail=row.detail, line=row.line, error=row.error,
                      cached=row.cached, solve_us=row.solve_us, worker=row.worker, solved_at=row.solved_at,
                      trace=trace, trace_error=problem)


class JobQueries:
    def __init__(self, settings: Settings) -> None:
        self.db = Database.of(settings)

    def _job(self, session: Session, job_id: int) -> Job:
        job = session.get(Job, job_id)
        if job is None:
            raise NotFound(f"no job {job_id}")
        return job

    def job(self, job_id: int) -> JobView:
        with self.db.session(write=False) as session:
            return job_view(self._job(session, job_id))

    def jobs(self, page: int = 1, per_page: int = 20, status: str | None = None,
             game: str | None = None) -> JobPage:
        per_page = max(1, min(per_page, MAX_PER_PAGE))
        page = max(1, page)
        query = select(Job)
        if status is not None:
            if status not in [s.value for s in JobStatus]:
                raise Invalid(f"unknown status {status!r}; expected one of " + ", ".join(s.value for s in JobStatus))
            query = query.where(Job.status == status)
        if game is not None:
            query = query.where(Job.game == engines.check(game))
        with self.db.session(write=False) as session:
            total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
            rows = session.scalars(query.order_by(Job.id.desc()).offset((page - 1) * per_page).limit(per_page))
            now = utcnow()
            return JobPage(items=[job_view(job, now) for job in rows], total=total, page=page, per_page=per_page)

    def results(self, flt: ResultFilter) -> CasePage:
        """Cases matching a filter (one job's results, or the history across jobs)."""
        with self.db.session(write=False) as session:
            if flt.job_id is not None:
                self._job(session, flt.job_id)
            base = flt.apply(select(CaseRow))
            total = session.scalar(select(func.count()).select_from(base.subquery())) or 0
            rows = session.scalars(flt.order(base).offset((flt.page - 1) * flt.per_page).limit(flt.per_page))
            return CasePage(items=[case_view(row) for row in rows], total=total, page=flt.page,
                            per_page=flt.per_page)

    def iter_results(self, flt: ResultFilter) -> Iterator[CaseView]:
        """Every case matching a filter, streamed (for exports)."""
        with self.db.session(write=False) as session:
            query = flt.order(flt.apply(select(CaseRow))).execution_options(yield_per=2000)
            for row in session.scalars(query):
                yield case_view(row)

    def case(self, case_id: int) -> CaseDetail:
        with self.db.session(write=False) as session:
            row = session.get(CaseRow, case_id)
            if row is None:
                raise NotFound(f"no case {case_id}")
            return case_detail(row)

    def case_by_index(self, job_id: int, index: int) -> CaseDetail:
        with self.db.session(write=False) as session:
            row = session.scalar(select(CaseRow).where(CaseRow.job_id == job_id, CaseRow.index == index))
            if row is None:
                raise NotFound(f"job {job_id} has no case {index}")
            return case_detail(row)

    def output(self, job_id: int, partial: bool = False) -> Iterator[str]:
        """The judge output, in pieces of whole lines, exactly as the reference solutions print it."""
        with self.db.session(write=False) as session:
            job = self._job(session, job_id)
            if job.status != JobStatus.SUCCEEDED and not partial:
                raise Conflict(f"job {job_id} is {job.status}; its output is complete once it has succeeded")
        return self._output_lines(job_id)

    def _output_lines(self, job_id: int) -> Iterator[str]:
        with self.db.session(write=False) as session:
            query = (select(CaseRow.line).where(CaseRow.job_id == job_id, CaseRow.line.is_not(None))
                     .order_by(CaseRow.index).execution_options(yield_per=5000))
            batch: list[str] = []
            for line in session.scalars(query):
                batch.append(line)
                if len(batch) == 5000:
                    yield "\n".join(batch) + "\n"
                    batch = []
            if batch:
                yield "\n".join(batch) + "\n"

    def distribution(self, job_id: int) -> DistributionView:
        """Counts of (outcome, number) for a job: what the job page's charts draw."""
        with self.db.session(write=False) as session:
            job = self._job(session, job_id)
            query = (select(CaseRow.outcome, CaseRow.number, func.count())
                     .where(CaseRow.job_id == job_id, CaseRow.outcome.is_not(None))
                     .group_by(CaseRow.outcome, CaseRow.number))
            rows = sorted((NumberCount(outcome=o, number=n, count=c) for o, n, c in session.execute(query)),
                          key=lambda r: (r.number, r.outcome))
            engine = engines.get(job.game)
            return DistributionView(game=job.game, number_name=engine.number_name, outcomes=list(engine.outcomes),
                                    counts=job_view(job).counts, by_number=rows)

    def overview(self, queue_depth: int | None) -> OverviewView:
        """Workers seen, work waiting, jobs by status: the dashboard's header."""
        now = utcnow()
        with self.db.session(write=False) as session:
            workers = session.scalars(select(WorkerRow).where(WorkerRow.seen_at >= now - WORKER_TIMEOUT)).all()
            by_status = dict(session.execute(select(Job.status, func.count()).group_by(Job.status)).all())
            queued_cases = session.scalar(
                select(func.coalesce(func.sum(Job.total - Job.done - Job.failed_cases), 0))
                .where(Job.status.in_(ACTIVE))) or 0
            pending_chunks = session.scalar(select(func.count()).select_from(Chunk).where(
                Chunk.status.in_(OPEN_CHUNKS))) or 0
            return OverviewView(
                workers=[WorkerView(name=w.name, concurrency=w.concurrency, processed=w.processed,
                                    seen_at=w.seen_at, started_at=w.started_at) for w in workers],
                jobs_by_status={s.value: by_status.get(s.value, 0) for s in JobStatus},
                queued_cases=int(queued_cases), pending_chunks=int(pending_chunks), queue_depth=queue_depth)

    def timings(self, job_id: int) -> TimingsView:
        """How long a job's phases and its cases took: the job page's timings panel."""
        with self.db.session(write=False) as session:
            job = self._job(session, job_id)
            view = job_view(job)
            count, total_us, mean_us, max_us = session.execute(
                select(func.count(), func.coalesce(func.sum(CaseRow.solve_us), 0), func.avg(CaseRow.solve_us),
                       func.max(CaseRow.solve_us))
                .where(CaseRow.job_id == job_id, CaseRow.cached.is_(False), CaseRow.outcome.is_not(None))).one()
            slowest = session.execute(
                select(CaseRow.id, CaseRow.index, CaseRow.solve_us)
                .where(CaseRow.job_id == job_id, CaseRow.cached.is_(False), CaseRow.outcome.is_not(None))
                .order_by(CaseRow.solve_us.desc(), CaseRow.index).limit(1)).first()

        def between(start: datetime | None, end: datetime | None) -> float | None:
            return round((end - start).total_seconds(), 3) if start and end else None

        return TimingsView(
            job_id=job_id, queued_seconds=between(job.created_at, job.started_at),
            split_seconds=between(job.started_at, job.split_at), elapsed_seconds=view.elapsed_seconds,
            rate=view.rate, solved=int(count), cached=view.cache_hits, solve_us_total=int(total_us),
            solve_us_mean=round(float(mean_us), 1) if mean_us is not None else None,
            solve_us_max=int(max_us) if max_us is not None else None,
            slowest_case=(SlowestCase(id=slowest[0], index=slowest[1], solve_us=slowest[2])
                          if slowest is not None else None))

    def workers_seen(self) -> list[str]:
        with self.db.session(write=False) as session:
            return sorted(session.scalars(select(WorkerRow.name).where(
                WorkerRow.seen_at >= utcnow() - WORKER_TIMEOUT)).all())
