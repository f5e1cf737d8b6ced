"""Finding results fast at any size: pages found from the chunks' facets, read from their facts.

A job's cases are stored a chunk at a time (:mod:`worker.store.chunks`). Beside its blobs a
chunk keeps its *facets* — how many of its cases came to each (outcome, number) and to each
(outcome, solve time) — and its *facts*: every case's outcome code, number and solve time, as
arrays. No row is kept per case, so nothing is counted or scanned row by row: a job's facets
say which of its chunks hold matches of a filter, in the order a sort wants them, and only
those chunks' facts are read (one or two for a page in file order, one per value for a page
sorted by a rare value). Facets of a finished job never change; they are read once per job
state and kept (:class:`FacetIndex`).

A page never skips rows with OFFSET: it starts after (or before) a *cursor*, the case
``"<job>:<index>"`` it continues from, whose sort key is read back from its chunk's facts.
Across jobs (the history) the jobs are walked newest first, each one's page found as above,
and a job whose counts say it has no match is not read at all.

Counts come from the job rows (counts by outcome and number are kept per job as its chunks
are stored), or from the facets of the chunks stored within a filter's times, exact either
way; a search by input is counted up to :data:`COUNT_LIMIT` and reported as "at least".
"""

from __future__ import annotations

import heapq
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from worker import engines
from worker.engines.chunks import case_hash
from worker.jobs.errors import Invalid, NotFound
from worker.jobs.filters import ResultFilter
from worker.store import chunks as stored
from worker.store.chunks import Facts, Summary, case_number, case_place, end_number
from worker.store.models import MAX_INT, Job
from worker.store.owners import Viewer

#: Searches by input are counted up to this many.
COUNT_LIMIT = 10_000
#: Jobs a history page sorted by something other than time may merge.
MAX_MERGED_JOBS = 200
#: Chunks whose facts a page reads in one query, ahead of need.
PREFETCH = 16

#: Sorts that follow the order the cases were stored in: job by job, each in file order.
TIME_SORTS = ("index", "solved_at", "job_id")
#: A case as pages find it: (job_id, index, outcome code, number, solve_us, cached); the code and
#: number are ``None`` for a case that was not solved.
Row = tuple[int, int, int | None, int | None, int, bool]


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


def sort_key(sort: str, row: Row) -> tuple[Any, ...]:
    """A row's position in ``sort`` order within its job (an unsolved case sorts first by value).

    >>> sort_key("number", (1, 7, 2, 66, 40, False)), sort_key("outcome", (1, 7, None, None, 0, False))
    ((66, 7), (-1, -1, 7))
    """
    code = -1 if row[2] is None else row[2]
    number = -1 if row[3] is None else row[3]
    if sort == "number":
        return (number, row[1])
    if sort == "outcome":
        return (code, number, row[1])
    if sort == "solve_us":
        return (row[4], row[1])
    return (row[1],)


class FacetIndex:
    """A job's chunks as the pages find them: their facets in file order, and for each sort by value
    the values in order with the chunks that hold each (built once per job state)."""

    def __init__(self, summaries: Sequence[Summary]) -> None:
        self.chunks = list(summaries)
        self.starts = [chunk.first_index for chunk in self.chunks]
        self._by: dict[str, tuple[list[Any], dict[Any, list[tuple[int, int]]]]] = {}
        self._lock = threading.Lock()

    def holding(self, index: int) -> int:
        """The position of the chunk holding case ``index`` (or of the last one starting before it)."""
        return bisect_right(self.starts, index) - 1

    def values(self, sort: str) -> tuple[list[Any], dict[Any, list[tuple[int, int]]]]:
        """For a sort by value: every value (number, (code, number) or solve time) in ascending order,
        and the chunks holding cases of each as ``(position, outcome code)``, in file order."""
        with self._lock:
            if sort not in self._by:
                found: dict[Any, list[tuple[int, int]]] = {}
                for position, chunk in enumerate(self.chunks):
                    for entry in _entries(sort, chunk):
                        found.setdefault(_value(sort, entry), []).append((position, entry[0]))
                self._by[sort] = (sorted(found), found)
            return self._by[sort]


def _entries(sort: str, chunk: Summary) -> Sequence[tuple[int, int, int]]:
    """A chunk's facet entries a sort reads: ``(code, number or solve time, cases)``."""
    return chunk.times if sort == "solve_us" else chunk.numbers


def _value(sort: str, entry: tuple[int, int, int]) -> Any:
    return (entry[0], entry[1]) if sort == "outcome" else entry[1]


class FacetCache:
    """Jobs' facet indexes, kept by (job, cases answered): a job whose count has not moved has the same
    stored chunks (a chunk's facets never change), and one that moved is read again."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._items: OrderedDict[tuple[int, int, Any], FacetIndex] = OrderedDict()
        self._lock = threading.Lock()

    def index(self, session: Session, job: Job) -> FacetIndex:
        key = (job.id, job.done + job.failed_cases, job.created_at)  # SQLite may give a deleted job's id again
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
        found = FacetIndex(stored.summaries(session, job.id))
        with self._lock:
            self._items[key] = found
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return found


class ResultSearch:
    """One search (a filter) over the stored chunks, read in one session."""

    def __init__(self, session: Session, flt: ResultFilter, facets: FacetCache | None = None) -> None:
        self.session = session
        self.flt = flt
        self.facets = facets or FacetCache()
        self.codes = self._codes()
        self.hash = case_hash(flt.canonical) if flt.canonical is not None else None
        self._facts: dict[int, Facts] = {}

    # --- what may match ---

    def _codes(self) -> dict[str, frozenset[int]] | None:
        """The outcome codes a case of each game may have to match (``None``: any, unsolved cases too)."""
        flt = self.flt
        if flt.outcome is None:
            return None if not self.solved_only else {
                game: frozenset(range(1, len(engines.get(game).outcomes) + 1)) for game in engines.names()}
        return {game: frozenset({engines.get(game).lines.code(flt.outcome)})
                if flt.outcome in engines.get(game).outcomes else frozenset() for game in engines.names()}

    @property
    def solved_only(self) -> bool:
        """Whether only solved cases can match (any filter on what a case came to, or a sort by it)."""
        flt = self.flt
        return (flt.outcome is not None or flt.number_min is not None or flt.number_max is not None
                or flt.sort in ("number", "outcome"))

    @property
    def counted_from_jobs(self) -> bool:
        """Whether the job rows tell exactly how many cases match (no filter on time or input)."""
        return self.flt.since is None and self.flt.until is None and self.hash is None

    def _in_range(self, number: int) -> bool:
        flt = self.flt
        return (flt.number_min is None or number >= flt.number_min) and (flt.number_max is None or number <= flt.number_max)

    def matches_in(self, job: Job) -> int:
        """How many of the job's solved cases match the filter's outcome and numbers (from its counts)."""
        flt = self.flt
        return sum(count for outcome, by_number in job.distribution.items()
                   if flt.outcome is None or outcome == flt.outcome
                   for number, count in by_number.items() if self._in_range(int(number)))

    def _chunk_matches(self, game: str, chunk: Summary) -> int:
        """Cases of a stored chunk that match the filter's outcome and numbers, from its facets."""
        if self.codes is None and self.flt.number_min is None and self.flt.number_max is None:
            return chunk.count
        codes = self.codes[game] if self.codes is not None else None
        return sum(count for code, number, count in chunk.numbers
                   if (codes is None or code in codes) and self._in_range(number))

    def _in_time(self, chunk: Summary) -> bool:
        flt = self.flt
        when = chunk.finished_at
        return when is not None and (flt.since is None or when >= flt.since) and (flt.until is None or when < flt.until)

    def _wanted(self, game: str) -> Callable[[Facts, int], bool]:
        """A test of one stored case (a chunk's facts and its place in them) against the filter."""
        codes = self.codes[game] if self.codes is not None else None
        low, high = self.flt.number_min, self.flt.number_max

        def wanted(facts: Facts, k: int) -> bool:
            code = facts.codes[k]
            if codes is not None and code not in codes:
                return False
            if low is None and high is None:
                return True
            return code != 0 and (low is None or facts.numbers[k] >= low) and (high is None or facts.numbers[k] <= high)

        return wanted

    # --- one job's chunks ---

    def _chunks(self, job: Job) -> tuple[FacetIndex, list[int]]:
        """The job's facet index and the positions of its chunks that may hold matches, in file order."""
        index = self.facets.index(self.session, job)
        timed = self.flt.since is not None or self.flt.until is not None
        positions = [p for p, chunk in enumerate(index.chunks)
                     if (not timed or self._in_time(chunk)) and self._chunk_matches(job.game, chunk)]
        if self.hash is not None:
            places = stored.may_hold(self.session, [index.chunks[p] for p in positions], self.hash)
            positions = [positions[at] for at in places]
        return index, positions

    def facts(self, chunks: Sequence[Summary]) -> list[tuple[Summary, Facts]]:
        """These chunks with their facts, each read once per search (those not read yet in one query). A
        chunk purged since its job's facets were read (its job deleted meanwhile) is left out: a search
        answers with what is still stored."""
        missing = [chunk.id for chunk in chunks if chunk.id not in self._facts]
        if missing:
            self._facts.update(stored.facts(self.session, missing, with_inputs=self.hash is not None))
        return [(chunk, facts) for chunk in chunks if (facts := self._facts.get(chunk.id)) is not None]

    def job_page(self, job: Job, bound: Bound | None, limit: int, descending: bool) -> list[Row]:
        """Up to ``limit`` of ``job``'s matching rows in the filter's sort order, past ``bound``."""
        index, positions = self._chunks(job)
        if not positions or limit <= 0:
            return []
        sort = self.flt.sort if self.flt.sort not in TIME_SORTS else "index"
        past = _past(sort, bound, descending)
        wanted = self._wanted(job.game)
        cached = bool(job.copied_from)
        if self.hash is not None or sort == "index":
            return self._in_file_order(job, index, positions, sort, past, wanted, cached, limit, descending)
        return self._by_value(job, index, set(positions), sort, past, wanted, cached, limit, descending)

    def _in_file_order(self, job: Job, index: FacetIndex, positions: list[int], sort: str,
                       past: Callable[[Row], bool], wanted: Callable[[Facts, int], bool], cached: bool, limit: int,
                       descending: bool) -> list[Row]:
        """Rows chunk by chunk in file order (a search by input finds few: they are sorted after)."""
        rows: list[Row] = []
        order = positions[::-1] if descending else positions
        if self.hash is None:
            order = _from_bound(index, order, past, descending)
        for at in range(0, len(order), PREFETCH):
            group = [index.chunks[p] for p in order[at : at + PREFETCH]]
            for chunk, facts in self.facts(group):
                ks = range(chunk.count - 1, -1, -1) if descending else range(chunk.count)
                for k in ks:
                    if not wanted(facts, k) or (self.hash is not None and facts.inputs is not None
                                                and facts.inputs[k] != self.flt.canonical):
                        continue
                    row = _row(job.id, chunk, facts, k, cached)
                    if past(row):
                        rows.append(row)
                        if len(rows) >= limit and self.hash is None:
                            return rows
        if self.hash is not None:
            rows.sort(key=lambda row: sort_key(sort, row), reverse=descending)
        return rows[:limit]

    def _by_value(self, job: Job, index: FacetIndex, positions: set[int], sort: str, past: Callable[[Row], bool],
                  wanted: Callable[[Facts, int], bool], cached: bool, limit: int, descending: bool) -> list[Row]:
        """Rows value by value (each value's chunks in file order), from the bound's value on."""
        values, holding = index.values(sort)
        codes = self.codes[job.game] if self.codes is not None else None
        values = self._wanted_values(values, sort, codes)
        ordered = values[::-1] if descending else values
        start = _first_value(ordered, past, sort, descending)
        rows: list[Row] = []
        plan = ((value, p) for value in islice(ordered, start, None)
                for p in _chunks_of(holding[value], positions, codes, descending))
        while len(rows) < limit:
            batch = list(islice(plan, PREFETCH))
            if not batch:
                break
            rows += self._rows_of(job, index, batch, sort, past, wanted, cached, descending, limit - len(rows))
        return rows[:limit]

    def _wanted_values(self, values: list[Any], sort: str, codes: frozenset[int] | None) -> list[Any]:
        """The values of ``sort`` within the filter's bounds (and of outcomes, those the filter wants)."""
        if sort == "number":
            return [v for v in values if self._in_range(v)]
        if sort == "outcome":
            return [v for v in values if (codes is None or v[0] in codes) and self._in_range(v[1])]
        return values

    def _rows_of(self, job: Job, index: FacetIndex, batch: list[tuple[Any, int]], sort: str,
                 past: Callable[[Row], bool], wanted: Callable[[Facts, int], bool], cached: bool, descending: bool,
                 room: int) -> list[Row]:
        """The rows of a batch of (value, chunk position), its chunks' facts read at once, until ``room``
        rows are found."""
        self.facts([index.chunks[p] for _, p in batch])
        rows: list[Row] = []
        for value, p in batch:
            chunk = index.chunks[p]
            facts = self._facts.get(chunk.id)
            if facts is None:  # purged since the facets were read
                continue
            rows += [row for k in _places(sort, facts, value, descending)
                     if wanted(facts, k) and past(row := _row(job.id, chunk, facts, k, cached))]
            if len(rows) >= room:
                break
        return rows

    def count(self, jobs: list[Job]) -> tuple[int, bool]:
        """``(matches, exact)`` over these jobs."""
        if self.counted_from_jobs:
            if self.solved_only:
                return sum(self.matches_in(job) for job in jobs), True
            return sum(job.done + job.failed_cases for job in jobs), True
        if self.hash is None:  # a filter by time: the facets of the chunks stored then
            total = 0
            for job in jobs:
                index, positions = self._chunks(job)
                total += sum(self._chunk_matches(job.game, index.chunks[p]) for p in positions)
            return total, True
        found = 0
        for job in jobs:
            found += len(self.job_page(job, None, COUNT_LIMIT + 1 - found, False))
            if found > COUNT_LIMIT:
                break
        return min(found, COUNT_LIMIT), found <= COUNT_LIMIT


def _chunks_of(holding: list[tuple[int, int]], positions: set[int], codes: frozenset[int] | None,
               descending: bool) -> list[int]:
    """The positions of a value's chunks that may hold a match, each once, in walk order."""
    found = list(dict.fromkeys(p for p, code in holding if p in positions and (codes is None or code in codes)))
    return found[::-1] if descending else found


def _row(job_id: int, chunk: Summary, facts: Facts, k: int, cached: bool) -> Row:
    code = facts.codes[k]
    return (job_id, case_number(chunk, k), code or None, facts.numbers[k] if code else None, facts.solve_us[k],
            cached)


def _past(sort: str, bound: Bound | None, descending: bool) -> Callable[[Row], bool]:
    """Whether a row comes after ``bound`` in the walk's direction."""
    if bound is None:
        return lambda row: True
    size, values = len(bound.values), bound.values
    if descending:
        if bound.inclusive:
            return lambda row: sort_key(sort, row)[:size] <= values
        return lambda row: sort_key(sort, row)[:size] < values
    if bound.inclusive:
        return lambda row: sort_key(sort, row)[:size] >= values
    return lambda row: sort_key(sort, row)[:size] > values


def _from_bound(index: FacetIndex, order: list[int], past: Callable[[Row], bool], descending: bool) -> list[int]:
    """``order`` (chunk positions in file order, or reversed) from the first chunk that may hold a row past
    the bound: the chunk whose last (first, walking back) case is past it."""
    def last_past(p: int) -> bool:
        chunk = index.chunks[p]
        edge = chunk.first_index if descending else end_number(chunk) - 1
        return past((0, edge, None, None, 0, False))

    low, high = 0, len(order)
    while low < high:  # positions past the bound come last, in walk order
        middle = (low + high) // 2
        if last_past(order[middle]):
            high = middle
        else:
            low = middle + 1
    return order[low:]


def _first_value(ordered: list[Any], past: Callable[[Row], bool], sort: str, descending: bool) -> int:
    """Where in ``ordered`` values the walk starts: the first value some row of which may be past the
    bound (a row of that value with the extreme index)."""
    edge = 0 if descending else MAX_INT

    def probe(value: Any) -> Row:
        if sort == "outcome":
            return (0, edge, value[0], value[1], 0, False)
        if sort == "number":
            return (0, edge, 1, value, 0, False)
        return (0, edge, 1, 0, value, False)

    low, high = 0, len(ordered)
    while low < high:
        middle = (low + high) // 2
        if past(probe(ordered[middle])):
            high = middle
        else:
            low = middle + 1
    return low


def _places(sort: str, facts: Facts, value: Any, descending: bool) -> list[int]:
    """The places in a chunk of the cases with ``value``, in file order (reversed when descending)."""
    if sort == "outcome":
        code, number = value
        places = [k for k in _all(facts.numbers, number) if facts.codes[k] == code]
    elif sort == "number":
        places = [k for k in _all(facts.numbers, value) if facts.codes[k]]
    else:
        places = list(_all(facts.solve_us, value))
    return places[::-1] if descending else places


def _all(values: Any, value: int) -> Iterator[int]:
    """Every place of ``value`` in an array, found by ``index`` (a scan in C)."""
    at = -1
    try:
        while True:
            at = values.index(value, at + 1)
            yield at
    except ValueError:
        return


def search(session: Session, flt: ResultFilter, viewer: Viewer, after: str | None = None, before: str | None = None,
           last: bool = False, facets: FacetCache | None = None, after_row: Row | None = None) -> Found:
    """A page of results matching ``flt`` among the jobs ``viewer`` sees: the first (or the ``last``), or
    the one after/before a cursor (or after ``after_row``, a row a page before gave: its job may be gone
    since)."""
    finder = ResultSearch(session, flt, facets)
    jobs = candidate_jobs(session, flt, finder, viewer)
    total, exact = finder.count(jobs)
    if flt.sort not in TIME_SORTS and len(jobs) > MAX_MERGED_JOBS:
        raise Invalid(f"sorting every job's results by {flt.sort} needs fewer jobs: filter by game or job "
                      f"(this search spans {len(jobs):,} jobs, at most {MAX_MERGED_JOBS} can be merged)")
    backwards = before is not None or last
    cursor = parse_cursor(before or after) if (before or after) else None
    skip = (flt.page - 1) * flt.per_page
    start = _start_row(finder, jobs, cursor, after_row)
    rows = _walk(finder, jobs, start, skip + flt.per_page + 1, flt.descending != backwards)[skip:]
    return _page(rows, flt.per_page, total, exact, backwards, from_cursor=cursor is not None, skipped=skip > 0)


def _start_row(finder: ResultSearch, jobs: list[Job], cursor: tuple[int, int] | None,
               after_row: Row | None) -> Row | None:
    """The row a page starts after: the cursor's (whose job must be one searched), else ``after_row``."""
    if cursor is None:
        return after_row
    if cursor[0] not in {job.id for job in jobs}:
        raise Invalid("the cursor's case is gone (its job was deleted): start from the first page")
    return _cursor_row(finder, cursor)


def _page(rows: list[Row], per_page: int, total: int, exact: bool, backwards: bool, from_cursor: bool,
          skipped: bool) -> Found:
    """A page of ``rows`` (walked ``backwards`` or not, from a cursor or not, past pages ``skipped`` or not;
    one more than a page when there are more), with the cursors of the pages next to it, ``None`` at
    either end."""
    more = len(rows) > per_page
    rows = rows[:per_page]
    if backwards:
        rows.reverse()
    at_start = (backwards and not more) or (not backwards and not from_cursor and not skipped)
    at_end = (not backwards and not more) or (backwards and not from_cursor)
    return Found(rows, total, exact,
                 next=cursor_of(rows[-1]) if rows and not at_end else None,
                 prev=cursor_of(rows[0]) if rows and not at_start else None)


def candidate_jobs(session: Session, flt: ResultFilter, finder: ResultSearch, viewer: Viewer) -> list[Job]:
    """The jobs that may hold matches, of those ``viewer`` sees, in the order a page walks them (by id,
    as the sort wants)."""
    query = select(Job).where(viewer.reads(Job.owner), Job.deleted_at.is_(None))
    if flt.job_id is not None:
        job = session.scalars(query.where(Job.id == flt.job_id)).first()
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
    if flt.canonical is not None:
        jobs = [job for job in jobs if job.game == flt.game]
    return sorted(jobs, key=lambda job: job.id)


def _cursor_row(finder: ResultSearch, cursor: tuple[int, int]) -> Row:
    job = finder.session.get(Job, cursor[0])
    if job is not None and job.deleted_at is None:
        index = finder.facets.index(finder.session, job)
        at = index.holding(cursor[1])
        k = case_place(index.chunks[at], cursor[1]) if at >= 0 else None
        if k is not None:
            for chunk, facts in finder.facts([index.chunks[at]]):
                return _row(job.id, chunk, facts, k, bool(job.copied_from))
    raise Invalid("the cursor's case is gone (its job was deleted): start from the first page")


def _walk(finder: ResultSearch, jobs: list[Job], after: Row | None, limit: int, descending: bool) -> list[Row]:
    """Up to ``limit`` rows past the row ``after`` in the search's order (``descending`` as walked)."""
    sort = finder.flt.sort if finder.flt.sort not in TIME_SORTS else "index"
    if sort == "index" or len(jobs) == 1:
        # Job by job (by id, as the jobs were made): every row of a job comes before the next job's.
        rows: list[Row] = []
        for job in sorted(jobs, key=lambda job: job.id, reverse=descending):
            if after is not None and (job.id > after[0] if descending else job.id < after[0]):
                continue  # before the cursor's job
            bound = Bound(sort_key(sort, after)) if after is not None and job.id == after[0] else None
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
        key = sort_key(sort, row)
        return (*key[:-1], row[0], key[-1])

    pages = []
    for job in jobs:
        bound = None
        if after is not None:
            key = sort_key(sort, after)
            if job.id == after[0]:
                bound = Bound(key)
            else:  # the same value comes after the cursor's in a job further on in the walk
                bound = Bound(key[:-1], inclusive=(job.id < after[0]) if descending else (job.id > after[0]))
        pages.append(finder.job_page(job, bound, limit, descending))
    return list(islice(heapq.merge(*pages, key=place, reverse=descending), limit))


def iter_rows(sessions: Callable[[], AbstractContextManager[Session]], flt: ResultFilter, viewer: Viewer,
              facets: FacetCache | None = None, page_rows: int = 5000) -> Iterator[Row]:
    """Every matching row in the search's order (for exports), page by page, each page read in a
    session of its own from ``sessions``."""
    flt = replace(flt, per_page=page_rows)
    last: Row | None = None
    facets = facets or FacetCache()
    while True:
        # The next page starts after the last row itself, not its cursor: its job may be deleted meanwhile.
        with sessions() as session:
            found = search(session, flt, viewer, facets=facets, after_row=last)
        yield from found.rows
        if found.next is None:
            return
        last = found.rows[-1]

