"""Finding results fast at any size: keyset pages over the case index rows, one job at a time.

A page never skips rows with OFFSET: it starts after (or before) a *cursor*, the case
``"<job>:<index>"`` it continues from, whose sort key is read back from its row. Within
a job every sort has an index: ``(job_id, index)``, ``(job_id, outcome, number, index)``
(sorting by number runs one range per outcome and merges them) and ``(job_id, solve_us,
index)``. Across jobs (the history) the jobs are walked newest first, each one's page
taken from those indexes, and a job whose counts say it has no match is not read at all.

Counts come from the job rows (counts by outcome and number are kept per job as its
chunks are stored), exact for filters on outcome and number; for other filters they are
counted up to :data:`COUNT_LIMIT` and reported as "at least".
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any

from sqlalchemy import and_, false, func, or_, select, tuple_, union_all
from sqlalchemy.orm import Session

from worker import engines
from worker.jobs.errors import Invalid, NotFound
from worker.jobs.filters import ResultFilter
from worker.jobs.outcomes import code
from worker.store.codecs import input_hash
from worker.store.models import MAX_INT, CaseRow, Chunk, Job

#: Filtered results are counted up to this many when their number cannot be told from the job rows.
COUNT_LIMIT = 10_000
#: Jobs a history page sorted by something other than time may merge (each is one query).
MAX_MERGED_JOBS = 200

#: Sorts that follow the order the cases were stored in: job by job, each in file order.
TIME_SORTS = ("index", "solved_at", "job_id")
#: A case index row as pages read it: (job_id, index, outcome code, number, solve_us, cached).
Row = tuple[int, int, int | None, int | None, int, bool]
_COLUMNS = (CaseRow.job_id, CaseRow.index, CaseRow.outcome, CaseRow.number, CaseRow.solve_us, CaseRow.cached)


@dataclass(frozen=True)
class Bound:
    """Where a page starts within a job: past these leading sort-key values (or at them, ``inclusive``)."""

    values: tuple[Any, ...]
    inclusive: bool = False


@dataclass(frozen=True)
class Found:
    rows: list[Row]
    #: Matching results in all, or at least this many when ``exact`` is false.
    total: int
    exact: bool
    #: Cursors of the pages after and before this one (``None`` at either end).
    next: str | None
    prev: str | None


def parse_cursor(raw: str) -> tuple[int, int]:
    """``"job:index"`` as numbers.

    >>> parse_cursor("12:340")
    (12, 340)
    """
    job, _, index = raw.partition(":")
    if not (job.isdigit() and index.isdigit() and len(job) <= 10 and len(index) <= 10
            and int(job) <= MAX_INT and int(index) <= MAX_INT):
        raise Invalid(f"not a cursor: {raw[:40]!r} (use the next or prev value of a page)")
    return int(job), int(index)


def cursor_of(row: Row) -> str:
    return f"{row[0]}:{row[1]}"


def _key(sort: str, row: Row) -> tuple[Any, ...]:
    """A row's position in ``sort`` order within its job."""
    if sort == "number":
        return (row[3], row[1])
    if sort == "outcome":
        return (row[2], row[3], row[1])
    if sort == "solve_us":
        return (row[4], row[1])
    return (row[1],)


def _key_columns(sort: str) -> tuple[Any, ...]:
    if sort == "number":
        return (CaseRow.number, CaseRow.index)
    if sort == "outcome":
        return (CaseRow.outcome, CaseRow.number, CaseRow.index)
    if sort == "solve_us":
        return (CaseRow.solve_us, CaseRow.index)
    return (CaseRow.index,)


class ResultSearch:
    """One search (a filter) over the case index rows, read in one session."""

    def __init__(self, session: Session, flt: ResultFilter) -> None:
        self.session = session
        self.flt = flt
        self.codes = self._codes()
        self.hash = input_hash(flt.game, flt.canonical) if flt.canonical is not None and flt.game else None

    # --- which outcomes and numbers may match, from the job rows ---

    def _codes(self) -> list[int]:
        flt = self.flt
        if flt.outcome is not None:
            return [code(flt.outcome)]
        games = [flt.game] if flt.game else engines.names()
        return sorted({code(o) for g in games for o in engines.get(g).outcomes})

    def matches_in(self, job: Job) -> int:
        """How many of the job's solved cases match the filter's outcome and numbers (from its counts)."""
        flt = self.flt
        total = 0
        for outcome, by_number in job.distribution.items():
            if flt.outcome is not None and outcome != flt.outcome:
                continue
            for number, count in by_number.items():
                n = int(number)
                if (flt.number_min is None or n >= flt.number_min) and (flt.number_max is None or n <= flt.number_max):
                    total += count
        return total

    @property
    def counted_from_jobs(self) -> bool:
        """Whether the job rows tell exactly how many cases match (no filter on time or input)."""
        flt = self.flt
        return flt.since is None and flt.until is None and self.hash is None

    @property
    def solved_only(self) -> bool:
        """Whether only solved cases can match (any filter on what a case came to, or a sort by it)."""
        flt = self.flt
        return (flt.outcome is not None or flt.number_min is not None or flt.number_max is not None
                or flt.sort in ("number", "outcome"))

    # --- one job's rows ---

    def _where(self, job: Job) -> list[Any]:
        flt = self.flt
        conditions: list[Any] = [CaseRow.job_id == job.id]
        if flt.outcome is not None:
            conditions.append(CaseRow.outcome == self.codes[0])
        elif self.solved_only:
            conditions.append(CaseRow.outcome.is_not(None))
        if flt.number_min is not None:
            conditions.append(CaseRow.number >= flt.number_min)
        if flt.number_max is not None:
            conditions.append(CaseRow.number <= flt.number_max)
        if self.hash is not None:
            conditions.append(CaseRow.input_hash == self.hash)
        if flt.since is not None or flt.until is not None:
            conditions.append(self._solved_between(job))
        return conditions

    def _solved_between(self, job: Job) -> Any:
        """The cases of ``job`` whose chunk was stored within the filter's times, as index ranges."""
        flt = self.flt
        query = select(Chunk.first_index, Chunk.count).where(Chunk.job_id == job.id, Chunk.finished_at.is_not(None))
        if flt.since is not None:
            query = query.where(Chunk.finished_at >= flt.since)
        if flt.until is not None:
            query = query.where(Chunk.finished_at < flt.until)
        ranges: list[list[int]] = []
        for first, count in self.session.execute(query.order_by(Chunk.first_index)):
            if ranges and ranges[-1][1] == first:
                ranges[-1][1] = first + count
            else:
                ranges.append([first, first + count])
        if not ranges:
            return false()
        return or_(*(and_(CaseRow.index >= a, CaseRow.index < b) for a, b in ranges))

    def job_page(self, job: Job, bound: Bound | None, limit: int, descending: bool) -> list[Row]:
        """Up to ``limit`` of ``job``'s matching rows in the filter's sort order, past ``bound``."""
        sort = self.flt.sort
        columns = _key_columns(sort)
        conditions = self._where(job)
        if bound is not None:
            key = tuple_(*columns[: len(bound.values)])
            value = tuple_(*bound.values)
            if descending:
                conditions.append(key <= value if bound.inclusive else key < value)
            else:
                conditions.append(key >= value if bound.inclusive else key > value)
        order = [c.desc() if descending else c.asc() for c in columns]
        if sort == "number" and self.flt.outcome is None:
            # One ordered range of (job, outcome, number, index) per outcome, merged.
            parts = [select(*_COLUMNS).where(*conditions, CaseRow.outcome == code).order_by(*order).limit(limit)
                     .subquery().select() for code in self.codes]
            merged = union_all(*parts).subquery()
            query = select(*merged.c).order_by(*[merged.c[c.key].desc() if descending else merged.c[c.key].asc()
                                                 for c in columns])
        else:
            query = select(*_COLUMNS).where(*conditions).order_by(*order)
        return [tuple(row) for row in self.session.execute(query.limit(limit))]  # type: ignore[misc]

    def count(self, jobs: list[Job]) -> tuple[int, bool]:
        """``(matches, exact)`` over these jobs."""
        if self.counted_from_jobs:
            if self.solved_only:
                return sum(self.matches_in(job) for job in jobs), True
            return sum(job.done + job.failed_cases for job in jobs), True
        found = 0
        for job in jobs:
            rest = COUNT_LIMIT + 1 - found
            if rest <= 0:
                break
            inner = select(CaseRow.index).where(*self._where(job)).limit(rest).subquery()
            found += self.session.scalar(select(func.count()).select_from(inner)) or 0
        return min(found, COUNT_LIMIT), found <= COUNT_LIMIT


def search(session: Session, flt: ResultFilter, after: str | None = None, before: str | None = None,
           last: bool = False) -> Found:
    """A page of results matching ``flt``: the first (or the ``last``), or the one after/before a cursor."""
    finder = ResultSearch(session, flt)
    jobs = candidate_jobs(session, flt, finder)
    total, exact = finder.count(jobs)
    if flt.sort not in TIME_SORTS and len(jobs) > MAX_MERGED_JOBS:
        raise Invalid(f"sorting every job's results by {flt.sort} needs fewer jobs: filter by game or job "
                      f"(this search spans {len(jobs):,} jobs, at most {MAX_MERGED_JOBS} can be merged)")
    backwards = before is not None or last
    cursor = parse_cursor(before or after) if (before or after) else None
    descending = flt.descending != backwards
    skip = (flt.page - 1) * flt.per_page
    rows = _walk(session, finder, jobs, cursor, skip + flt.per_page + 1, descending)[skip:]
    more = len(rows) > flt.per_page
    rows = rows[: flt.per_page]
    if backwards:
        rows.reverse()
    at_start = (backwards and not more) or (not backwards and cursor is None and not skip)
    at_end = (not backwards and not more) or (backwards and cursor is None)
    return Found(rows, total, exact,
                 next=cursor_of(rows[-1]) if rows and not at_end else None,
                 prev=cursor_of(rows[0]) if rows and not at_start else None)


def candidate_jobs(session: Session, flt: ResultFilter, finder: ResultSearch) -> list[Job]:
    """The jobs that may hold matches, in the order a page walks them (by id, as the sort wants)."""
    query = select(Job)
    if flt.job_id is not None:
        job = session.get(Job, flt.job_id)
        if job is None:
            raise NotFound(f"no job {flt.job_id}")
        jobs = [job]
    else:
        if flt.game is not None:
            query = query.where(Job.game == flt.game)
        if flt.until is not None:
            query = query.where((Job.started_at.is_(None)) | (Job.started_at < flt.until))
        if flt.since is not None:
            query = query.where((Job.finished_at.is_(None)) | (Job.finished_at >= flt.since))
        jobs = list(session.scalars(query.where(Job.done + Job.failed_cases > 0)))
    if finder.solved_only:
        jobs = [job for job in jobs if finder.matches_in(job)]
    return sorted(jobs, key=lambda job: job.id)


def _walk(session: Session, finder: ResultSearch, jobs: list[Job], cursor: tuple[int, int] | None, limit: int,
          descending: bool) -> list[Row]:
    """Up to ``limit`` rows past ``cursor`` in the search's order (``descending`` as walked)."""
    after: Row | None = None
    if cursor is not None:
        found = session.execute(select(*_COLUMNS).where(CaseRow.job_id == cursor[0],
                                                        CaseRow.index == cursor[1])).one_or_none()
        if found is None:
            raise Invalid("the cursor's case is gone (its job was deleted): start from the first page")
        after = tuple(found)  # type: ignore[assignment]
    sort = finder.flt.sort
    if sort in TIME_SORTS or len(jobs) == 1:
        # Job by job (by id, as the jobs were made): every row of a job comes before the next job's.
        rows: list[Row] = []
        for job in sorted(jobs, key=lambda job: job.id, reverse=descending):
            if after is not None and (job.id > after[0] if descending else job.id < after[0]):
                continue  # before the cursor's job
            bound = Bound(_key(sort, after)) if after is not None and job.id == after[0] else None
            rows += finder.job_page(job, bound, limit - len(rows), descending)
            if len(rows) >= limit:
                break
        return rows
    return _merge(finder, jobs, after, limit, descending)


def _merge(finder: ResultSearch, jobs: list[Job], after: Row | None, limit: int, descending: bool) -> list[Row]:
    """The first ``limit`` rows over several jobs in a sort by value: each job's page, merged by
    (value, job, index)."""
    sort = finder.flt.sort

    def place(row: Row) -> tuple[Any, ...]:
        key = _key(sort, row)
        return (*key[:-1], row[0], key[-1])

    pages = []
    for job in jobs:
        bound = None
        if after is not None:
            key = _key(sort, after)
            if job.id == after[0]:
                bound = Bound(key)
            else:  # the same value comes after the cursor's in a job further on in the walk
                bound = Bound(key[:-1], inclusive=(job.id < after[0]) if descending else (job.id > after[0]))
        pages.append(finder.job_page(job, bound, limit, descending))
    return list(islice(heapq.merge(*pages, key=place, reverse=descending), limit))


def iter_rows(sessions: Callable[[], AbstractContextManager[Session]], flt: ResultFilter,
              page_rows: int = 5000) -> Iterator[Row]:
    """Every matching row in the search's order (for exports), page by page, each page read in a
    session of its own from ``sessions``."""
    flt = replace(flt, per_page=page_rows)
    cursor: str | None = None
    while True:
        with sessions() as session:
            found = search(session, flt, cursor, None)
        yield from found.rows
        if found.next is None:
            return
        cursor = found.next
