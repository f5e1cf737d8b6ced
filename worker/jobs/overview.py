"""Read models of the service as a whole: the dashboard's overview, the workers and their throughput, a
job's throughput over its run, the jobs that are stuck; as the viewer may read them.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session, load_only

from worker.config import Settings
from worker.jobs import throughput
from worker.jobs.queries import readable_job, remaining_cases
from worker.jobs.views import (
    OverviewView,
    ProcessView,
    StuckJobView,
    ThroughputPoint,
    ThroughputView,
    WorkerDetail,
    WorkersView,
    WorkerView,
)
from worker.states import ACTIVE, OPEN_CHUNKS, UNFINISHED, ChunkStatus, JobStatus
from worker.store.chunks import end_number
from worker.store.database import Database
from worker.store.models import Chunk, Job, ThroughputRow, WorkerRow, utcnow
from worker.store.owners import EVERYTHING, Viewer

#: An unfinished job that has not moved for this many stall periods (``stall_seconds``) is stuck: the sweep
#: has sent its work again each period meanwhile, so it wants an operator (``/healthz``, ``/metrics``).
STUCK_AFTER_STALLS = 6


class OverviewQueries:
    """The reads of the service as ``viewer`` may make them: the work of jobs it may not see is left out
    of every figure but the heartbeats' of an admin."""

    def __init__(self, db: Database, settings: Settings, viewer: Viewer = EVERYTHING) -> None:
        self.db = db
        self.viewer = viewer
        self.worker_timeout = timedelta(seconds=settings.worker_timeout)
        self.stuck_after = timedelta(seconds=settings.stall_seconds * STUCK_AFTER_STALLS)
        self.lease = timedelta(seconds=settings.lease_seconds)

    def seen_by(self, viewer: Viewer) -> OverviewQueries:
        found = copy.copy(self)
        found.viewer = viewer
        return found

    def overview(self, queue_depth: int | None) -> OverviewView:
        """Workers seen, work waiting, jobs by status: the dashboard's header."""
        now = utcnow()
        with self.db.session(write=False) as session:
            workers = session.scalars(select(WorkerRow).where(WorkerRow.seen_at >= now - self.worker_timeout)).all()
            tasks = None if self.viewer.sees_all else throughput.of_chunks(
                session, self.viewer.reads(Job.owner), throughput.interval_start(now - throughput.WINDOW))[1]
            seen = self.viewer.reads(Job.owner) & Job.deleted_at.is_(None)
            by_status = dict(session.execute(select(Job.status, func.count()).where(seen)
                                             .group_by(Job.status)).all())
            # Each job's own remainder, never below nothing: while a file is read, the cases solved
            # run ahead of those counted read, and its whole total is only an estimate.
            queued_cases = sum(remaining_cases(job) for job in session.scalars(
                select(Job).where(Job.status.in_(ACTIVE), seen).options(load_only(
                    Job.total, Job.done, Job.failed_cases, Job.split_at, Job.bytes_read, Job.size))))
            pending_chunks = session.scalar(select(func.count()).select_from(Chunk).join(Job).where(
                Chunk.status.in_(OPEN_CHUNKS), seen)) or 0
            return OverviewView(
                workers=[WorkerView(name=w.name, concurrency=w.concurrency,
                                    processed=w.processed if tasks is None else tasks.get(w.name, 0),
                                    seen_at=w.seen_at, started_at=w.started_at) for w in workers],
                jobs_by_status={s.value: by_status.get(s.value, 0) for s in JobStatus},
                queued_cases=max(0, int(queued_cases)), pending_chunks=int(pending_chunks),
                queue_depth=queue_depth if self.viewer.sees_all else None, broker_up=queue_depth is not None,
                stuck_jobs=self._stuck(session, now))

    def stuck_jobs(self) -> list[StuckJobView]:
        """Unfinished jobs that have not moved for :data:`STUCK_AFTER_STALLS` stall periods, oldest first."""
        with self.db.session(write=False) as session:
            return self._stuck(session, utcnow())

    def _stuck(self, session: Session, now: datetime) -> list[StuckJobView]:
        # A job moves when a case is answered or its split begins (``progress_at``), and while its split
        # reads on (each stretch stored renews the split's lease): a long split in a busy service is not
        # stuck. Its work sent again is no move: a split sent every stall period that none takes is stuck.
        stuck = []
        for job in session.scalars(select(Job).where(
                Job.status.in_(UNFINISHED), self.viewer.reads(Job.owner), Job.deleted_at.is_(None)).options(load_only(
                Job.status, Job.filename, Job.progress_at, Job.created_at, Job.lease_until))):
            moved = max(filter(None, (job.progress_at, job.created_at,
                                      job.lease_until - self.lease if job.lease_until else None)))
            if now - moved > self.stuck_after:
                stuck.append(StuckJobView(id=job.id, status=job.status, filename=job.filename, still_since=moved,
                                          still_seconds=round((now - moved).total_seconds(), 1)))
        return sorted(stuck, key=lambda view: (view.still_since, view.id))

    def workers(self) -> WorkersView:
        """Every worker with a heartbeat row or work in the last hour: its processes busy now and its
        throughput over the hour (the workers view)."""
        now = utcnow()
        since = throughput.interval_start(now - throughput.WINDOW)
        with self.db.session(write=False) as session:
            rows = {w.name: w for w in session.scalars(select(WorkerRow))}
            series, tasks = self._work_done(session, since)
            # What a process is busy with is shown only of the jobs the viewer sees.
            running = session.execute(
                select(Chunk.worker, Chunk.id, Chunk.job_id, Chunk.first_index, Chunk.count, Chunk.gaps,
                       Chunk.lease_until)
                .join(Job).where(Chunk.status == ChunkStatus.RUNNING, self.viewer.reads(Job.owner))
                .order_by(Chunk.id)).all()
        busy: dict[str, list[ProcessView]] = {}
        for chunk in running:
            if chunk.worker and chunk.worker.count(":") >= 2:
                worker, pid = chunk.worker.rsplit(":", 1)
                busy.setdefault(worker, []).append(ProcessView(
                    name=chunk.worker, pid=int(pid) if pid.isdigit() else 0, job_id=chunk.job_id, chunk_id=chunk.id,
                    first_index=chunk.first_index, last_index=end_number(chunk) - 1, cases=chunk.count,
                    started_at=chunk.lease_until - self.lease if chunk.lease_until else None))
        minute = now - timedelta(seconds=60)
        details = []
        for name in sorted(set(rows) | set(series)):
            row = rows.get(name)
            host, _, pid = name.rpartition(":")
            alive = row is not None and now - row.seen_at <= self.worker_timeout
            points = series.get(name, {})
            details.append(WorkerDetail(
                name=name, host=host, pid=int(pid) if pid.isdigit() else 0, alive=alive,
                concurrency=row.concurrency if row else None,
                processed=tasks.get(name, 0) if tasks is not None else row.processed if row else 0,
                started_at=row.started_at if row else None, seen_at=row.seen_at if row else None,
                heartbeat_age_seconds=round(max(0.0, (now - row.seen_at).total_seconds()), 1) if row else None,
                busy=busy.get(name, []) if alive else [],
                solved_last_minute=_last_minute(points, minute),
                throughput=_series(points, since, now, throughput.INTERVAL_SECONDS)))
        details.sort(key=lambda w: (not w.alive, w.host, w.pid))
        total: dict[datetime, int] = {}
        for points in series.values():
            for at, cases in points.items():
                total[at] = total.get(at, 0) + cases
        return WorkersView(workers=details, solved_last_minute=sum(w.solved_last_minute for w in details),
                           total=_series(total, since, now, throughput.INTERVAL_SECONDS))

    def _work_done(self, session: Session, since: datetime
                   ) -> tuple[dict[str, dict[datetime, int]], dict[str, int] | None]:
        """Per worker, the cases it stored since ``since`` per interval, and the tasks it ran (``None``: as
        its heartbeat counts them, every task since it started). The heartbeats' figures count everyone's
        work: a viewer who sees only its own jobs is given the figures of its own chunks alone."""
        if not self.viewer.sees_all:
            return throughput.of_chunks(session, self.viewer.reads(Job.owner), since)
        series: dict[str, dict[datetime, int]] = {}
        rows = select(ThroughputRow.worker, ThroughputRow.at, ThroughputRow.cases).where(ThroughputRow.at >= since)
        for name, at, cases in session.execute(rows):
            series.setdefault(name, {})[at] = cases
        return series, None

    def job_throughput(self, job_id: int) -> ThroughputView:
        """Cases a job stored over its run, from its chunks (the job page's chart)."""
        with self.db.session(write=False) as session:
            job = readable_job(session, self.viewer, job_id)
            stamps = session.execute(select(Chunk.finished_at, Chunk.count).where(
                Chunk.job_id == job_id, Chunk.status == ChunkStatus.DONE)).all()
        start = job.started_at or job.created_at
        end = job.finished_at or utcnow()
        seconds = _interval_for((end - start).total_seconds())
        counted = throughput.bucketed(((when, count) for when, count in stamps), seconds)
        return _series(dict(counted), throughput.interval_start(start, seconds), end, seconds)

    def workers_seen(self) -> list[str]:
        with self.db.session(write=False) as session:
            return sorted(session.scalars(select(WorkerRow.name).where(
                WorkerRow.seen_at >= utcnow() - self.worker_timeout)).all())


#: Interval lengths a job's chart may use, so that it has at most :data:`MAX_POINTS` points.
_INTERVALS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400)


MAX_POINTS = 120


def _interval_for(span: float) -> int:
    """The shortest interval that shows ``span`` seconds in at most :data:`MAX_POINTS` points.

    >>> _interval_for(20), _interval_for(3600)
    (1, 30)
    """
    return next((s for s in _INTERVALS if span / s <= MAX_POINTS), _INTERVALS[-1])


def _series(points: dict[datetime, int], since: datetime, until: datetime, seconds: int) -> ThroughputView:
    """Cases per interval from ``since`` to ``until``, the empty intervals included."""
    out = []
    at = throughput.interval_start(since, seconds)
    last = throughput.interval_start(until, seconds)
    if points:
        at = min(at, min(points))
        last = max(last, max(points))
    while at <= last:
        cases = points.get(at, 0)
        out.append(ThroughputPoint(at=at, cases=cases, rate=round(cases / seconds, 1)))
        at += timedelta(seconds=seconds)
    return ThroughputView(interval_seconds=seconds, cases=sum(points.values()), points=out)


def _last_minute(points: dict[datetime, int], since: datetime) -> int:
    """Cases of the intervals that began in the last minute."""
    return sum(cases for at, cases in points.items() if at >= since)
