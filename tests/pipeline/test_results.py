"""Pages of results follow cursors: every sort and filter walks the same cases a plain sort of all
of them gives, forwards and backwards, one job or many, with the counts from the job rows."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from tests.support.inline import InlineDispatcher
from tests.support.jobs import submit
from tests.support.paths import JUDGE_DATA
from tests.support.plugin import unchanged
from worker.config import Settings
from worker.jobs.cases import CaseQueries
from worker.jobs.errors import Invalid
from worker.jobs.filters import ResultFilter
from worker.jobs.queries import JobQueries
from worker.jobs.service import JobService
from worker.jobs.views import CaseView
from worker.store.database import Database

#: Cases in the three jobs of the ``jobs`` fixture.
ALL = 2000 + 3 + 200
SORTS = ["index", "-index", "number", "-number", "outcome", "-outcome", "solve_us", "-solve_us", "solved_at",
         "-solved_at", "job_id"]


def _key(sort: str, case: CaseView) -> tuple[Any, ...]:
    from worker import engines

    name = sort.lstrip("-")
    if name == "number":
        return (case.number, case.job_id, case.index)
    if name == "outcome":
        return (engines.get(case.game).lines.code(case.outcome or ""), case.number, case.job_id, case.index)
    if name == "solve_us":
        return (case.solve_us, case.job_id, case.index)
    return (case.job_id, case.index)


def _walk(cases: Any, flt: ResultFilter) -> list[CaseView]:
    seen: list[CaseView] = []
    page = cases.results(flt)
    while True:
        seen += page.items
        if page.next is None:
            return seen
        page = cases.results(replace(flt, after=page.next))


def _walk_back(cases: Any, flt: ResultFilter) -> list[CaseView]:
    page = cases.results(replace(flt, last=True))
    seen = list(page.items)
    while page.prev is not None:
        page = cases.results(replace(flt, before=page.prev, last=False))
        seen = page.items + seen
    return seen


@pytest.fixture(scope="module")
def jobs(module_db: Database, module_settings: Settings) -> Iterator[list[int]]:
    """A job of 2,000 accordion decks, one of 10-20-30 (every outcome) and one of accordion's few-piles
    file (the same outcomes and numbers as the first job's, in another job), chunks of 100.

    Made once per database for the whole module (solving them cost more than most tests here): its
    tests only read them, which ``unchanged`` holds them to."""
    service = JobService(module_db, module_settings, InlineDispatcher(module_db, module_settings))
    service.settings = replace(service.settings, chunk_size=100)
    files = (("accordion", "random-2000"), ("10-20-30", "sample"), ("accordion", "few-piles"))
    ids = [submit(service, (JUDGE_DATA / game / f"{name}.in").read_bytes(), game).id for game, name in files]
    with unchanged(module_settings):
        yield ids


@pytest.fixture(scope="module")
def cases(module_db: Database) -> CaseQueries:
    """Reads of the cases of the module's database (the one ``jobs`` are in)."""
    return CaseQueries(module_db)


@pytest.mark.slow
@pytest.mark.parametrize("sort", SORTS)
def test_every_sort_of_a_job_walks_its_cases_in_order(cases: Any, jobs: list[int], sort: str) -> None:
    flt = ResultFilter(job_id=jobs[0], game="accordion", sort=sort.lstrip("-"), descending=sort.startswith("-"),
                       per_page=457).checked()
    walked = _walk(cases, flt)
    assert len(walked) == 2000 and len({case.index for case in walked}) == 2000
    assert [_key(sort, c) for c in walked] == sorted((_key(sort, c) for c in walked), reverse=sort.startswith("-"))
    assert [c.index for c in _walk_back(cases, flt)] == [c.index for c in walked]
    first = cases.results(flt)
    assert first.prev is None and first.total == 2000 and first.total_exact and first.page == 1


@pytest.mark.slow
def test_a_page_spread_over_a_job_finds_each_case_in_its_own_chunk(cases: Any, jobs: list[int]) -> None:
    """A small page sorted by number spans the whole job: its cases' chunks are looked up one by one
    (``store.chunks.chunks_holding``), and they are the same cases, with the same inputs, as in file order."""
    by_index = {c.index: c for c in _walk(cases, ResultFilter(job_id=jobs[0], per_page=500).checked())}
    sparse = _walk(cases, ResultFilter(job_id=jobs[0], sort="number", per_page=4).checked())
    assert len(sparse) == 2000
    assert all(case == by_index[case.index] for case in sparse)


@pytest.mark.parametrize("sort", ["-solved_at", "number", "-outcome"])
def test_history_across_jobs_walks_every_case_once(cases: Any, jobs: list[int], sort: str) -> None:
    flt = ResultFilter(sort=sort.lstrip("-"), descending=sort.startswith("-"), per_page=500).checked()
    walked = _walk(cases, flt)
    assert len(walked) == len({c.id for c in walked}) == ALL
    assert [_key(sort, c) for c in walked] == sorted((_key(sort, c) for c in walked), reverse=sort.startswith("-"))
    assert [c.id for c in _walk_back(cases, flt)] == [c.id for c in walked]
    if sort == "-solved_at":  # newest job first
        assert walked[0].job_id == jobs[-1] and walked[-1].job_id == jobs[0]


def test_filters_count_from_the_job_rows(cases: Any, jobs: list[int]) -> None:
    everything = _walk(cases, ResultFilter(per_page=500).checked())
    for values in ({"outcome": "win"}, {"outcome": "loss", "number_min": 3, "number_max": 5},
                   {"game": "10-20-30"}, {"number_min": 80}, {"game": "accordion", "outcome": "draw"}):
        flt = ResultFilter(**values, per_page=50).checked()
        expected = [c for c in everything if all(
            (c.outcome == v) if k == "outcome" else (c.game == v) if k == "game"
            else (c.number is not None and c.number >= v) if k == "number_min" else (c.number is not None and c.number <= v)
            for k, v in values.items())]
        page = cases.results(flt)
        assert (page.total, page.total_exact) == (len(expected), True), values
        assert sorted(c.id for c in _walk(cases, flt)) == sorted(c.id for c in expected), values


def test_a_filter_by_time_is_counted_exactly_and_one_by_input_up_to_a_limit(cases: Any, jobs: list[int]) -> None:
    """The chunks stored within a filter's times are counted from their facets, exactly; the cases of one
    input are found one by one (through the chunks' filters), and counted up to ``COUNT_LIMIT``."""
    from datetime import timedelta

    from worker.jobs import results

    everything = _walk(cases, ResultFilter(per_page=500).checked())
    since = JobQueries(cases.db).job(jobs[0]).created_at - timedelta(minutes=1)
    page = cases.results(ResultFilter(since=since).checked())
    assert page.total == ALL and page.total_exact
    wins = cases.results(ResultFilter(since=since, outcome="win", number_min=2).checked())
    assert (wins.total, wins.total_exact) == (
        sum(c.outcome == "win" and c.number >= 2 for c in everything), True)
    first = everything[0]
    repeated = [c for c in everything if c.input == first.input and c.game == first.game]
    flt = ResultFilter(game=first.game, input_text=first.input).checked()
    page = cases.results(flt)
    assert (page.total, page.total_exact) == (len(repeated), True)
    assert sorted(c.id for c in _walk(cases, flt)) == sorted(c.id for c in repeated)
    original = results.COUNT_LIMIT
    results.COUNT_LIMIT = 0
    try:
        page = cases.results(flt)
    finally:
        results.COUNT_LIMIT = original
    assert (page.total, page.total_exact) == (0, False)


def test_page_numbers_reach_the_first_results_only(cases: Any, jobs: list[int]) -> None:
    flt = ResultFilter(job_id=jobs[0], per_page=100, page=3).checked()
    assert [c.index for c in cases.results(flt).items] == list(range(201, 301))
    with pytest.raises(Invalid, match="too deep"):
        ResultFilter(job_id=jobs[0], per_page=500, page=21).checked()


def test_a_cursor_that_is_not_one_is_refused(cases: Any, jobs: list[int]) -> None:
    for cursor in ("x", "1:", "-1:2", "9" * 30):
        with pytest.raises(Invalid, match="cursor"):
            cases.results(ResultFilter(after=cursor).checked())
    with pytest.raises(Invalid, match="gone"):
        cases.results(ResultFilter(after="999:1").checked())
