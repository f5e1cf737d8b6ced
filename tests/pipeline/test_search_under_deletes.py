"""The history search answers while jobs are deleted and purged under it: a job (and its chunks) gone
between two reads of one search, or of one export, is left out of the answer, never an error."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import pytest

from tests.support.inline import InlineDispatcher
from tests.support.jobs import submit
from tests.support.plugin import Rows, put_rows, rows_of
from worker import work
from worker.config import Settings
from worker.jobs import cases as job_cases
from worker.jobs import results
from worker.jobs.filters import ResultFilter
from worker.jobs.cases import CaseQueries
from worker.jobs.errors import Invalid
from worker.jobs.service import JobService
from worker.store import chunks as stored
from worker.store.database import Database
from worker.store.owners import EVERYTHING
from worker.testing.data import random_judge_file

JOBS = 4


#: The rows and the jobs' ids :func:`_jobs` made first on each kind of database, for the module's next tests.
_MADE: dict[str, tuple[Rows, list[int]]] = {}


def _jobs(db: Database, settings: Settings, tmp_path: Path) -> tuple[JobService, list[int]]:
    """``JOBS`` finished 10-20-30 jobs of several chunks each (different files: none copied), in the test's
    empty database: made by the first test on each kind of database, their rows put back for the others."""
    settings = dataclasses.replace(settings, chunk_size=40)
    service = JobService(db, settings, InlineDispatcher(db, settings))
    if db.dialect in _MADE:
        rows, ids = _MADE[db.dialect]
        put_rows(db, rows)
        return service, ids
    ids = [submit(service, random_judge_file(tmp_path / f"{seed}.in", "10-20-30", 150, seed).read_bytes(),
                  "10-20-30").id for seed in range(JOBS)]
    _MADE[db.dialect] = rows_of(db), ids
    return service, ids


@dataclass
class Deleter:
    """Deletes and purges the next job (newest first, the oldest kept) at each of the next ``armed`` reads
    of stored chunks a search or an export makes."""

    settings: Settings
    service: JobService
    ids: list[int]
    armed: int = 0
    deleted: list[int] = field(default_factory=list)

    def before(self, read: Callable[..., Any]) -> Callable[..., Any]:
        def reading(*args: Any, **kwargs: Any) -> Any:
            if self.armed and len(self.deleted) < len(self.ids) - 1:
                job_id = self.ids[-1 - len(self.deleted)]
                self.service.delete(job_id)
                work.purge(self.service.db, self.settings)
                self.deleted.append(job_id)
                self.armed -= 1
            return read(*args, **kwargs)
        return reading


def _deleting_between_reads(monkeypatch: pytest.MonkeyPatch, settings: Settings, service: JobService,
                            ids: list[int]) -> Deleter:
    deleter = Deleter(settings, service, ids)
    for module, names in ((stored, ("summaries", "facts", "may_hold")),
                          (job_cases, ("chunks_holding", "read_chunks", "stored_cases"))):
        for name in names:
            monkeypatch.setattr(module, name, deleter.before(getattr(module, name)))
    return deleter


@pytest.mark.parametrize("sort", ["index", "number", "outcome", "solve_us"])
def test_a_search_leaves_out_what_was_deleted_while_it_read(db: Database, settings: Settings, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch, sort: str) -> None:
    service, ids = _jobs(db, settings, tmp_path)
    queries = CaseQueries(db)
    flt = ResultFilter(game="10-20-30", per_page=50, sort=sort).checked()
    first = queries.results(flt)  # the facets of every job now cached: a later search reads from them
    assert first.total == JOBS * 150 and len(first.items) == 50

    # The job of the cursor's case is the one kept: a cursor whose case is gone is refused (at the end).
    kept = first.items[-1].job_id
    ids = [kept] + [job_id for job_id in ids if job_id != kept]
    deleter = _deleting_between_reads(monkeypatch, settings, service, ids)
    for asked in (flt, dataclasses.replace(flt, page=2), dataclasses.replace(flt, after=first.next)):
        gone, deleter.armed = set(deleter.deleted), 1
        page = queries.results(asked)  # on SQLite, a snapshot: a job deleted meanwhile may still show
        assert not deleter.armed, "a job was deleted while the search read"
        assert page.items and all(item.job_id not in gone for item in page.items)
    service.delete(kept)
    with pytest.raises(Invalid, match="the cursor's case is gone"):
        queries.results(dataclasses.replace(flt, after=first.next))
    assert queries.results(flt).items == []


def test_an_export_leaves_out_what_was_deleted_while_it_streamed(db: Database, settings: Settings, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    service, ids = _jobs(db, settings, tmp_path)
    queries = CaseQueries(db)
    deleter = _deleting_between_reads(monkeypatch, settings, service, ids)
    deleter.armed = JOBS - 1
    for sort in ("index", "number"):
        exported = [batch.job_id for batch in queries.iter_results(ResultFilter(game="10-20-30", sort=sort).checked())]
        assert ids[0] in exported
    assert len(deleter.deleted) == JOBS - 1


def test_searches_answer_while_jobs_are_deleted_and_purged_beside_them(db: Database, settings: Settings, tmp_path: Path) -> None:
    service, ids = _jobs(db, settings, tmp_path)
    queries = CaseQueries(db)
    failures: list[BaseException] = []
    answered = 0

    def delete_all() -> None:
        try:
            for job_id in reversed(ids):
                service.delete(job_id)
                work.purge(db, dataclasses.replace(settings, delete_batch_rows=1))
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            failures.append(error)

    deleting = threading.Thread(target=delete_all)
    deleting.start()
    while deleting.is_alive() or not answered:
        for sort in ("index", "number", "outcome", "solve_us"):
            queries.results(ResultFilter(game="10-20-30", per_page=500, sort=sort).checked())
            answered += 1
    deleting.join()
    assert not failures
    assert queries.results(ResultFilter(game="10-20-30", per_page=50).checked()).items == []


@pytest.mark.parametrize("sort", ["index", "number"])
def test_an_export_goes_on_past_the_job_of_its_last_page_deleted(db: Database, settings: Settings, tmp_path: Path,
                                                                  sort: str) -> None:
    service, _ = _jobs(db, settings, tmp_path)
    flt = ResultFilter(game="10-20-30", sort=sort).checked()
    everything = list(results.iter_rows(lambda: db.session(write=False), flt, EVERYTHING, page_rows=50))
    rows = results.iter_rows(lambda: db.session(write=False), flt, EVERYTHING, page_rows=50)
    first = list(islice(rows, 50))
    gone = first[-1][0]  # the job of the row the next page starts after
    service.delete(gone)
    work.purge(db, settings)
    rest = list(rows)
    assert first == everything[:50]
    assert rest == [row for row in everything[50:] if row[0] != gone]
