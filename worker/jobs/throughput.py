"""Throughput over time: the cases each worker stored per interval, as its heartbeat records them.

A heartbeat counts the chunks its processes stored in the last :data:`RECOUNT` (a chunk is
stamped when solved and committed a moment later, so the last intervals are counted again
until every chunk of them is in) and writes one row per interval with work. The workers
view reads the last hour of rows, which count everyone's work; a viewer who sees only its own
jobs is shown the same figures made from its own chunks instead (:func:`of_chunks`), as a job's
own chart is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from sqlalchemy import ColumnElement, delete, select
from sqlalchemy.orm import Session

from worker.states import ChunkStatus
from worker.store.models import Chunk, Job, ThroughputRow

#: Seconds per interval of the time series.
INTERVAL_SECONDS = 10
#: How far back a heartbeat counts again (longer than a chunk's commit can lag its stamp).
RECOUNT = timedelta(seconds=30)
#: How long rows are kept: the charts show an hour.
KEEP = timedelta(hours=1, minutes=5)
#: What the charts show.
WINDOW = timedelta(hours=1)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def interval_start(moment: datetime, seconds: int = INTERVAL_SECONDS) -> datetime:
    """The start of the interval ``moment`` falls in.

    >>> interval_start(datetime(2026, 11, 30, 12, 0, 17, 500, tzinfo=UTC)).isoformat()
    '2026-11-30T12:00:10+00:00'
    """
    offset = int((moment - _EPOCH).total_seconds()) // seconds * seconds
    return _EPOCH + timedelta(seconds=offset)


def bucketed(stamps: Iterable[tuple[datetime | None, int]], seconds: int = INTERVAL_SECONDS) -> Counter[datetime]:
    """Cases per interval from ``(finished_at, count)`` pairs."""
    found: Counter[datetime] = Counter()
    for when, count in stamps:
        if when is not None:
            found[interval_start(when, seconds)] += count
    return found


def record(session: Session, worker: str, now: datetime) -> None:
    """Write the cases ``worker``'s processes (named ``worker:pid``) stored in the last intervals."""
    since = interval_start(now - RECOUNT)
    prefix = worker + ":"
    stamps = [(when, count) for name, when, count in session.execute(
        select(Chunk.worker, Chunk.finished_at, Chunk.count)
        .where(Chunk.finished_at >= since, Chunk.status == ChunkStatus.DONE)) if name and name.startswith(prefix)]
    counted = bucketed(stamps)
    if not counted:
        return
    rows = {row.at: row for row in session.scalars(
        select(ThroughputRow).where(ThroughputRow.worker == worker, ThroughputRow.at >= since))}
    for at, cases in counted.items():
        row = rows.get(at)
        if row is None:
            session.add(ThroughputRow(worker=worker, at=at, cases=cases))
        else:
            row.cases = cases


def of_chunks(session: Session, seen: ColumnElement[bool], since: datetime
              ) -> tuple[dict[str, dict[datetime, int]], Counter[str]]:
    """Per worker, the cases of the chunks of the jobs ``seen`` (a condition on ``Job``) that its processes
    stored since ``since``, per interval, and how many such chunks (tasks) it ran."""
    stamps: dict[str, list[tuple[datetime | None, int]]] = {}
    tasks: Counter[str] = Counter()
    for process, when, count in session.execute(
            select(Chunk.worker, Chunk.finished_at, Chunk.count).join(Job)
            .where(Chunk.finished_at >= since, Chunk.status == ChunkStatus.DONE, seen)):
        if process and process.count(":") >= 2:  # host:worker-pid:pid
            worker = process.rsplit(":", 1)[0]
            stamps.setdefault(worker, []).append((when, count))
            tasks[worker] += 1
    return {worker: dict(bucketed(points)) for worker, points in stamps.items()}, tasks


def prune(session: Session, now: datetime) -> None:
    session.execute(delete(ThroughputRow).where(ThroughputRow.at < now - KEEP))
