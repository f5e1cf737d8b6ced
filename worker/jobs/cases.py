"""Read models of cases: pages of a job's results and of the history across jobs, exports, one case with
its trace, as the viewer may read them.

A page of results is found from the chunks' facets (:mod:`worker.jobs.results`) and read from the chunks
holding those cases; a chunk decompressed is kept for the next pages (:class:`_ChunkCache`).
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from worker import engines
from worker.engines.results import TraceError
from worker.jobs import results
from worker.jobs.errors import NotFound
from worker.jobs.filters import ResultFilter
from worker.jobs.queries import visible_job
from worker.jobs.views import CaseDetail, CasePage, CaseView
from worker.store.chunks import (
    ChunkData,
    DamagedChunk,
    case_number,
    case_numbers,
    chunks_holding,
    read_chunks,
    stored_cases,
)
from worker.store.database import Database
from worker.store.models import Chunk, Job, case_id, split_case_id
from worker.store.owners import EVERYTHING, Viewer


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


class CaseQueries:
    """The reads of cases, as ``viewer`` may make them: a case of a job it may not see is not found, and
    left out of every page and export."""

    def __init__(self, db: Database, viewer: Viewer = EVERYTHING) -> None:
        self.db = db
        self.viewer = viewer
        self._chunks = _ChunkCache()
        self._facets = results.FacetCache()

    def seen_by(self, viewer: Viewer) -> CaseQueries:
        """These queries for ``viewer`` (sharing the caches: what they hold is found through a visible job)."""
        found = copy.copy(self)
        found.viewer = viewer
        return found

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
            job = visible_job(session, self.viewer, job_id)
            if job is None:
                continue
            found = chunks_holding(session, job_id, indexes, Chunk.worker, Chunk.finished_at)
            data = self._chunk_data(session, {chunk.id: chunk.finished_at for chunk, _ in found.values()}, traces)
            for index, (chunk, k) in found.items():
                if chunk.id in data:  # else purged between the two reads (its job deleted meanwhile)
                    places[job_id, index] = _Place(job, chunk, data[chunk.id], k)
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
            numbers = case_numbers(chunk)
            keep = range(chunk.count) if wanted is None else [k for k in range(chunk.count) if wanted(data, k)]
            indexes = [numbers[k] for k in keep]
            inputs, lines = [data.inputs[k] for k in keep], [data.lines[k] for k in keep]
            rows = [[*result[:4], cached, result[4]] for k in keep
                    if (result := stored_result(engine, data, k, numbers[k]))]
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
                trace = None if packed is None else engines.get(place.job.game).traces.unpack(packed)
            except (DamagedChunk, TraceError) as error:  # shown on the case, not a failed request
                problem = str(error)
            return CaseDetail(**{name: getattr(view, name) for name in CaseView.__dataclass_fields__},
                              trace=trace, trace_error=problem)


def stored_result(engine: engines.Engine, data: ChunkData, k: int, index: int) -> list[Any]:
    """A stored case's result as the views and exports show it: ``[outcome, number, detail, solve_us,
    error]`` (outcome, number and detail ``None`` for a case not solved). The detail is read back from
    the judge line (and the extra the chunk keeps beside it: ``JudgeLines.fields``)."""
    facts = data.facts
    if facts is None:
        return [None, None, None, 0, None]
    code = facts.codes[k]
    if not code:
        return [None, None, None, facts.solve_us[k], data.error(k)]
    line = data.lines[k]
    fields = engine.lines.fields(index, line, facts.extras[k])
    detail = fields[2] if fields is not None else engine.lines.parse(index, line, facts.extras[k])[2]
    return [engine.outcomes[code - 1], facts.numbers[k], detail, facts.solve_us[k], None]


def _case_view(place: _Place) -> CaseView:
    job, chunk, data, k = place.job, place.chunk, place.data, place.k
    index = case_number(chunk, k)
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
    code = engine.lines.code(flt.outcome) if flt.outcome in engine.outcomes else -1

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
