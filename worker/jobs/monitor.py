"""The service's health (``/healthz``) and figures (``/metrics``), from the database and the broker."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from sqlalchemy import func, select

from worker.jobs.dispatch import Dispatcher
from worker.jobs.overview import OverviewQueries
from worker.jobs.views import BrokerHealth, HealthView, PartHealth, StuckJobView, WorkersHealth
from worker.states import OPEN_CHUNKS, JobStatus
from worker.store.models import SOLVE_BUCKETS_US, Chunk, Job, WorkerRow, utcnow


@dataclass(frozen=True)
class Metrics:
    jobs_by_status: dict[str, int]
    #: (game, outcome, count) of stored solved cases.
    cases_solved: list[tuple[str, str, int]]
    #: By game: ``count``, ``sum_us`` and cumulative ``buckets`` (one per bound of SOLVE_BUCKETS_US).
    solve_histograms: dict[str, dict[str, Any]]
    workers: int
    pending_chunks: int
    #: ``None`` when the broker does not answer, or for a viewer who sees only its own jobs.
    queue_depth: int | None
    broker_up: bool = True
    #: Unfinished jobs that have not moved for several stall periods (:meth:`JobQueries.stuck_jobs`).
    stuck_jobs: int = 0


def health(queries: OverviewQueries, dispatcher: Dispatcher) -> HealthView:
    """Whether the database and the broker answer and a worker has been seen lately (else
    ``unavailable``), and whether every unfinished job moves (else ``degraded``, naming those that do not).

    Never raises: a part that cannot be reached is reported with the reason.
    """
    stuck: list[StuckJobView] = []
    try:
        names = queries.workers_seen()
        stuck = queries.stuck_jobs()
        database = PartHealth(ok=True, error=None)
        workers = WorkersHealth(ok=bool(names), error=None if names else f"no worker heard from in the last {queries.worker_timeout.total_seconds():g} s",
                                seen=len(names), names=names)
    except Exception as error:  # noqa: BLE001 - any database trouble is "not reachable"
        database = PartHealth(ok=False, error=_reason(error))
        workers = WorkersHealth(ok=False, error="unknown: the database is down", seen=0, names=[])
    try:
        depth = dispatcher.queue_depth()
    except Exception:  # noqa: BLE001 - queue_depth should not raise, but a health check must not either
        depth = None
    broker = (BrokerHealth(ok=True, error=None, queue_depth=depth) if depth is not None
              else BrokerHealth(ok=False, error="the broker cannot be reached", queue_depth=None))
    ok = database.ok and workers.ok and broker.ok
    status = "unavailable" if not ok else "degraded" if stuck else "ok"
    return HealthView(ok=ok, status=status, database=database, broker=broker, workers=workers, stuck_jobs=stuck)


def metrics(queries: OverviewQueries, dispatcher: Dispatcher) -> Metrics:
    """The figures ``/metrics`` exposes, from the job rows (so it costs the same at a billion cases).

    ``solve_histograms`` counts solved (not cached) cases per game whose solve time is at
    most each bound of :data:`SOLVE_BUCKETS_US`, cumulatively, as Prometheus histograms want.
    Every figure of jobs counts only those the queries' viewer sees.
    """
    seen = queries.viewer.reads(Job.owner) & Job.deleted_at.is_(None)
    depth = dispatcher.queue_depth()
    with queries.db.session(write=False) as session:
        by_status = dict(session.execute(select(Job.status, func.count()).where(seen).group_by(Job.status)).all())
        solved: Counter[tuple[str, str]] = Counter()
        histograms: dict[str, dict[str, Any]] = {}
        for game, counts, hist, solve_us in session.execute(
                select(Job.game, Job.counts, Job.solve_hist, Job.solve_us).where(seen)):
            solved.update({(game, outcome): n for outcome, n in counts.items()})
            if hist:
                figures = histograms.setdefault(game, {"count": 0, "sum_us": 0,
                                                       "per_bucket": [0] * (len(SOLVE_BUCKETS_US) + 1)})
                figures["count"] += sum(hist)
                figures["sum_us"] += solve_us
                figures["per_bucket"] = [a + b for a, b in zip(figures["per_bucket"], hist, strict=True)]
        for figures in histograms.values():
            figures["buckets"] = list(accumulate(figures.pop("per_bucket")))[:-1]
        workers = session.scalar(select(func.count()).select_from(WorkerRow).where(
            WorkerRow.seen_at >= utcnow() - queries.worker_timeout)) or 0
        pending_chunks = session.scalar(select(func.count()).select_from(Chunk).join(Job).where(
            Chunk.status.in_(OPEN_CHUNKS), seen)) or 0
    stuck = len(queries.stuck_jobs())
    return Metrics(
        jobs_by_status={s.value: int(by_status.get(s.value, 0)) for s in JobStatus},
        cases_solved=[(g, o, c) for (g, o), c in sorted(solved.items()) if c],
        solve_histograms=dict(sorted(histograms.items())), workers=int(workers),
        pending_chunks=int(pending_chunks), queue_depth=depth if queries.viewer.sees_all else None,
        broker_up=depth is not None, stuck_jobs=stuck)


def _reason(error: BaseException) -> str:
    """An exception in one line, without a driver's multi-line detail."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text[:300]
