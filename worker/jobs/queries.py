"""Read models: every question the pages and the API ask, answered from the database alone, as typed views.

Nothing here reads in proportion to the history: a job's figures come from its row, a
page of results from the case index (:mod:`worker.jobs.results`) and the chunks holding
those cases, the judge output and exports from the chunks in order.
"""

from __future__ import annotations

import copy
import itertools
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, load_only

from worker import engines
from worker.config import Settings
from worker.engines.base import Diagnostic, TraceError
from worker.jobs import results, throughput
from worker.jobs.errors import Conflict, Invalid, NotFound
from worker.jobs.filters import MAX_PER_PAGE, ResultFilter
from worker.jobs.lifecycle import current_rate, partial_output
from worker.jobs.views import (
    CaseDetail,
    CasePage,
    CaseView,
    ContextLineView,
    DiagnosticView,
    DistributionView,
    FaultView,
    JobPage,
    JobView,
    NotifyView,
    NumberCount,
    OverviewView,
    ProcessView,
    SlowestCase,
    StuckJobView,
    ThroughputPoint,
    ThroughputView,
    TimingsView,
    WorkerDetail,
    WorkersView,
    WorkerView,
)
from worker.states import ACTIVE, OPEN_CHUNKS, UNFINISHED, ChunkStatus, JobStatus, NotifyState
from worker.store.chunks import (
    ChunkData,
    DamagedChunk,
    chunks_holding,
    job_inputs,
    judge_output,
    read_chunks,
    stored_cases,
)
from worker.store.database import Database
from worker.store.models import (
    OWNER_LENGTH,
    SOLVE_BUCKETS_US,
    Check,
    Chunk,
    Job,
    Notified,
    ThroughputRow,
    WorkerRow,
    case_id,
    split_case_id,
    utcnow,
)
from worker.store.owners import EVERYTHING, Viewer

#: The longest file name filter (a stored name is at most as long).
MAX_FILENAME_FILTER = 255
#: A running job that answered no case for this long is shown as stalled (no time left is guessed).
STALLED_AFTER = timedelta(seconds=15)
#: An unfinished job that has not moved for this many stall periods (``stall_seconds``) is stuck: the sweep
#: has sent its work again each period meanwhile, so it wants an operator (``/healthz``, ``/metrics``).
STUCK_AFTER_STALLS = 6


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


def job_view(job: Job, now: datetime | None = None) -> JobView:
    now = now or utcnow()
    end = job.finished_at or now
    elapsed = (end - job.started_at).total_seconds() if job.started_at else 0.0
    answered = job.done + job.failed_cases
    expected = expected_cases(job)
    remaining = max(expected - answered, 0)
    running = job.status in ACTIVE
    stalled = running and job.progress_at is not None and now - job.progress_at > STALLED_AFTER
    # While it runs, the rate and the time left are as of the last chunk stored, the time left counting
    # down from there: between two chunks nothing new is known, and a rate aged by the wait would make the
    # time left climb until the next chunk drops it again (a sawtooth). It can only rise when a chunk
    # brings a slower pace or a larger estimate of the file: the noise of the figures themselves.
    rate = (current_rate(job.rate, job.progress_at, job.started_at, job.progress_at or now) if running
            else answered / elapsed if elapsed > 0 else 0.0)
    since = (now - job.progress_at).total_seconds() if job.progress_at else 0.0
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
        rate=round(rate, 1),
        eta_seconds=None if not running or stalled or rate <= 0 else round(max(remaining / rate - since, 0.0), 1),
        stalled=stalled,
        elapsed_seconds=round(elapsed, 3), chunk_size=job.chunk_size, rerun_of=job.rerun_of, owner=job.owner,
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


class _ChunkCache:
    """Chunks decompressed lately (a page of results reads one or two; the next page the same ones).

    A done chunk never changes, so a decoded one is good until evicted."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._items: OrderedDict[tuple[int, datetime | None], ChunkData] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[int, datetime | None]) -> ChunkData | None:
        with self._lock:
            data = self._items.get(key)
            if data is not None:
                self._items.move_to_end(key)
            return data

    def put(self, key: tuple[int, datetime | None], data: ChunkData) -> None:
        with self._lock:
            self._items[key] = data
            while len(self._items) > self.size:
                self._items.popitem(last=False)


class _Place:
    """Where a case is stored: its chunk, decompressed, and its place in it."""

    __slots__ = ("job", "chunk", "data", "k")

    def __init__(self, job: Job, chunk: Any, data: ChunkData, k: int) -> None:
        self.job, self.chunk, self.data, self.k = job, chunk, data, k


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


class JobQueries:
    """The reads, as ``viewer`` may make them: every job it may not see is left out of every answer
    (lists, searches, exports, counts), and asked for by id it is not found."""

    def __init__(self, settings: Settings, viewer: Viewer = EVERYTHING) -> None:
        self.db = Database.of(settings)
        self.worker_timeout = timedelta(seconds=settings.worker_timeout)
        self.viewer = viewer
        self.stuck_after = timedelta(seconds=settings.stall_seconds * STUCK_AFTER_STALLS)
        self.lease = timedelta(seconds=settings.lease_seconds)
        self._chunks = _ChunkCache()
        self._facets = results.FacetCache()

    def seen_by(self, viewer: Viewer) -> JobQueries:
        """These queries for ``viewer`` (sharing the caches: what they hold is found through a visible job)."""
        found = copy.copy(self)
        found.viewer = viewer
        return found

    def _visible(self, session: Session, job_id: int, shared: bool = False) -> Job | None:
        seen = self.viewer.reads_shared(Job.owner, Job.shared) if shared else self.viewer.reads(Job.owner)
        return session.scalars(select(Job).where(Job.id == job_id, seen, Job.deleted_at.is_(None))).first()

    def _job(self, session: Session, job_id: int, shared: bool = False) -> Job:
        """The job, when the viewer reads it (``shared``: or it is shared with the viewer, for what a shared
        job shows of itself: its figures and its input), else not found."""
        job = self._visible(session, job_id, shared)
        if job is None:
            raise NotFound(f"no job {job_id}")
        return job

    def job(self, job_id: int) -> JobView:
        """A job the viewer reads or that is shared with it; of a shared job, the viewer's own checks alone."""
        with self.db.session(write=False) as session:
            job = self._job(session, job_id, shared=True)
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

    # --- results ---

    def results(self, flt: ResultFilter) -> CasePage:
        """A page of cases matching a filter (one job's results, or the history across jobs)."""
        with self.db.session(write=False) as session:
            found = results.search(session, flt, self.viewer, flt.after, flt.before, flt.last, self._facets)
            items = self._case_views(session, found.rows)
        paged = not (flt.after or flt.before or flt.last)
        return CasePage(items=items, total=found.total, total_exact=found.exact, per_page=flt.per_page,
                        page=flt.page if paged else None, next=found.next, prev=found.prev)

    def _case_views(self, session: Session, rows: Iterable[results.Row]) -> list[CaseView]:
        keys = [(row[0], row[1]) for row in rows]
        places = self._places(session, keys)
        return [_case_view(places[key]) for key in keys if key in places]

    def _places(self, session: Session, keys: list[tuple[int, int]], traces: bool = False
                ) -> dict[tuple[int, int], _Place]:
        """Where each (job, index) is stored, the chunks read once each (with their traces when asked:
        they are most of a chunk's bytes, and a page of results shows none)."""
        by_job: dict[int, list[int]] = {}
        for job_id, index in keys:
            by_job.setdefault(job_id, []).append(index)
        places: dict[tuple[int, int], _Place] = {}
        for job_id, indexes in by_job.items():
            job = self._visible(session, job_id)
            if job is None:
                continue
            found = chunks_holding(session, job_id, indexes, Chunk.worker, Chunk.finished_at)
            data = self._chunk_data(session, {chunk.id: chunk.finished_at for chunk in found.values()}, traces)
            for index, chunk in found.items():
                if chunk.id in data:  # else purged between the two reads (its job deleted meanwhile)
                    places[job_id, index] = _Place(job, chunk, data[chunk.id], index - chunk.first_index)
        return places

    def _chunk_data(self, session: Session, chunks: dict[int, datetime | None], traces: bool
                    ) -> dict[int, ChunkData]:
        """Chunks (id → when it was stored) decompressed, read in one query; those read without traces
        are kept for the next pages, under their id and time: SQLite may give a deleted job's ids again."""
        found = {} if traces else {ident: data for ident, when in chunks.items()
                                   if (data := self._chunks.get((ident, when)))}
        missing = chunks.keys() - found.keys()
        if missing:
            for ident, data in read_chunks(session, missing, traces).items():
                if not traces:
                    self._chunks.put((ident, chunks[ident]), data)
                found[ident] = data
        return found

    def iter_results(self, flt: ResultFilter) -> Iterator[ExportBatch]:
        """Every case matching a filter, streamed (for exports) in batches: in file order job by job
        (newest job first when the sort is descending), read chunk by chunk; for other sorts,
        page by page."""
        if flt.sort not in results.TIME_SORTS:
            for rows in _batched(results.iter_rows(lambda: self.db.session(write=False), flt, self.viewer,
                                                   self._facets), 2000):
                with self.db.session(write=False) as session:
                    views = self._case_views(session, rows)
                yield from ExportBatch.of_views(views)
            return
        with self.db.session(write=False) as session:
            search = results.ResultSearch(session, flt, self._facets)
            jobs = results.candidate_jobs(session, flt, search, self.viewer)
        for job in sorted(jobs, key=lambda job: job.id, reverse=flt.descending):
            yield from self._job_results(job, flt)

    def _job_results(self, job: Job, flt: ResultFilter) -> Iterator[ExportBatch]:
        wanted = _matcher(flt, engines.get(job.game))
        engine, cached = engines.get(job.game), job.copied_from is not None
        for chunk, data in stored_cases(self.db, job.id, flt.descending, flt.since, flt.until):
            first = chunk.first_index
            keep = range(chunk.count) if wanted is None else [k for k in range(chunk.count) if wanted(data, k)]
            indexes = [first + k for k in keep]
            inputs, lines = [data.inputs[k] for k in keep], [data.lines[k] for k in keep]
            rows = [[*result[:4], cached, result[4]] for k in keep
                    if (result := stored_result(engine, data, k, first + k))]
            if flt.descending:
                indexes, inputs, rows, lines = indexes[::-1], inputs[::-1], rows[::-1], lines[::-1]
            yield ExportBatch(job.id, job.game, chunk.worker, chunk.finished_at, indexes, inputs, rows, lines)

    def case(self, ident: int) -> CaseDetail:
        job_id, index = split_case_id(ident)
        if not index:
            raise NotFound(f"no case {ident}")
        return self._case(job_id, index, f"no case {ident}")

    def case_by_index(self, job_id: int, index: int) -> CaseDetail:
        return self._case(job_id, index, f"job {job_id} has no case {index}")

    def _case(self, job_id: int, index: int, missing: str) -> CaseDetail:
        with self.db.session(write=False) as session:
            place = self._places(session, [(job_id, index)], traces=True).get((job_id, index))
            if place is None:
                raise NotFound(missing)
            view = _case_view(place)
            trace, problem = None, None
            try:
                packed = place.data.trace(place.k)
                trace = None if packed is None else engines.get(place.job.game).unpack_trace(packed)
            except (DamagedChunk, TraceError) as error:  # shown on the case, not a failed request
                problem = str(error)
            return CaseDetail(**{name: getattr(view, name) for name in CaseView.__dataclass_fields__},
                              trace=trace, trace_error=problem)

    def output(self, job_id: int, partial: bool = False) -> Iterator[bytes]:
        """The judge output, in pieces of whole lines, exactly as the reference solutions print it; ``partial``:
        that of the cases solved so far, and before the file's first fault when it has faults."""
        with self.db.session(write=False) as session:
            job = self._job(session, job_id)
            if job.status != JobStatus.SUCCEEDED and not partial:
                raise Conflict(no_output(job_id, job.status, _partial_output(job)))
        return judge_output(self.db, job_id, before=job.fault_case)

    def kept_lines(self, job_id: int) -> Iterator[bytes]:
        """The judge line of every case of a job solved so far, in file order, in pieces of whole lines: of a
        failed job, each kept case's, those after its first fault too (a bad case has none); of a succeeded
        one, its output."""
        with self.db.session(write=False) as session:
            self._job(session, job_id)
        return judge_output(self.db, job_id)

    def input(self, job_id: int) -> Iterator[bytes]:
        """The job's judge file as the split read it: each case's canonical input on a line, then the
        game's terminator. It reads back to the same cases (an upload is kept only until its split
        ends; this is what stays of it, and all a generated job's file ever was)."""
        with self.db.session(write=False) as session:
            job = self._job(session, job_id, shared=True)
            if job.split_at is None:
                raise Conflict(f"job {job_id} is {job.status}: its input is whole once its file has been read")
            end = engines.get(job.game).terminator.encode() + b"\n"
        return itertools.chain(job_inputs(self.db, job_id), (end,))

    # --- one job's figures, from its row ---

    def distribution(self, job_id: int) -> DistributionView:
        """Counts of (outcome, number) for a job: what the job page's charts draw."""
        with self.db.session(write=False) as session:
            job = self._job(session, job_id)
            rows = sorted((NumberCount(outcome=outcome, number=int(number), count=count)
                           for outcome, by_number in job.distribution.items() for number, count in by_number.items()),
                          key=lambda r: (r.number, r.outcome))
            engine = engines.get(job.game)
            return DistributionView(game=job.game, number_name=engine.number_name, outcomes=list(engine.outcomes),
                                    counts=job_view(job).counts, by_number=rows)

    def timings(self, job_id: int) -> TimingsView:
        """How long a job's phases and its cases took: the job page's timings panel."""
        with self.db.session(write=False) as session:
            job = self._job(session, job_id)
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

    # --- the service ---

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
                select(Chunk.worker, Chunk.id, Chunk.job_id, Chunk.first_index, Chunk.count, Chunk.lease_until)
                .join(Job).where(Chunk.status == ChunkStatus.RUNNING, self.viewer.reads(Job.owner))
                .order_by(Chunk.id)).all()
        busy: dict[str, list[ProcessView]] = {}
        for chunk in running:
            if chunk.worker and chunk.worker.count(":") >= 2:
                worker, pid = chunk.worker.rsplit(":", 1)
                busy.setdefault(worker, []).append(ProcessView(
                    name=chunk.worker, pid=int(pid) if pid.isdigit() else 0, job_id=chunk.job_id, chunk_id=chunk.id,
                    first_index=chunk.first_index, cases=chunk.count,
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
            job = self._job(session, job_id)
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


def stored_result(engine: engines.Engine, data: ChunkData, k: int, index: int) -> list[Any]:
    """A stored case's result as the views and exports show it: ``[outcome, number, detail, solve_us,
    error]`` (outcome, number and detail ``None`` for a case not solved). The detail is read back from
    the judge line (and the extra the chunk keeps beside it: ``Engine.line_fields``)."""
    facts = data.facts
    if facts is None:
        return [None, None, None, 0, None]
    code = facts.codes[k]
    if not code:
        return [None, None, None, facts.solve_us[k], data.error(k)]
    line = data.lines[k]
    fields = engine.line_fields(index, line, facts.extras[k])
    detail = fields[2] if fields is not None else engine.parse_line(index, line, facts.extras[k])[2]
    return [engine.outcomes[code - 1], facts.numbers[k], detail, facts.solve_us[k], None]


def _case_view(place: _Place) -> CaseView:
    job, chunk, data, k = place.job, place.chunk, place.data, place.k
    index = chunk.first_index + k
    outcome, number, detail, solve_us, error = stored_result(engines.get(job.game), data, k, index)
    return CaseView(
        id=case_id(job.id, index), job_id=job.id, index=index, game=job.game, input=data.inputs[k],
        outcome=outcome, number=number, detail=detail, line=(data.lines[k] or None) if data.lines else None,
        error=error, cached=job.copied_from is not None, solve_us=solve_us, worker=chunk.worker,
        solved_at=chunk.finished_at)


@dataclass(frozen=True, slots=True)
class ExportBatch:
    """Exported cases, column by column: a chunk's worth of one job (as an export in file order
    reads them), or one case at a time for other sorts. ``results`` rows are ``[outcome, number,
    detail, solve_us, cached, error]``; an empty line is a case not solved."""

    job_id: int
    game: str
    worker: str | None
    solved_at: datetime | None
    indexes: list[int]
    inputs: list[str]
    results: list[list[Any]]
    lines: list[str]

    @classmethod
    def of_views(cls, views: list[CaseView]) -> Iterator[ExportBatch]:
        for view in views:
            yield cls(view.job_id, view.game, view.worker, view.solved_at, [view.index], [view.input],
                      [[view.outcome, view.number, view.detail, view.solve_us, view.cached, view.error]],
                      [view.line or ""])


def _matcher(flt: ResultFilter, engine: engines.Engine) -> Any:
    """A test of one stored case (a decompressed chunk and its place in it) against the filter's
    conditions on what it is and came to, or ``None`` when there are none."""
    if flt.canonical is None and flt.outcome is None and flt.number_min is None and flt.number_max is None:
        return None
    code = engine.outcome_code(flt.outcome) if flt.outcome in engine.outcomes else -1

    def wanted(data: ChunkData, k: int) -> bool:
        facts = data.facts
        if facts is None or (flt.canonical is not None and data.inputs[k] != flt.canonical):
            return False
        if flt.outcome is not None and facts.codes[k] != code:
            return False
        number = facts.numbers[k] if facts.codes[k] else None
        if flt.number_min is not None and (number is None or number < flt.number_min):
            return False
        if flt.number_max is not None and (number is None or number > flt.number_max):
            return False
        return True

    return wanted


def _batched(rows: Iterator[results.Row], size: int) -> Iterator[list[results.Row]]:
    batch: list[results.Row] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
